"""Paper A, ablation of symgen's same-symbol attention: which piece solves unseen symbols.

Labelled variants on one shared reduced task (one proof step, 3-4 rules; cheap enough for many
variants), beside every run of the unseen-symbols experiment on the quick task itself. Each
variant changes one thing against its neighbour:

- standard vs standard + same-symbol (learned rows under weight decay): does the term fix collapsed
  rows?
- standard + same-symbol read on the symbols' rows vs on every token: repeated syntax tokens ('.', '->',
  labels) pulled towards their earlier copies in every head;
- standard + frozen ± same-symbol, no copy head: is a fixed random row enough without the term, and what does
  the copy head add?
- copy + frozen ± same-symbol; copy head in every block vs the last one;
- copy + forgetting + same-symbol, resets on every (un)embedding row vs the symbols' rows only.

Tables: rule choice, exact match per scenario, unseen-row cosine, steps/s; curves against steps.
"""

from __future__ import annotations

from pathlib import Path

from symgen.analysis.plots import line_figure
from symgen.experiments.types import Experiment, Section, Table
from symgen.experiments.unseen.claims import label
from symgen.experiments.unseen.experiment import method_runs
from symgen.measures.metrics import curve, read_metrics
from symgen.tasks.horn import SCENARIOS
from symgen.training.run_dir import read_summary


class UnseenAblationExperiment(Experiment):
    name = "unseen-ablation"
    title = "Paper A ablation: same-symbol attention, copy heads and row interventions"
    suites = ("smoke", "quick")

    def analyze(self, suite: str, run_dirs: dict[str, Path], figure_dir: Path) -> Section:
        labels = {r.name: r.label or r.name for r in self.runs(suite)}
        reduced = {labels[n]: d for n, d in run_dirs.items() if n.startswith("ablation-")}
        quick = {label(m): d for m, d in method_runs(run_dirs).items()}
        tables = [
            self._table(reduced, "Reduced task (one proof step, 3-4 rules), seed 0."),
            self._table(quick, "The quick task: every run of the unseen-symbols experiment."),
        ]
        figures = []
        for task_name, runs in (("reduced", reduced), ("quick", quick)):
            records = {name: read_metrics(d) for name, d in runs.items()}
            for scenario in ("all_seen", "all_unseen"):
                figures.append(
                    line_figure(
                        figure_dir / f"unseen_ablation_{task_name}_{scenario}.png",
                        {n: curve(r, f"eval/{scenario}/exact_match") for n, r in records.items()},
                        "training step",
                        "exact match",
                        f"{task_name} task: {scenario} exact match during training",
                        ylim=(-0.02, 1.02),
                    )
                )
        text = [
            "same-symbol: the attention term β (model.identity_bias=3.0) read on the symbols' rows "
            "(model.identity_bias_scope=symbols) unless the variant says 'on every token', with "
            "interventions on the symbol rows only unless the variant says 'all rows'. Rule choice: "
            "teacher-forced accuracy on the label of the rule that fires next (chance is one over the "
            "number of rules). Forgetting runs are also shown with their unseen rows re-drawn before the "
            "test ('re-drawn')."
        ]
        return Section(self.title, text, figures, tables)

    @staticmethod
    def _table(runs: dict[str, Path], caption: str) -> Table:
        headers = ["variant", "view"] + [f"{s} rule choice" for s in SCENARIOS]
        headers += [f"{s} exact" for s in SCENARIOS] + ["unseen-row cosine", "steps", "steps/s"]
        rows = []
        for name, run_dir in runs.items():
            summary = read_summary(run_dir)
            final = summary["final"]
            views = [("as trained", "eval/")]
            if "redrawn/all_seen/exact_match" in final:
                views.append(("re-drawn", "redrawn/"))
            for view, prefix in views:
                row: list[object] = [name, view]
                row += [final.get(f"{prefix}{s}/token_accuracy/rule", float("nan")) for s in SCENARIOS]
                row += [final.get(f"{prefix}{s}/exact_match", float("nan")) for s in SCENARIOS]
                row += [final.get("collapse/unseen_out_mean_cos", float("nan")), summary["steps"]]
                row.append(summary.get("steps_per_second", float("nan")))
                rows.append(row)
        return Table(headers, rows, caption)
