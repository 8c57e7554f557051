"""Beyond both papers (SPEC C.1): Horn problems answered without a chain of thought, by vanilla
and looped transformers, over seen and unseen symbols, at proof depths beyond training.

Runs (every one at two seeds, trained as one stacked model), all with frozen symbol rows and
same-symbol attention (the row handling the unseen-symbols work found; with learned rows no model
learned the task): a vanilla transformer; a deeper vanilla one with the looped model's layer count;
a looped model at fixed R and at dynamic R; as C2's control, the looped model with learned rows
under weight decay; and the looped model with each of the recipes' two changes beyond SPEC C.1
undone (causal reading; the answer as the only label). The claims C1–C3 were written before any of these runs.

A depth is *reached* at a read-out when accuracy is at least REACH_BAR there and at every shallower
depth (chance is 0.5: labels are balanced at every depth).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from symgen.analysis.plots import heatmap_figure, line_figure
from symgen.experiments.claims import Claim, Statement, verdict_of
from symgen.experiments.implicit_horn.claims import C1, C2, C3, STATEMENTS
from symgen.experiments.types import Experiment, Section, Table
from symgen.measures.metrics import rank_correlation
from symgen.tasks.horn import SCENARIOS
from symgen.training.run_dir import read_summary, seed_dir

SEEDS = (0, 1)
REACH_BAR = 0.75
CHANCE_BAR = 0.6  # "at chance": balanced labels, 0.5 expected
LOOPED_RUN, VANILLA_RUN, LEARNED_RUN = (
    "implicit-looped-frozen-ss",
    "implicit-vanilla-frozen-ss",
    "implicit-looped",
)
LOOPED = (
    LOOPED_RUN,
    "implicit-dynamic-frozen-ss",
    LEARNED_RUN,
    "implicit-looped-frozen-ss-causal",
    "implicit-looped-frozen-ss-answer-only",
)
HEATMAPS = (LOOPED_RUN, "implicit-dynamic-frozen-ss")


class ImplicitHornExperiment(Experiment):
    name = "implicit-horn"
    title = "Beyond both papers: Horn problems without a chain of thought, looped and vanilla"

    statements = STATEMENTS

    def analyze(self, suite: str, run_dirs: dict[str, Path], figure_dir: Path) -> Section:
        runs = {
            name: {s: load(seed_run) for s, seed_run in seed_dirs(d).items()} for name, d in run_dirs.items()
        }
        trained = next(iter(next(iter(runs.values())).values()))["trained_depth"]
        rows = [table_row(name, seed, r) for name, by_seed in runs.items() for seed, r in by_seed.items()]
        table = Table(
            ["run", "seed", "R", "parameters", "steps", "seconds"]
            + [f"{s}: depths 1–{trained} / beyond" for s in SCENARIOS]
            + ["reached at R (all_seen)", "reached at best r (r)", "unseen-row cosine"],
            rows,
            f"Answer accuracy (chance 0.5) averaged over trained depths 1–{trained} and over deeper, never "
            f"trained depths, at the run's own R; 'reached': the deepest depth whose accuracy and every "
            f"shallower depth's is ≥ {REACH_BAR}.",
        )
        figures = heatmaps(runs, figure_dir) + [
            halting_figure(runs, figure_dir),
            depth_figure(runs, figure_dir),
        ]
        text = (
            "The Horn problems of paper A with the chain of thought removed: the model reads the rules, "
            "facts and query and answers True or False at once; whatever reasoning there is happens in "
            "its forward pass. The recipes change two things beyond SPEC C.1: training also labels every "
            "rule's head token with whether its atom is entailed (with one answer bit per problem no probe "
            "left chance), and the model reads the prompt bidirectionally, so a rule's head sees the rules "
            "listed after it (under causal attention a head cannot see the rules that prove its body when "
            "they come later). The runs ending in -causal and -answer-only undo one change each. "
            f"Training uses proof depths 1–{trained}; every test scenario holds depths up to "
            f"{2 * trained}, balanced per depth and label, with training's number of distractor rules. "
            "Looped models (2 zero-init blocks looped R "
            "times, input re-added before every iteration) are read at every iteration count of their "
            "grid and under adaptive halting (KL < 0.001 and entropy < 3.0); the vanilla model has the "
            "same parameters applied once, the deep one the looped model's layer count. Frozen rows + β: "
            "symbol rows fixed at their random initialization and the same-symbol attention term "
            "(model.identity_bias = 3, read on the symbols' rows only). Two seeds per run, trained as one "
            "stacked model."
        )
        claims = [claim_c1(runs, trained), claim_c2(runs, trained), claim_c3(runs)]
        return Section(self.title, [text], figures, [table], claims)


# ------------------------------------------------------------------------------------------ reading
def seed_dirs(run_dir: Path) -> dict[int, Path]:
    """A stacked spec's seeds (the list its seeds.json keeps), or the run itself as seed 0."""
    listing = run_dir / "seeds.json"
    if not listing.exists():
        return {0: run_dir}
    return {s: seed_dir(run_dir, s) for s in json.loads(listing.read_text())["seeds"]}


