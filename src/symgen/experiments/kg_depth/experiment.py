"""Paper B, depth extrapolation (§6, claim B5.3): on permutation graphs, with a curriculum that adds
(k + 1)-hop chains once held-out k-hop accuracy passes 95 %, the learnable depth (largest k passed)
grows with the number of training iterations R; dynamic R ~ clip(Poisson(4), 2, 8), drawn per batch,
is compared. Two protocols: equal compute (every run the same budget of layer passes: blocks × R per
step, summed, so R = 8 takes an eighth of the steps of R = 1, ending early when its curriculum has
stalled) and until the curriculum stalls (runs named `-stall`, or without a budget, under a cap of
layer passes or steps), as the paper trains; the report says what ended each run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml

from symgen.analysis.plots import line_figure
from symgen.experiments.kg_depth.claims import EQUAL, PROTOCOLS, STALL, STATEMENTS, DepthRun, check_b53
from symgen.experiments.types import Experiment, Section, Table
from symgen.measures.metrics import curve, read_metrics
from symgen.training.run_dir import read_summary

STALL_SUFFIX = "-stall"  # a run trained until its curriculum stalls, under a larger cap


def planned_run(name: str, cfg: dict, summary: dict | None = None) -> DepthRun:
    """What B5.3 reads of a run from its resolved config: its protocol, R and budget; with its summary
    also its learnable depth and what ended it (a run not trained: depth 0, ended by `not trained`)."""
    train = cfg["train"]
    dynamic = train["loops"] == "poisson"
    budget = train.get("budget_layer_passes")
    stall = name.endswith(STALL_SUFFIX) or budget is None
    return DepthRun(
        name,
        STALL if stall else EQUAL,
        train["loops_max"] if dynamic else cfg["model"]["n_loops"],
        dynamic,
        int(summary.get("learnable_depth", 0)) if summary else 0,
        budget,
        summary.get("stopped_by", "steps") if summary else "not trained",
    )


def depth_run(name: str, run: Path) -> DepthRun:
    """What B5.3 reads of a trained run: its protocol, R, learnable depth, budget and what ended it."""
    return planned_run(name, yaml.safe_load((run / "config.yaml").read_text()), read_summary(run))


def _row(run: Path, info: DepthRun, label: str) -> tuple[list, dict[int, float]]:
    """A run's cells, and its final held-out accuracy per hop count (a column each in the table)."""
    summary = read_summary(run)
    final = summary.get("final", {})
    hops = sorted(  # the accuracy of each hop count (not its per-R grid entries, `...@rN`)
        int(k.split("/")[1].removeprefix("hop_"))
        for k in final
        if k.startswith("eval/hop_") and k.endswith("/accuracy")
    )
    passed = [h["step"] for h in summary.get("curriculum_history", [])]
    blocks = yaml.safe_load((run / "config.yaml").read_text())["model"]["n_layers"]
    cells = (
        [info.name, info.protocol, label if info.dynamic else info.loops, blocks, summary["steps"]]
        + [summary.get("layer_passes", "—"), round(summary["train_seconds"]), info.stopped_by, info.depth]
        + [" ".join(str(s) for s in passed) or "—"]
    )
    return cells, {k: final[f"eval/hop_{k}/accuracy"] for k in hops}


def _depth_figure(path: Path, runs: list[DepthRun], label: str, mean_r: float) -> Path:
    """Learnable depth against R, one line per protocol, the dynamic model at its mean R."""
    series = {}
    for protocol in PROTOCOLS:
        fixed = sorted((r for r in runs if r.protocol == protocol and not r.dynamic), key=lambda r: r.loops)
        if fixed:
            series[f"fixed R ({protocol})"] = ([r.loops for r in fixed], [r.depth for r in fixed])
        series |= {
            f"{label} at its mean R ({protocol})": ([mean_r], [r.depth])
            for r in runs
            if r.protocol == protocol and r.dynamic
        }
    return line_figure(
        path, series, "training iterations R", "learnable depth (hops)", "Learnable depth against training R"
    )


