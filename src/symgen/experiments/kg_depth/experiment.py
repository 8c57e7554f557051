"""Paper B, depth extrapolation (§6, claim B5.3): on permutation graphs, with a curriculum that adds
(k + 1)-hop chains once held-out k-hop accuracy passes 95 %, the learnable depth (largest k passed)
grows with the number of training iterations R; dynamic R ~ clip(Poisson(4), 2, 8), drawn per batch,
is compared. Every run gets the same compute (layer passes: blocks × R per step, summed), so R = 8
takes an eighth of the steps of R = 1, and ends early when its curriculum has stalled; the report
says what ended each run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml

from symgen.analysis.plots import line_figure
from symgen.experiments.claims import Claim
from symgen.experiments.kg_depth.claims import B53, STATEMENTS
from symgen.experiments.kg_systematic.experiment import run_shape
from symgen.experiments.types import Experiment, Section, Table
from symgen.measures.metrics import curve, read_metrics
from symgen.training.run_dir import read_summary


class KGDepthExperiment(Experiment):
    name = "kg-depth"
    title = "Paper B: learnable depth against training iterations (depth curriculum)"

    statements = STATEMENTS

    def analyze(self, suite: str, run_dirs: dict[str, Path], figure_dir: Path) -> Section:
        rows, depth_by_r, stages, by_compute = [], {}, {}, {}
        dynamic: int | None = None
        dynamic_label, dynamic_mean = "dynamic R", 0.0
        for name, run in run_dirs.items():
            records, summary = read_metrics(run), read_summary(run)
            loops, layers = run_shape(run)
            depth = int(summary.get("learnable_depth", 0))
            if "dynamic" in name:
                dynamic = depth
                dynamic_label, dynamic_mean = dynamic_loops(run)
            else:
                depth_by_r[loops] = depth
            stages[name] = curve(records, "eval/curriculum/learnable_depth")
            by_compute[name] = curve(records, "eval/curriculum/learnable_depth", "layer_passes")
            final = summary.get("final", {})
            hops = sorted(  # the accuracy of each hop count (not its per-R grid entries, `...@rN`)
                int(k.split("/")[1].removeprefix("hop_"))
                for k in final
                if k.startswith("eval/hop_") and k.endswith("/accuracy")
            )
            per_hop = " ".join(f"{k}:{final[f'eval/hop_{k}/accuracy']:.2f}" for k in hops)
            passed = [h["step"] for h in summary.get("curriculum_history", [])]
            rows.append(
                [
                    name,
                    dynamic_label if "dynamic" in name else loops,
                    layers,
                    summary["steps"],
                    summary.get("layer_passes", "—"),
                    round(summary["train_seconds"]),
                    summary.get("stopped_by", "steps"),
                    depth,
                    " ".join(str(s) for s in passed) or "—",
                    per_hop,
                ]
            )
        figures = [
            line_figure(
                figure_dir / "kg_depth_vs_r.png",
                {"fixed R": (sorted(depth_by_r), [depth_by_r[r] for r in sorted(depth_by_r)])}
                | (
                    {f"{dynamic_label} (at its mean R)": ([dynamic_mean], [dynamic])}
                    if dynamic is not None
                    else {}
                ),
                "training iterations R",
                "learnable depth (hops)",
                "Learnable depth against training R",
            ),
            line_figure(
                figure_dir / "kg_depth_curriculum.png",
                stages,
                "training steps",
                "learnable depth (hops)",
                "Curriculum progress against steps",
            ),
            line_figure(
                figure_dir / "kg_depth_compute.png",
                by_compute,
                "compute (layer passes: blocks × R, summed over steps)",
                "learnable depth (hops)",
                "Curriculum progress against compute",
            ),
        ]
        table = Table(
            ["run", "R", "blocks", "steps", "layer passes", "training seconds", "ended by", "learnable depth"]
            + ["steps passing each stage"]
            + ["final held-out accuracy per hop (fixed: at R; dynamic: the best R of its range)"],
            rows,
            "Learnable depth: the largest k whose held-out k-hop accuracy reached the curriculum "
            "threshold while k-hop chains were the deepest in training (0: 2 hops never passed).",
        )
        text = (
            "Permutation graph, no positional encoding, a zero-init block looped R times. The curriculum "
            "starts with atomic facts and 2-hop chains and adds k + 1 hops when held-out k-hop accuracy "
            "passes the threshold; earlier hops stay in training, and each stage starts a fresh optimizer "
            "and warm-up when the recipe says so. Every run has the same compute budget (layer passes) "
            "and ends early when no stage passes for the recipe's patience ('ended by'). Fixed-R models are "
            "read at their training R; the dynamic-R model at each R of its training range, the best "
            "counting (it may spend the iterations a depth needs)."
        )
        return Section(self.title, [text], figures, [table], [self.claim(depth_by_r, dynamic, run_dirs)])

    @staticmethod
    def claim(depth_by_r: dict[int, int], dynamic: int | None, run_dirs: dict[str, Path]) -> Claim:
        rs = sorted(depth_by_r)
        depths = [depth_by_r[r] for r in rs]
        grows = len(rs) >= 2 and all(a <= b for a, b in zip(depths, depths[1:], strict=False))
        grows = grows and depths[-1] > depths[0]
        measured = ", ".join(f"R = {r}→{d}" for r, d in zip(rs, depths, strict=True))
        if dynamic is not None:  # the bar: dynamic R reaches at least the best fixed R
            measured += f", dynamic → {dynamic} hops (best fixed R: {max(depths, default=0)})"
            grows = grows and dynamic >= max(depths, default=0)
        return B53.judged(
            measured,
            "reproduced" if grows else "not reproduced",
            [str(p) for p in run_dirs.values()],
            {
                "learnable_depth_by_r": {str(r): d for r, d in zip(rs, depths, strict=True)},
                "dynamic": dynamic,
            },
        )


def dynamic_loops(run: Path) -> tuple[str, float]:
    """How a dynamic-R run drew its iterations, from its resolved config, and their mean."""
    train = yaml.safe_load((run / "config.yaml").read_text())["train"]
    lam, low, high = train["loops_lambda"], train["loops_min"], train["loops_max"]
    mean = float(np.clip(np.random.default_rng(0).poisson(lam, 100_000), low, high).mean())
    return f"clip(Poisson({lam:g}), {low}, {high})", round(mean, 2)