def load(run_dir: Path) -> dict[str, Any]:
    summary = read_summary(run_dir)
    config = yaml.safe_load((run_dir / "config.yaml").read_text())
    task, model, train = config["task"], config["model"], config["train"]
    trained = task["max_depth"]
    grid = sorted(set(task.get("eval_loops") or []) | {model["n_loops"]})
    return {
        "dir": run_dir,
        "summary": summary,
        "final": {k.removeprefix("eval/"): v for k, v in summary["final"].items()},
        "trained_depth": trained,
        "test_depth": task.get("test_max_depth") or 2 * trained,
        "own_r": model["n_loops"],
        "grid": grid,
        "r_label": "dynamic" if train.get("loops") == "poisson" else str(model["n_loops"]),
    }


def per_depth(run: dict, scenario: str, metric: str) -> dict[int, float]:
    """`{scenario}/depth{d}/{metric}` of the run's final evaluation, for every depth it holds."""
    return {
        d: run["final"][key]
        for d in range(1, run["test_depth"] + 1)
        if (key := f"{scenario}/depth{d}/{metric}") in run["final"]
    }


def accuracy(run: dict, scenario: str, r: int | None = None) -> dict[int, float]:
    """Accuracy per depth at iteration count r (None: the run's own R)."""
    return per_depth(run, scenario, "accuracy" if r is None or r == run["own_r"] else f"accuracy@r{r}")


def reached(by_depth: dict[int, float]) -> int:
    depth = 0
    for d in sorted(by_depth):
        if by_depth[d] < REACH_BAR:
            break
        depth = d
    return depth


def best_reach(run: dict, scenario: str = "all_seen") -> tuple[int, int]:
    """The deepest depth reached at any iteration count of the grid, and the fewest r reaching it."""
    best = max((reached(accuracy(run, scenario, r)), -r) for r in run["grid"])
    return best[0], -best[1]


def halting_iterations(run: dict, scenario: str = "all_seen") -> dict[int, float]:
    return per_depth(run, scenario, "halting/iterations")


def mean_over(by_depth: dict[int, float], depths: range) -> float:
    values = [by_depth[d] for d in depths if d in by_depth]
    return float(np.mean(values)) if values else float("nan")


def table_row(name: str, seed: int, run: dict) -> list[object]:
    s, D = run["summary"], run["trained_depth"]
    cells: list[object] = [name, seed, run["r_label"], s["parameters"], s["steps"], round(s["train_seconds"])]
    for scenario in SCENARIOS:
        acc = accuracy(run, scenario)
        inside = mean_over(acc, range(1, D + 1))
        beyond = mean_over(acc, range(D + 1, run["test_depth"] + 1))
        cells.append(f"{inside:.2f} / {beyond:.2f}")
    depth, r = best_reach(run)
    cells += [
        reached(accuracy(run, "all_seen")),
        f"{depth} ({r})",
        round(run["final"].get("collapse/unseen_in_mean_cos", float("nan")), 3),
    ]
    return cells


