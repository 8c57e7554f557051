"""Beyond both papers (SPEC C.1): Horn problems answered without a chain of thought, by vanilla
and looped transformers, over seen and unseen symbols, at proof depths beyond training.

Runs, all but C2's control with frozen symbol rows and same-symbol attention (the row handling the
unseen-symbols work found; with learned rows no model learned the task): a vanilla transformer; a
deeper vanilla one with the looped model's layer count; a looped model at fixed R and at dynamic R;
and, as C2's control, the looped model with learned rows under weight decay (the looped model with
each of the recipes' two changes beyond SPEC C.1 undone judges no claim: `implicit_horn_ablation`
trains and tables it). Each run is an ordinary suite run: `reproduce --seeds N` trains it at seeds
0..N−1 and this analysis reads one seed's runs at a time. The claims C1–C3 (claims.py) were written
before any of these runs.

Looped runs are also read on validation problems at every iteration count r of their grid, from
their final weights: the r whose validation reach is deepest is the one the table, the depth figure
and C1 read on the test set.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from symgen.analysis.implicit import ImplicitRun, choose_r, load_implicit_run, reached, validation_accuracy
from symgen.analysis.plots import heatmap_figure, line_figure
from symgen.experiments.implicit_horn.claims import (
    DEEP_RUN,
    DYNAMIC_RUN,
    LEARNED_BAR,
    LEARNED_RUN,
    LOOPED_RUN,
    REACH_BAR,
    STATEMENTS,
    VANILLA_RUN,
    judge_all,
)
from symgen.experiments.types import Experiment, Section, Table
from symgen.tasks.horn import SCENARIOS

HEATMAPS = (LOOPED_RUN, DYNAMIC_RUN)
ROLES = {
    LOOPED_RUN: "looped, fixed R (C1, C2, C3)",
    DYNAMIC_RUN: "looped, dynamic R (C1, C3)",
    DEEP_RUN: "C1 control: compute-matched, the looped layer count as distinct blocks",
    VANILLA_RUN: "C1 control: equal parameters, blocks applied once",
    LEARNED_RUN: "C2 control: learned rows under weight decay",
}
TEXT = (
    "The Horn problems of paper A with the chain of thought removed: the model reads the rules, "
    "facts and query and answers True or False at once; whatever reasoning there is happens in "
    "its forward pass. The recipes change two things beyond SPEC C.1: training also labels every "
    "rule's head token with whether its atom is entailed (with one answer bit per problem no probe "
    "left chance), and the model reads the prompt bidirectionally, so a rule's head sees the rules "
    "listed after it (under causal attention a head cannot see the rules that prove its body when "
    "they come later). The implicit-horn-ablation experiment undoes one change at a time. "
    "Training uses proof depths 1–{trained}; every test scenario holds depths up to {deepest}, "
    "balanced per depth and label, with training's number of distractor rules. Looped models (2 "
    "zero-init blocks looped R times, input re-added before every iteration) are read at every "
    "iteration count of their grid and under adaptive halting (KL < 0.001 and entropy < 3.0); the "
    "vanilla model has the same parameters applied once, the deep one the looped model's layer count. "
    "Frozen rows + β: symbol rows fixed at their random initialization and the same-symbol attention "
    "term (model.identity_bias = 3, read on the symbols' rows only). A looped model's inference "
    "iteration count r is chosen on a validation set: as many fresh problems as the test set holds, "
    "from the test generator under a seed stream of their own (never a test problem); the r whose "
    "all_seen reach is deepest there, ties to the fewest r. The r the test set itself would choose is "
    "shown only as a labelled diagnostic. Every run is trained at each of the suite's seeds; a claim's "
    "arm counts only when it learned its seen task (all_seen ≥ {bar} at every trained depth, at its R)."
)


class ImplicitHornExperiment(Experiment):
    name = "implicit-horn"
    title = "Beyond both papers: Horn problems without a chain of thought, looped and vanilla"

    statements = STATEMENTS

    def analyze(self, suite: str, run_dirs: dict[str, Path], figure_dir: Path) -> Section:
        runs = {name: load_implicit_run(name, d) for name, d in run_dirs.items()}
        for run in runs.values():
            if run.looped:
                run.validation = validation_accuracy(run.dir)
        first = next(iter(runs.values()))
        figures = heatmaps(runs, figure_dir)
        figures += [halting_figure(runs, figure_dir), depth_figure(runs, figure_dir)]
        text = TEXT.format(trained=first.trained_depth, deepest=first.test_depth, bar=LEARNED_BAR)
        return Section(self.title, [text], figures, [table(runs)], judge_all(runs))


# ------------------------------------------------------------------------------------------ reading
def validation_r(run: ImplicitRun) -> int | None:
    """The iteration count chosen on the validation set (None: the run was not read there)."""
    return choose_r(run.validation, REACH_BAR)[0] if run.validation else None


def oracle_r(run: ImplicitRun) -> tuple[int, int]:
    """The oracle: the r the test set would choose, and its reach (a diagnostic only)."""
    return choose_r({r: run.accuracy("all_seen", r) for r in run.grid}, REACH_BAR)


def mean_over(by_depth: dict[int, float], depths: range) -> float:
    values = [by_depth[d] for d in depths if d in by_depth]
    return float(np.mean(values)) if values else float("nan")


def table(runs: dict[str, ImplicitRun]) -> Table:
    first = next(iter(runs.values()))
    trained = first.trained_depth
    headers = (
        ["run", "role", "R", "parameters", "steps", "seconds"]
        + [f"{s}: {part}" for s in SCENARIOS for part in (f"depths 1–{trained}", "beyond")]
        + [
            "learned (all_seen, worst trained depth)",
            "reached at R",
            "reached at validation r (r)",
            "diagnostic: reached at test-chosen r (r)",
            "unseen-row cosine",
        ]
    )
    caption = (
        f"Answer accuracy (chance 0.5) averaged over trained depths 1–{trained} and over deeper, never "
        f"trained depths, at the run's own R. 'learned': all_seen accuracy at the worst trained depth "
        f"(an arm counts in a claim at ≥ {LEARNED_BAR}). 'reached': the deepest depth whose all_seen "
        f"accuracy and every shallower depth's is ≥ {REACH_BAR}, at the run's R, at the r chosen on the "
        "validation set, and (an oracle, diagnostic only) at the r the test set itself would choose."
    )
    return Table(headers, [table_row(run) for run in runs.values()], caption)


def table_row(run: ImplicitRun) -> list[object]:
    s, trained = run.summary, run.trained_depth
    cells: list[object] = [
        run.name,
        ROLES.get(run.name, ""),
        run.r_label,
        s["parameters"],
        s["steps"],
        round(s["train_seconds"]),
    ]
    for scenario in SCENARIOS:
        acc = run.accuracy(scenario)
        inside = mean_over(acc, range(1, trained + 1))
        beyond = mean_over(acc, range(trained + 1, run.test_depth + 1))
        cells += [round(inside, 2), round(beyond, 2)]
    cells += [round(run.worst_trained(), 3), reached(run.accuracy("all_seen"), REACH_BAR)]
    r = validation_r(run)
    cells.append("—" if r is None else f"{reached(run.accuracy('all_seen', r), REACH_BAR)} ({r})")
    if run.looped:
        r_test, depth = oracle_r(run)
        cells.append(f"{depth} ({r_test})")
    else:
        cells.append("—")
    cells.append(round(run.final.get("collapse/unseen_in_mean_cos", float("nan")), 3))
    return cells


# ------------------------------------------------------------------------------------------ figures
def heatmaps(runs: dict[str, ImplicitRun], figure_dir: Path) -> list[Path]:
    """Test accuracy per depth × r of the looped models, all_seen and all_unseen; lines mark the
    trained depths, the training R and the r chosen on the validation set."""
    out = []
    for name in HEATMAPS:
        if name not in runs:
            continue
        run = runs[name]
        depths = list(range(1, run.test_depth + 1))
        marks = {f"trained depths ≤ {run.trained_depth}": ("h", run.trained_depth - 0.5)}
        if run.own_r in run.grid and run.r_label != "dynamic":
            marks[f"training R = {run.own_r}"] = ("v", run.grid.index(run.own_r))
        r = validation_r(run)
        if r is not None:
            marks[f"r chosen on validation = {r}"] = ("v", run.grid.index(r) + 0.1)
        for scenario in ("all_seen", "all_unseen"):
            grid = [[run.accuracy(scenario, r).get(d, float("nan")) for r in run.grid] for d in depths]
            out.append(
                heatmap_figure(
                    figure_dir / f"{name}_{scenario}.png",
                    grid,
                    [str(d) for d in depths],
                    [str(r) for r in run.grid],
                    "inference iterations r",
                    "proof depth",
                    f"{name}\n(seed {run.seed}) {scenario}: accuracy",
                    marks,
                )
            )
    return out


def halting_figure(runs: dict[str, ImplicitRun], figure_dir: Path) -> Path:
    series = {}
    for run in runs.values():
        iters = run.halting_iterations()
        if run.looped and iters:
            series[run.name] = (list(iters), list(iters.values()))
    return line_figure(
        figure_dir / "implicit_halting.png",
        series or {"no halting data": ([1], [0])},
        "proof depth",
        "mean iterations used under halting",
        f"Adaptive halting (KL + entropy), all_seen (seed {next(iter(runs.values())).seed})",
    )


def depth_figure(runs: dict[str, ImplicitRun], figure_dir: Path) -> Path:
    """Every run at its R, and looped ones at the r chosen on the validation set."""
    series = {}
    for run in runs.values():
        acc = run.accuracy("all_seen")
        series[f"{run.name} (R)"] = (list(acc), list(acc.values()))
        r = validation_r(run)
        if r is not None and r != run.own_r:
            chosen = run.accuracy("all_seen", r)
            series[f"{run.name} (r = {r})"] = (list(chosen), list(chosen.values()))
    return line_figure(
        figure_dir / "implicit_depth.png",
        series,
        "proof depth",
        "answer accuracy (all_seen)",
        f"Accuracy per proof depth: at the training R, and at the r chosen on validation "
        f"(seed {next(iter(runs.values())).seed})",
        ylim=(0, 1.02),
    )
