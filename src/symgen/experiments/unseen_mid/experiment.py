"""Paper A at mid scale: the unseen-symbols experiment at d = 128, and the width question.

At quick scale (d = 64) the paper's architecture, copy heads without symgen's same-symbol term,
never leaves the rule-choice plateau: every Part A result that shows the effect uses the term. The
paper's models have 60-75M parameters. This experiment trains the unseen-symbols runs at d = 128
(its claims are rows of their own, `A7.1 (mid)` ... `A7.4β (mid)`, judged by the unseen judges) and
asks how width moves the plateau: steps until teacher-forced rule choice on all_seen first exceeds
0.5, at d = 64, 128 and 256, for the standard model, copy + frozen and copy + frozen + same-symbol.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt
import yaml

from symgen.analysis.plots import save
from symgen.experiments.types import Section, Table
from symgen.experiments.unseen.claims import STATEMENTS, scaled
from symgen.experiments.unseen.experiment import UnseenSymbolsExperiment, method_runs
from symgen.measures.metrics import read_metrics
from symgen.training.run_dir import read_summary

RULE_CHOICE = "eval/all_seen/token_accuracy/rule"  # teacher-forced: the label of the rule that fires
PLATEAU_EXIT = 0.5  # rule choice above this has left the plateau (chance is one over 4-5 rules)
WIDTH_RUN = re.compile(r"^width-(\d+)-(.+)$")
# the methods compared across widths (run names without `unseen-` / `width-D-`), and their labels
WIDTH_METHODS = {
    "standard": "standard",
    "copy-frozen": "copy + frozen",
    "copy-frozen-same-symbol": "copy + frozen + same-symbol",
}
PAPER_METHOD = "copy-frozen"  # the paper's architecture: does width alone move it off the plateau?


@dataclass
class WidthPoint:
    """One run of a width-compared method: its width and when rule choice left the plateau."""

    method: str
    run: str
    width: int
    parameters: int | None
    steps: int  # trained
    exit_step: int | None  # None: never within the run
    rule_choice: float  # at the last evaluation
    all_seen: float  # all_seen exact match at the last evaluation


def plateau_exit(records: list[dict]) -> int | None:
    """The first evaluation step at which rule choice exceeds PLATEAU_EXIT, or None if none does."""
    return next((int(r["step"]) for r in records if r.get(RULE_CHOICE, 0.0) > PLATEAU_EXIT), None)


def _method(name: str) -> str:
    """The width-compared method a run belongs to ('' for none)."""
    match = WIDTH_RUN.match(name)
    method = match.group(2) if match else name.removeprefix("unseen-") if name.startswith("unseen-") else ""
    return method if method in WIDTH_METHODS else ""


def _width(run: Path) -> int:
    return int(yaml.safe_load((run / "config.yaml").read_text())["model"]["d_model"])


def width_points(run_dirs: dict[str, Path]) -> list[WidthPoint]:
    """Every trained run of a width-compared method, by method then width. The width is read from the
    run's config, not its name."""
    points = []
    for name, run in run_dirs.items():
        method = _method(name)
        if not method or not (run / "metrics.jsonl").exists():
            continue
        records = read_metrics(run)
        evals = [r for r in records if RULE_CHOICE in r]
        last = evals[-1] if evals else {}
        parameters = read_summary(run).get("parameters") if (run / "summary.json").exists() else None
        points.append(
            WidthPoint(
                method,
                name,
                _width(run),
                parameters,
                int(records[-1]["step"]) if records else 0,
                plateau_exit(records),
                float(last.get(RULE_CHOICE, float("nan"))),
                float(last.get("eval/all_seen/exact_match", float("nan"))),
            )
        )
    order = list(WIDTH_METHODS)
    return sorted(points, key=lambda p: (order.index(p.method), p.width, p.run))


def width_table(points: list[WidthPoint]) -> Table:
    rows: list[list[object]] = [
        [
            WIDTH_METHODS[p.method],
            p.width,
            p.parameters if p.parameters is not None else "",
            p.run,
            p.steps,
            p.exit_step if p.exit_step is not None else "never",
            p.rule_choice,
            p.all_seen,
        ]
        for p in points
    ]
    headers = ["method", "d_model", "parameters", "run", "steps trained", "leaves the plateau at step"]
    return Table(
        headers + ["rule choice, last", "all_seen exact, last"],
        rows,
        f"Steps to leave the rule-choice plateau: the first evaluation at which teacher-forced rule "
        f"choice on all_seen ({RULE_CHOICE}) exceeds {PLATEAU_EXIT:g}; 'never' when no evaluation of the "
        f"run does.",
    )