# ------------------------------------------------------------------------------------------ figures
def heatmaps(runs: dict[str, dict[int, dict]], figure_dir: Path) -> list[Path]:
    out = []
    for name in HEATMAPS:
        if name not in runs:
            continue
        seed, run = next(iter(runs[name].items()))
        depths = list(range(1, run["test_depth"] + 1))
        for scenario in ("all_seen", "all_unseen"):
            grid = [[accuracy(run, scenario, r).get(d, float("nan")) for r in run["grid"]] for d in depths]
            marks = {f"trained depths ≤ {run['trained_depth']}": ("h", run["trained_depth"] - 0.5)}
            if run["own_r"] in run["grid"] and run["r_label"] != "dynamic":
                marks[f"training R = {run['own_r']}"] = ("v", run["grid"].index(run["own_r"]))
            out.append(
                heatmap_figure(
                    figure_dir / f"{name}_{scenario}.png",
                    grid,
                    [str(d) for d in depths],
                    [str(r) for r in run["grid"]],
                    "inference iterations r",
                    "proof depth",
                    f"{name} (seed {seed}), {scenario}: accuracy",
                    marks,
                )
            )
    return out


def halting_figure(runs: dict[str, dict[int, dict]], figure_dir: Path) -> Path:
    series = {}
    for name in LOOPED:
        for seed, run in runs.get(name, {}).items():
            iters = halting_iterations(run)
            if iters:
                series[f"{name} seed {seed}"] = (list(iters), list(iters.values()))
    return line_figure(
        figure_dir / "implicit_halting.png",
        series or {"no halting data": ([1], [0])},
        "proof depth",
        "mean iterations used under halting",
        "Adaptive halting (KL + entropy), all_seen",
    )


def depth_figure(runs: dict[str, dict[int, dict]], figure_dir: Path) -> Path:
    """Each run's first seed (the table holds every seed): at its R, and looped ones at their best r."""
    series = {}
    for name, by_seed in runs.items():
        seed, run = next(iter(by_seed.items()))
        acc = accuracy(run, "all_seen")
        series[f"{name} s{seed} (R)"] = (list(acc), list(acc.values()))
        if name in LOOPED:
            depth, r = best_reach(run)
            best = accuracy(run, "all_seen", r)
            series[f"{name} s{seed} (r = {r})"] = (list(best), list(best.values()))
    return line_figure(
        figure_dir / "implicit_depth.png",
        series,
        "proof depth",
        "answer accuracy (all_seen)",
        "Accuracy per proof depth: at the training R, and at the best inference r",
        ylim=(0, 1.02),
    )


# ------------------------------------------------------------------------------------------ claims
def claim_c1(runs: dict[str, dict[int, dict]], D: int) -> Claim:
    passed, parts, values = {}, [], {}
    for seed in SEEDS:
        looped, vanilla = runs.get(LOOPED_RUN, {}).get(seed), runs.get(VANILLA_RUN, {}).get(seed)
        if looped is None or vanilla is None:
            continue
        at_r = reached(accuracy(looped, "all_seen"))
        best, r = best_reach(looped)
        plain = reached(accuracy(vanilla, "all_seen"))
        deeper = best > max(D, at_r)
        passed[f"seed {seed}"] = deeper and plain <= D
        values[str(seed)] = {"looped_at_R": at_r, "looped_best": best, "best_r": r, "vanilla": plain}
        parts.append(
            f"seed {seed}: looped reaches {at_r} at R = {looped['own_r']}, {best} at r = {r} "
            f"({'deeper than trained' if deeper else 'not deeper than trained and than at R'}); "
            f"vanilla reaches {plain}"
        )
    verdict, note = verdict_of(passed)
    if passed and all(v["looped_best"] == 0 for v in values.values()):
        verdict, note = "not judged", f"the looped model never reached depth 1 (≥ {REACH_BAR}) at any r"
    return _claim(C1, verdict, note, parts, runs, values | {"trained_depth": D})


