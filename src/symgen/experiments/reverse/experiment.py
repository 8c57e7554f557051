"""The first experiment: does the core learn to use its context? Sequence reversal to >= 99 %
held-out exact match within 3 minutes on a 2-core CPU."""

from __future__ import annotations

from pathlib import Path

from symgen.analysis.plots import line_figure
from symgen.experiments.types import Experiment, Section, Table
from symgen.measures.metrics import curve, first_crossing, read_metrics
from symgen.training.run_dir import read_summary

TARGET = 0.99
BUDGET_S = 180.0


class ReverseExperiment(Experiment):
    name = "reverse"
    title = "Core check: sequence reversal over 200 symbols"

    def analyze(self, suite: str, run_dirs: dict[str, Path], figure_dir: Path) -> Section:
        run = run_dirs["reverse"]
        records, summary = read_metrics(run), read_summary(run)
        figure = line_figure(
            figure_dir / "reverse_learning_curve.png",
            {
                "held-out exact match": curve(records, "eval/exact_match", "elapsed_s"),
                "train token accuracy": curve(records, "train/token_accuracy", "elapsed_s"),
            },
            "training seconds",
            "accuracy",
            "Sequence reversal: learning curve",
            vlines={"3 min": BUDGET_S},
            ylim=(0, 1.02),
        )
        reached = first_crossing(records, "eval/exact_match", TARGET, "elapsed_s")
        final = summary["final"]["eval/exact_match"]
        table = Table(
            ["final held-out exact match", f"seconds to {TARGET:.0%}", "steps", "steps/s", "parameters"],
            [
                [
                    final,
                    "never" if reached is None else reached,
                    summary["steps"],
                    summary["steps_per_second"],
                    summary["parameters"],
                ]
            ],
        )
        verdict = "met" if reached is not None and reached <= BUDGET_S else "not met"
        text = (
            f"Target: >= {TARGET:.0%} exact match on held-out sequences within {BUDGET_S:.0f} s of training "
            f"on this machine — {verdict}."
        )
        return Section(self.title, [text], [figure], [table])
