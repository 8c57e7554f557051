"""A sweep of chain-of-thought Horn runs, one row each: what the run changed against its recipe, when
its rule choice left the plateau, where it ended, and whether its own heads match a symbol to its
earlier occurrences.

A run stopped before its budget (its curve had answered the question) is read at its last
evaluation and says so. The matching share is read from the run's last weights (final, else its last
checkpoint) with any same-symbol scaffold switched off: what the model's own heads do.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from symgen import config as config_mod
from symgen.measures.metrics import first_crossing, read_metrics
from symgen.training import checkpoint as ckpt
from symgen.training.build import load_run
from symgen.training.run_dir import config_differences, read_summary

RULE = "eval/all_seen/token_accuracy/rule"
PLATEAU_EXIT = 0.5  # rule choice above this has left the plateau (chance is one over 4-5 rules)


def changes(run_dir: Path) -> dict[str, Any]:
    """The settings in which a run's resolved config differs from its recipe's (seed aside), with the
    run's values."""
    path = Path(run_dir) / "config.yaml"
    cfg = config_mod.resolve(path)
    base = config_mod.resolve(cfg.name, [f"seed={cfg.seed}"])
    values = cfg.to_dict()

    def value(dotted: str) -> Any:
        node = values
        for key in dotted.split("."):
            node = node[key]
        return node

    return {key: value(key) for key in config_differences(base, path)}


def _last_weights(run_dir: Path) -> str | int | None:
    if (run_dir / "final.safetensors").exists():
        return "final"
    steps = ckpt.list_checkpoints(run_dir / "checkpoints")
    return steps[-1] if steps else None


@torch.no_grad()
def own_matching(run_dir: Path) -> dict[str, float]:
    """`match/*` of the run's last weights on all_seen, the same-symbol term's weight set to 0 when the
    run faded it as a scaffold (a run whose term is part of its architecture is read as it is)."""
    weights = _last_weights(run_dir)
    if weights is None:
        return {}
    cfg, task, model = load_run(run_dir, weights)
    model.eval()
    own: dict[str, Any] = {"weights": weights}
    if cfg.model.identity_bias_fade:
        own["scaffold_weight"] = float(model.same_symbol_weight)
        model.same_symbol_weight.fill_(0.0)
        # what the model's own heads decide with the term switched off: the paper's architecture
        accuracy = task.token_accuracy(model, task.test["all_seen"], torch.device("cpu"))
        own["rule_choice_without_scaffold"] = accuracy["token_accuracy/rule"]
    return own | task.matching(model, task.test["all_seen"], torch.device("cpu"))


def sweep_row(run_dir: Path) -> dict[str, Any]:
    run_dir = Path(run_dir)
    cfg = config_mod.resolve(run_dir / "config.yaml")
    records = read_metrics(run_dir)
    evals = [r for r in records if RULE in r]
    last = evals[-1] if evals else {}
    finished = (run_dir / "summary.json").exists()
    return {
        "run": run_dir.name,
        "recipe": cfg.name,
        "seed": cfg.seed,
        "changes": changes(run_dir),
        "budget": cfg.train.steps,
        "steps": read_summary(run_dir)["steps"] if finished else last.get("step", 0),
        "stopped_early": not finished,
        "plateau_exit_step": first_crossing(records, RULE, PLATEAU_EXIT),
        "rule_choice_last": last.get(RULE, float("nan")),
        "all_seen_exact_last": last.get("eval/all_seen/exact_match", float("nan")),
        "all_unseen_exact_last": last.get("eval/all_unseen/exact_match", float("nan")),
        "rule_choice_best": max((r[RULE] for r in evals), default=float("nan")),
        # a scaffold still on at the last evaluation: its numbers are not the paper's architecture's
        "scaffold_weight_last": cfg.model.same_symbol_weight_at(last["step"])
        if cfg.model.identity_bias_fade and last
        else None,
        "own_matching": own_matching(run_dir),
    }


def markdown(rows: list[dict[str, Any]]) -> str:
    """The sweep as a table: run, changes, seed, steps (of budget), plateau exit, the scaffold's weight
    at the last evaluation, end values, matching."""
    head = (
        "| run | recipe | changes against today's recipe | seed | steps | rule choice > 0.5 at | scaffold "
        "weight at the last evaluation | rule choice last (best) | all_seen | all_unseen | own heads' share "
        "on earlier copies (uniform), at weights | rule choice there, scaffold off |\n" + "|---" * 12 + "|\n"
    )
    lines = []
    for r in rows:
        changed = ", ".join(f"{k}={v}" for k, v in r["changes"].items()) or "none (the recipe)"
        steps = f"{r['steps']} of {r['budget']}" + (" (stopped)" if r["stopped_early"] else "")
        exit_step = r["plateau_exit_step"] if r["plateau_exit_step"] is not None else "never"
        m = r["own_matching"]
        match = (
            f"{m['match/best']:.2f} ({m['match/uniform']:.2f}), {m['weights']}" if "match/best" in m else "—"
        )
        scaffold = "—" if r["scaffold_weight_last"] is None else f"{r['scaffold_weight_last']:.2f}"
        off = m.get("rule_choice_without_scaffold")
        off_text = "—" if off is None else f"{off:.2f} (weight {m['scaffold_weight']:.2f} switched off)"
        lines.append(
            f"| {r['run']} | {r['recipe']} | {changed} | {r['seed']} | {steps} | {exit_step} | {scaffold} | "
            f"{r['rule_choice_last']:.2f} ({r['rule_choice_best']:.2f}) | {r['all_seen_exact_last']:.3f} | "
            f"{r['all_unseen_exact_last']:.3f} | {match} | {off_text} |"
        )
    return head + "\n".join(lines) + "\n"