def claim_c2(runs: dict[str, dict[int, dict]], D: int) -> Claim:
    passed, parts, values, unlearned, control_unlearned = {}, [], {}, [], []
    for seed in SEEDS:
        frozen, learned = runs.get(LOOPED_RUN, {}).get(seed), runs.get(LEARNED_RUN, {}).get(seed)
        if frozen is None or learned is None:
            continue
        seen, unseen = accuracy(frozen, "all_seen"), accuracy(frozen, "all_unseen")
        gaps = [round(seen[d] - unseen[d], 3) for d in range(1, D + 1) if d in seen and d in unseen]
        close = bool(gaps) and all(abs(g) <= 0.10 for g in gaps)
        learned_by_depth = accuracy(learned, "all_seen")
        learned_unseen = [accuracy(learned, "all_unseen").get(d, 1.0) for d in range(1, D + 1)]
        learned_seen = [learned_by_depth.get(d, 1.0) for d in range(1, D + 1)]
        at_chance = all(a <= CHANCE_BAR for a in learned_unseen)
        if mean_over(seen, range(1, D + 1)) < REACH_BAR:
            unlearned.append(seed)
        if mean_over(learned_by_depth, range(1, D + 1)) < REACH_BAR:
            control_unlearned.append(seed)
        passed[f"seed {seed}"] = close and at_chance
        values[str(seed)] = {
            "gaps_seen_minus_unseen": gaps,
            "learned_rows_all_unseen": learned_unseen,
            "learned_rows_all_seen": learned_seen,
        }
        parts.append(
            f"seed {seed}: frozen + β all_seen − all_unseen per trained depth {gaps}; "
            f"learned rows all_unseen {[round(a, 2) for a in learned_unseen]} "
            f"(all_seen {[round(a, 2) for a in learned_seen]})"
        )
    verdict, note = verdict_of(passed)
    if unlearned and len(unlearned) == len(passed):
        verdict, note = (
            "not judged",
            f"frozen + β did not learn the seen task (mean < {REACH_BAR}) in any seed",
        )
    elif passed and len(control_unlearned) == len(passed):
        parts.append(
            "learned rows did not learn the seen task either: their all_unseen chance is not collapse alone"
        )
    return _claim(C2, verdict, note, parts, runs, values)


def claim_c3(runs: dict[str, dict[int, dict]]) -> Claim:
    """Judged on the looped runs that learned depth 1: halting on a model at chance says nothing."""
    passed, parts, values, unjudged = {}, [], {}, []
    for name in (LOOPED_RUN, "implicit-dynamic-frozen-ss"):
        for seed, run in runs.get(name, {}).items():
            iters = halting_iterations(run)
            values[f"{name}/{seed}"] = {"iterations_by_depth": iters, "judged": False}
            if len(iters) < 2 or best_reach(run)[0] == 0:
                unjudged.append(f"{name} seed {seed}")
                continue
            depths = list(iters)
            rho = rank_correlation(depths, list(iters.values()))
            grows = rho > 0.5 and iters[depths[-1]] > iters[depths[0]]
            passed[f"{name} seed {seed}"] = grows
            values[f"{name}/{seed}"] |= {"judged": True, "rank_correlation": round(rho, 3)}
            parts.append(
                f"{name} seed {seed}: iterations {' '.join(f'{v:.1f}' for v in iters.values())} "
                f"over depths {depths[0]}–{depths[-1]} (rank correlation {rho:.2f})"
            )
    verdict, note = verdict_of(passed)
    if unjudged:
        parts.append(f"not judged (never reached depth 1 at any r): {', '.join(unjudged)}")
        if not passed:
            verdict = "not judged"
    return _claim(C3, verdict, note, parts, runs, values)


def _claim(
    statement: Statement, verdict: str, note: str, parts: list[str], runs: dict, values: dict
) -> Claim:
    measured = "; ".join(parts) + (f" — {note}" if note else "")
    evidence = [str(r["dir"]) for by_seed in runs.values() for r in by_seed.values()]
    return statement.judged(measured, verdict, evidence, values)
