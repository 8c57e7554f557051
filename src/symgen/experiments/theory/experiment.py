"""Claim A7.7: the contraction of never-used softmax rows against Lemma 4.1 (no training runs)."""

from __future__ import annotations

from pathlib import Path

from symgen.analysis.theory import run_theory
from symgen.experiments.claims import judge
from symgen.experiments.theory.claims import A77, STATEMENTS
from symgen.experiments.types import Experiment, Section, Table


class TheoryExperiment(Experiment):
    name = "theory"
    title = "Collapse in theory: unseen rows under (S)GD with weight decay (Lemma 4.1)"
    statements = STATEMENTS

    def analyze(self, suite: str, run_dirs: dict[str, Path], figure_dir: Path) -> Section:
        report = run_theory(figure_dir.parent / "theory", "paper" if suite == "paper" else "quick")
        figure = figure_dir / "theory.png"
        figure.write_bytes((figure_dir.parent / "theory" / report["figure"]).read_bytes())
        c = report["claim"]
        parts = [judge(p["text"], p["ok"], p["measured"], c["values"]) for p in c["parts"]]
        claim = A77.check(parts, [figure.name], c["note"])
        columns = [
            "optimizer",
            "eta_lambda",
            "initial_mean_cosine",
            "final_mean_cosine",
            "delta_final_over_initial",
            "max_excess_over_bound",
        ]
        rows = [[name, *(_fmt(case.get(k)) for k in columns)] for name, case in report["cases"].items()]
        table = Table(
            ["case", *columns],
            rows,
            "Unseen rows per case (theory.json); excess over the bound <= 0 "
            "means the lemma held at every step",
        )
        return Section(
            self.title,
            [f"{report['bound']}; update rule {report['update_rule']}."],
            [figure],
            [table],
            [claim],
        )


def _fmt(value: object) -> str:
    if value is None:
        return "—"
    return f"{value:.4g}" if isinstance(value, float) else str(value)