def width_figure(points: list[WidthPoint], path: Path) -> Path:
    """Steps to leave the plateau against width, one colour per method; a run that never left it is
    an open triangle at its last step (it had not left by then)."""
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for i, (method, name) in enumerate(WIDTH_METHODS.items()):
        left = [p for p in points if p.method == method and p.exit_step is not None]
        never = [p for p in points if p.method == method and p.exit_step is None]
        colour, shift = f"C{i}", 1.0 + 0.04 * (i - 1)  # a small offset keeps equal widths apart
        if left:
            ax.plot(
                [p.width * shift for p in left], [p.exit_step for p in left], "o", color=colour, label=name
            )
        if never:
            xs, ys = [p.width * shift for p in never], [p.steps for p in never]
            ax.plot(xs, ys, "^", mfc="none", color=colour, ms=8, label=f"{name}: never (by its last step)")
    widths = sorted({p.width for p in points})
    ax.set_xscale("log", base=2)
    if widths:
        ax.set_xticks(widths, [str(w) for w in widths])
    ax.minorticks_off()
    ax.set_ylim(bottom=0)
    ax.set_xlabel("d_model")
    ax.set_ylabel("training step")
    ax.set_title(f"Steps until rule choice on all_seen exceeds {PLATEAU_EXIT:g}")
    if points:
        ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    return save(fig, path)


def _at(p: WidthPoint) -> str:
    where = f"step {p.exit_step}" if p.exit_step is not None else f"never within {p.steps} steps"
    return f"d = {p.width} ({p.run}): {where} (rule choice {p.rule_choice:.2f} at the end)"


def width_answer(points: list[WidthPoint]) -> str:
    """The width question answered from the measured points: does the paper's copy + frozen model,
    without the same-symbol term, leave the plateau at any width measured? Then the other methods."""
    paper = [p for p in points if p.method == PAPER_METHOD]
    name = WIDTH_METHODS[PAPER_METHOD]
    if not paper:
        answer = f"No {name} run (the paper's architecture, without the same-symbol term) was measured."
    else:
        widths = ", ".join(str(w) for w in sorted({p.width for p in paper}))
        # a run of the same width trained longer may leave where a shorter one did not: say the steps
        left = [f"d = {p.width} within {p.steps} steps" for p in paper if p.exit_step is not None]
        verdict = (
            f"leaves the rule-choice plateau at {', '.join(left)} of the runs measured"
            if left
            else "does not leave the rule-choice plateau at any width measured"
        )
        answer = f"The paper's {name} model, without the same-symbol term, {verdict} (d = {widths}): "
        answer += "; ".join(_at(p) for p in paper) + "."
    others = [
        f"{WIDTH_METHODS[m]}: " + "; ".join(_at(p) for p in points if p.method == m)
        for m in WIDTH_METHODS
        if m != PAPER_METHOD and any(p.method == m for p in points)
    ]
    plateau = f" (the first evaluation at which rule choice on all_seen exceeds {PLATEAU_EXIT:g})"
    return answer + (f" Beside it{plateau}: " + ". ".join(others) + "." if others else "")


class UnseenMidExperiment(UnseenSymbolsExperiment):
    name = "unseen-mid"
    title = "Paper A at mid scale: unseen symbols at d = 128, and what width does to the plateau"
    suites = ("smoke", "mid")

    statements = scaled(STATEMENTS, "mid")

    def analyze(self, suite: str, run_dirs: dict[str, Path], figure_dir: Path) -> Section:
        # its own figure folder: the unseen experiment's figures have the same names
        section = super().analyze(suite, run_dirs, figure_dir / self.name)
        section.title = self.title
        points = width_points(run_dirs)
        widths = sorted({_width(run) for run in method_runs(run_dirs).values()})
        section.paragraphs = [
            f"The unseen-symbols runs at d = {', '.join(map(str, widths)) or '-'} (the quick task and "
            "step counts), judged by the same bars as the quick ones: their claims are the rows marked "
            "(mid). Runs named width-D-METHOD train a method at another width, or at d = 128 for longer, "
            "for the plateau question and are not part of the claims.",
            width_answer(points),
            *section.paragraphs,
        ]
        section.tables.append(width_table(points))
        section.figures.append(width_figure(points, figure_dir / self.name / "unseen_mid_plateau_width.png"))
        return section
