"""The looped-model analyses of a knowledge-graph run directory: JSON and a figure each, written
under RUN_DIR/analysis/. `symgen analyze ...` and the reproduction suites both call these.

A run without the weights an analysis reads (a results book keeps no weights) is read from the JSON
that analysis wrote when they were there, with the same settings, and its figure is drawn anew from
it: so a committed part re-derives from committed files (`symgen report --check`)."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import torch

from symgen.analysis.looped import (
    Queries,
    accuracy_by_iteration,
    answer_log_probs,
    halting_report,
    lens_decodability,
    margins,
)
from symgen.analysis.plots import WIDTH, line_figure, save
from symgen.config import ExperimentConfig
from symgen.errors import UserError
from symgen.models.recurrence import KL_EPS, HaltingRule, fixed, kl_entropy, kl_only
from symgen.tasks.kg_task import KGTask
from symgen.training import checkpoint as ckpt
from symgen.training.build import load_run
from symgen.training.checkpoint import load_weights
from symgen.training.run_dir import read_summary

CPU = torch.device("cpu")


def _load(run_dir: Path, weights: str = "final", need_loops: bool = True, max_iters: int = 1):
    if max_iters < 1:
        raise UserError(f"--max-iters {max_iters}: at least one iteration is needed")
    cfg, task, model = load_run(run_dir, weights)
    if not isinstance(task, KGTask):
        raise UserError(
            f"{run_dir} trained task {cfg.task.name!r}; these analyses need a knowledge-graph run"
        )
    if need_loops and cfg.model.n_loops == 1 and cfg.train.loops == "fixed":
        raise UserError(f"{run_dir} is not a looped model (model.n_loops = 1): nothing to iterate")
    return cfg, task, model


def training_r(cfg: ExperimentConfig) -> int:
    """The R a run trained with; a dynamic run (R drawn per batch): the largest of its range."""
    return cfg.train.loops_max if cfg.train.loops == "poisson" else cfg.model.n_loops


def query_groups(task: KGTask) -> dict[str, Queries]:
    """Held-out queries by group: `hop_k` (depth setting) or `id` / `ood` (systematic)."""
    names = [n for n in task.tests if n.startswith("hop_")] or [n for n in ("id", "ood") if n in task.tests]
    rows = {n: task.tests[n] for n in names if len(task.tests[n])}
    return {n: Queries(r.tokens, r.lengths, r.answers) for n, r in rows.items()}


def _recorded(run_dir: Path, name: str, settings: dict, weights: bool) -> dict | None:
    """What the analysis `name` wrote of this run, where the run lacks the weights to compute it anew
    (`weights`: whether they are there) and the file was written with these settings from the weights
    its summary names (the step `_write` kept); None where there is nothing to read. Written with other
    settings, it is refused in one line: those need the weights."""
    path = Path(run_dir) / "analysis" / f"{name}.json"
    summary = Path(run_dir) / "summary.json"
    if weights or not path.is_file() or not summary.is_file():
        return None
    result = json.loads(path.read_text())
    if result.get("weights_step") != read_summary(run_dir).get("steps"):
        return None  # written from other weights (a run since extended): nothing recorded for these
    differ = {k: result.get(k) for k, v in settings.items() if result.get(k) != v}
    if differ:
        shown = ", ".join(f"{k}={v}" for k, v in differ.items())
        raise UserError(f"{path} was written with {shown}; other settings need the run's weights")
    return result


def _has_final(run_dir: Path) -> bool:
    return (Path(run_dir) / "final.safetensors").exists()


def _write(run_dir: Path, name: str, result: dict) -> dict:
    """RUN/analysis/NAME.json: the result with the step of the weights it read (its run's summary),
    so that `_recorded` reads it back only for those weights; returns what was written."""
    out = Path(run_dir) / "analysis"
    out.mkdir(parents=True, exist_ok=True)
    result = result | {"weights_step": read_summary(run_dir).get("steps")}
    (out / f"{name}.json").write_text(json.dumps(result, indent=1) + "\n")
    return result


def _hop(name: str) -> int | None:
    return int(name.split("_")[1]) if name.startswith("hop_") else None


DEPTH_BAR = 0.6  # a hop count is reached when its held-out accuracy is at least this (SPEC's ratio)
SPLIT = "validation: even-indexed held-out chains of each group; test: odd-indexed"


def halves(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the validation half (even-indexed chains) and the test half (odd-indexed)."""
    return np.arange(0, n, 2), np.arange(1, n, 2)


def depth_at(acc: dict[str, list[float]], r: int, bar: float = DEPTH_BAR) -> int | None:
    """The deepest hop count whose accuracy at r iterations (acc[group][r - 1]) reaches `bar`."""
    return max((_hop(n) for n, a in acc.items() if _hop(n) is not None and a[r - 1] >= bar), default=None)


def choose_r(acc: dict[str, list[float]], rs: list[int], bar: float = DEPTH_BAR) -> int | None:
    """The r among `rs` with the deepest depth on `acc` (read it on validation chains only), ties to
    the higher mean accuracy over the groups, then to the smaller r."""
    best, key = None, None
    for r in rs:
        mean = sum(a[r - 1] for a in acc.values()) / max(len(acc), 1)
        candidate = (depth_at(acc, r, bar) or 0, mean)
        if key is None or candidate > key:
            best, key = r, candidate
    return best


def _baseline_rs(cfg: ExperimentConfig) -> list[int]:
    """The iteration counts a run trained at: its R, or every R of a dynamic run's range."""
    if cfg.train.loops == "poisson":
        return list(range(cfg.train.loops_min, cfg.train.loops_max + 1))
    return [cfg.model.n_loops]


def iterations(run_dir: Path, max_iters: int = 20) -> dict:
    """Accuracy per group against inference iterations r = 1..max_iters, on every held-out chain (the
    heatmap, with the training R and the learnable depth marked) and on two halves: r is chosen on
    the validation half and depth (the deepest hop with accuracy >= DEPTH_BAR) read on the test half,
    so no test chain decides which r counts."""
    if (
        result := _recorded(run_dir, "iterations", _iteration_settings(max_iters), _has_final(run_dir))
    ) is not None:
        return result | {"figure": str(_heatmap(run_dir, result, result["dynamic"]))}
    cfg, task, model = _load(run_dir, max_iters=max_iters)
    groups = query_groups(task)
    log_probs = {n: answer_log_probs(model, q, max_iters, CPU) for n, q in groups.items()}
    acc, validation, test = {}, {}, {}
    for n, lp in log_probs.items():
        answers = groups[n].answers
        val, tst = halves(len(answers))
        acc[n] = accuracy_by_iteration(lp, answers)
        validation[n] = accuracy_by_iteration(lp[:, val], answers[val])
        test[n] = accuracy_by_iteration(lp[:, tst], answers[tst])
    summary = read_summary(run_dir)
    train_r = training_r(cfg)
    dynamic = cfg.train.loops == "poisson"
    label = (
        f"dynamic (clip(Poisson({cfg.train.loops_lambda:g}), {cfg.train.loops_min}, {cfg.train.loops_max}))"
        if dynamic
        else str(train_r)
    )
    baseline_r = choose_r(validation, [r for r in _baseline_rs(cfg) if r <= max_iters])
    chosen_r = choose_r(validation, list(range(1, max_iters + 1)))
    result = {
        "max_iters": max_iters,
        "dynamic": dynamic,
        "train_loops": label,
        "train_r_read": train_r,
        "learnable_depth": summary.get("learnable_depth"),
        "curriculum_stage": summary.get("curriculum_stage"),
        "depth_bar": DEPTH_BAR,
        "split": SPLIT,
        "accuracy": acc,
        "validation": validation,
        "test": test,
        # fixed R: the training R; dynamic: the best r of its training range on the validation half
        "baseline_r": baseline_r,
        "depth_baseline": None if baseline_r is None else depth_at(test, baseline_r),
        "chosen_r": chosen_r,
        "depth_chosen_r": depth_at(test, chosen_r),
        "depth_chosen_r_validation": depth_at(validation, chosen_r),
        # a diagnostic, never evidence: each hop at the r that suits it best on the test half
        "depth_oracle_r": max(
            [_hop(n) for n, a in test.items() if _hop(n) is not None and max(a) >= DEPTH_BAR], default=None
        ),
    }
    result["figure"] = str(_heatmap(run_dir, result, dynamic))
    return _write(run_dir, "iterations", result)


def _iteration_settings(max_iters: int) -> dict:
    """What an iteration table was read with: a table recorded under another bar or split is stale."""
    return {"max_iters": max_iters, "depth_bar": DEPTH_BAR, "split": SPLIT}


def _heatmap(run_dir: Path, result: dict, dynamic: bool) -> Path:
    acc, max_iters, train_r = result["accuracy"], result["max_iters"], result["train_r_read"]
    fig, ax = plt.subplots(figsize=(WIDTH, 0.4 * len(acc) + 2.4), layout="constrained")
    grid = np.array(list(acc.values()))
    im = ax.imshow(
        grid,
        aspect="auto",
        vmin=0,
        vmax=1,
        cmap="viridis",
        origin="lower",
        extent=(0.5, max_iters + 0.5, -0.5, len(acc) - 0.5),
    )
    ax.set_yticks(range(len(acc)), list(acc))
    marker = f"training R = {train_r}" if not dynamic else f"largest training R = {train_r} (dynamic)"
    ax.axvline(train_r, color="white", ls="--", lw=1.2, label=marker)
    if result["chosen_r"] is not None and result["chosen_r"] != train_r:
        ax.axvline(
            result["chosen_r"], color="orange", ls=":", lw=1.5, label=f"r = {result['chosen_r']} (validation)"
        )
    depth = result["learnable_depth"]
    if depth and f"hop_{depth}" in acc:
        ax.axhline(
            list(acc).index(f"hop_{depth}") + 0.5, color="red", lw=1.2, label=f"learnable depth = {depth}"
        )
    ax.set_xlabel("inference iterations r")
    fig.colorbar(im, ax=ax, label="accuracy (every held-out chain)")
    # below the grid, off its cells; a grey face shows the white line
    fig.legend(loc="outside lower center", fontsize=8, ncol=3, facecolor="#bbbbbb", framealpha=1)
    ax.set_title(f"Accuracy against iterations: {Path(run_dir).name}")
    return save(fig, Path(run_dir) / "analysis" / "iterations.png")


def margin_curves(run_dir: Path, max_iters: int = 50) -> dict:
    """Mean logit margin per iteration and group; peak iteration and t*."""
    if (result := _recorded(run_dir, "margins", {"max_iters": max_iters}, _has_final(run_dir))) is not None:
        return result | {"figure": str(_margin_figure(run_dir, result))}
    _, task, model = _load(run_dir, max_iters=max_iters)
    per_group = {
        n: margins(answer_log_probs(model, q, max_iters, CPU), q.answers)
        for n, q in query_groups(task).items()
    }
    result = {"max_iters": max_iters, "groups": per_group}
    result["figure"] = str(_margin_figure(run_dir, result))
    return _write(run_dir, "margins", result)


def _margin_figure(run_dir: Path, result: dict) -> Path:
    steps = list(range(1, result["max_iters"] + 1))
    return line_figure(
        Path(run_dir) / "analysis" / "margins.png",
        {n: (steps, m["margin"]) for n, m in result["groups"].items()},
        "iteration",
        "mean logit margin (target − best other)",
        f"Overthinking: {Path(run_dir).name}",
    )


def halting(run_dir: Path, kl_eps: float = KL_EPS, entropy_max: float = 3.0, max_iters: int = 16) -> dict:
    """Adaptive halting (KL + entropy), KL-only and every fixed r, per group and over all."""
    rules: list[HaltingRule] = [kl_entropy(kl_eps, entropy_max), kl_only(kl_eps)]  # bad thresholds: refused
    name = "halting" if kl_eps == KL_EPS else f"halting-eps{kl_eps:g}"  # one file per threshold
    settings = {"kl_eps": kl_eps, "entropy_max": entropy_max, "max_iters": max_iters}
    if (result := _recorded(run_dir, name, settings, _has_final(run_dir))) is not None:
        return result | {"figure": str(_halting_figure(run_dir, result, name))}
    _, task, model = _load(run_dir, max_iters=max_iters)  # before the model is loaded
    rules += [fixed(r) for r in range(1, max_iters + 1)]
    groups = query_groups(task)
    log_probs = {n: answer_log_probs(model, q, max_iters, CPU) for n, q in groups.items()}
    per_group = {n: halting_report(lp, groups[n].answers, rules) for n, lp in log_probs.items()}
    all_lp = torch.cat(list(log_probs.values()), dim=1)
    overall = halting_report(all_lp, np.concatenate([q.answers for q in groups.values()]), rules)
    result = {
        "kl_eps": kl_eps,
        "entropy_max": entropy_max,
        "max_iters": max_iters,
        "overall": overall,
        "groups": per_group,
    }
    result["figure"] = str(_halting_figure(run_dir, result, name))
    return _write(run_dir, name, result)


def _halting_figure(run_dir: Path, result: dict, name: str) -> Path:
    overall = result["overall"]
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    fixed_rows = overall[2:]
    ax.plot(
        [r["mean_iterations"] for r in fixed_rows], [r["accuracy"] for r in fixed_rows], "o-", label="fixed r"
    )
    # KL-only as a large hollow square under a smaller filled star: both stay visible when they coincide
    for row, style in zip(
        overall[1::-1],
        ({"marker": "s", "ms": 15, "mfc": "none", "mew": 2}, {"marker": "*", "ms": 11}),
        strict=True,
    ):
        ax.plot(row["mean_iterations"], row["accuracy"], ls="none", label=row["rule"], **style)
    ax.set_xlabel("mean iterations used")
    ax.set_ylabel("accuracy")
    ax.set_title(f"Adaptive halting: {Path(run_dir).name}")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return save(fig, Path(run_dir) / "analysis" / f"{name}.png")


def _bridges(task: KGTask, q: Queries) -> np.ndarray:
    """The entity after the first hop of each query, by walking the atomic facts."""
    walk = {
        (int(h), int(r)): int(t)
        for (h, r), t in zip(task.atomic.tokens[:, :2], task.atomic.answers, strict=True)
    }
    return np.array([walk[(int(h), int(r))] for h, r in q.tokens[:, :2]])


def lens(run_dir: Path, n: int = 500) -> dict:
    """Logit lens on every kept checkpoint and the final weights: top-1 rate of the bridge entity at
    the r1 position and of the target at the r2 position, after every layer of every iteration."""
    steps = ckpt.list_checkpoints(Path(run_dir) / "checkpoints")
    if (result := _recorded(run_dir, "lens", {"n": n}, bool(steps) or _has_final(run_dir))) is not None:
        return result | {"figure": str(_lens_figure(run_dir, result))}
    cfg, task, model = _load(run_dir, need_loops=False)
    if cfg.task.setting != "systematic":
        raise UserError(f"{run_dir}: the logit lens reads 2-hop queries of a systematic-setting run")
    sets = {name: task.tests[name] for name in ("train", "id", "ood")}
    two_hop = {k: r.take(np.flatnonzero(r.lengths == 3)[:n]) for k, r in sets.items()}
    if not steps and not _has_final(run_dir):
        raise UserError(f"{run_dir} has no checkpoints and no final weights to read")
    result = {"n": n, "checkpoints": {}}
    for weights in [*map(str, steps), "final"]:
        load_weights(model, run_dir, weights)
        per_set = {}
        for name, rows in two_hop.items():
            if not len(rows):
                continue
            q = Queries(rows.tokens, rows.lengths, rows.answers)
            probes = {"bridge_at_r1": (1, _bridges(task, q)), "target_at_r2": (2, q.answers)}
            per_set[name] = lens_decodability(model, q, probes, cfg.model.n_loops, CPU)
        result["checkpoints"][weights] = per_set
    result["figure"] = str(_lens_figure(run_dir, result))
    return _write(run_dir, "lens", result)


def _lens_figure(run_dir: Path, result: dict) -> Path:
    final = result["checkpoints"]["final"]
    series = {}
    for name, probes in final.items():
        for probe, grid in probes.items():
            flat = [v for layers in grid for v in layers]
            series[f"{name}: {probe}"] = (list(range(1, len(flat) + 1)), flat)
    return line_figure(
        Path(run_dir) / "analysis" / "lens.png",
        series,
        "layer (all iterations, in order)",
        "top-1 decodability",
        f"Logit lens (final weights): {Path(run_dir).name}",
        ylim=(0, 1.02),
    )