def _progress_figures(figure_dir: Path, run_dirs: dict[str, Path]) -> list[Path]:
    records = {name: read_metrics(run) for name, run in run_dirs.items()}
    key = "eval/curriculum/learnable_depth"
    return [
        line_figure(
            figure_dir / "kg_depth_curriculum.png",
            {n: curve(r, key) for n, r in records.items()},
            "training steps",
            "learnable depth (hops)",
            "Curriculum progress against steps",
        ),
        line_figure(
            figure_dir / "kg_depth_compute.png",
            {n: curve(r, key, "layer_passes") for n, r in records.items()},
            "compute (layer passes: blocks × R, summed over steps)",
            "learnable depth (hops)",
            "Curriculum progress against compute",
        ),
    ]


TEXT = (
    "Permutation graph, no positional encoding, a zero-init block looped R times. The curriculum "
    "starts with atomic facts and 2-hop chains and adds k + 1 hops when held-out k-hop accuracy "
    "passes the threshold; earlier hops stay in training, and each stage starts a fresh optimizer "
    "and warm-up when the recipe says so. Two protocols: equal compute (every run the same budget of "
    "layer passes, ending early when no stage passes for the recipe's patience) and until the "
    "curriculum stalls (runs ending in -stall, or without a budget: they end when no stage passes "
    "for the recipe's patience, or at a cap; 'ended by' says which). The paper's sentence needs the "
    "second protocol: the paper trains each R until its curriculum stalls; equal compute asks whether "
    "more iterations pay for their cost. Fixed-R models are read at their training R; the dynamic-R "
    "model at each R of its training range, the best counting (it may spend the iterations a depth "
    "needs). A run counts in a comparison once it passed 2 hops."
)


class KGDepthExperiment(Experiment):
    name = "kg-depth"
    title = "Paper B: learnable depth against training iterations (depth curriculum)"

    statements = STATEMENTS

    def analyze(self, suite: str, run_dirs: dict[str, Path], figure_dir: Path) -> Section:
        runs = [depth_run(name, run) for name, run in run_dirs.items()]
        label, mean_r = "dynamic R", 0.0
        for info in runs:
            if info.dynamic:
                label, mean_r = dynamic_loops(run_dirs[info.name])
        rows = [_row(run_dirs[r.name], r, label) for r in runs]
        hops = sorted({k for _, per_hop in rows for k in per_hop})
        figures = [_depth_figure(figure_dir / "kg_depth_vs_r.png", runs, label, mean_r)]
        figures += _progress_figures(figure_dir, run_dirs)
        table = Table(
            ["run", "protocol", "R", "blocks", "steps", "layer passes", "training seconds", "ended by"]
            + ["learnable depth", "steps passing each stage"],
            [cells for cells, _ in rows],
            "Learnable depth: the largest k whose held-out k-hop accuracy reached the curriculum "
            "threshold while k-hop chains were the deepest in training (0: 2 hops never passed).",
        )
        per_hop = Table(  # a table of its own: one column per hop count, up to 39 at paper scale
            ["run"] + [f"hop {k}" for k in hops],
            [[cells[0]] + [accuracy.get(k, "—") for k in hops] for cells, accuracy in rows],
            "Final held-out accuracy on k-hop chains, per hop count k (fixed R: at R; dynamic: the best "
            "R of its range).",
        )
        absent = [planned_run(n, cfg.to_dict()) for n, cfg in self.absent(suite, run_dirs).items()]
        claim = check_b53(runs, [str(p) for p in run_dirs.values()], absent)
        return Section(self.title, [TEXT], figures, [table, per_hop], [claim])


def dynamic_loops(run: Path) -> tuple[str, float]:
    """How a dynamic-R run drew its iterations, from its resolved config, and their mean."""
    train = yaml.safe_load((run / "config.yaml").read_text())["train"]
    lam, low, high = train["loops_lambda"], train["loops_min"], train["loops_max"]
    mean = float(np.clip(np.random.default_rng(0).poisson(lam, 100_000), low, high).mean())
    return f"clip(Poisson({lam:g}), {low}, {high})", round(mean, 2)
