"""Paper A, ablation of symgen's same-symbol attention: which piece solves unseen symbols.

Labelled variants on one shared reduced task (one proof step, 3-4 rules; cheap enough for many
variants), beside every run of the unseen-symbols experiment on the quick task itself. Each
variant changes one thing against its neighbour:

- standard vs standard + β (learned rows under weight decay): does the term fix collapsed rows?
- standard + β read on the symbols' rows vs on every token: repeated syntax tokens ('.', '->',
  labels) pulled towards their earlier copies in every head;
- standard + frozen ± β, no copy head: is a fixed random row enough without the term, and what does
  the copy head add?
- copy + frozen ± β; copy head in every block vs the last one;
- copy + forgetting + β, resets on every (un)embedding row vs the symbols' rows only.

Tables: rule choice, exact match per scenario, unseen-row cosine, steps/s; curves against steps.
"""

from __future__ import annotations

from pathlib import Path

from symgen.analysis.plots import line_figure
from symgen.experiments.suite import Experiment, RunSpec, Section, Table
from symgen.experiments.unseen import SAME_SYMBOL, SMOKE, method_runs
from symgen.measures.metrics import curve, read_metrics
from symgen.tasks.horn import SCENARIOS
from symgen.training.run_dir import read_summary

REDUCED = [
    "task.min_rules=3",
    "task.max_rules=4",
    "task.max_depth=1",
    "task.n_test=100",
    "train.steps=1000",
    "train.eval_every=500",
    "train.checkpoint_every=500",
    "train.forget_every=500",
]
FROZEN = ["train.freeze_embeddings=true"]


def _same_symbol_but(change: str) -> list[str]:
    """SAME_SYMBOL with the setting `change` ("key=value") replaced."""
    key = change.split("=")[0]
    return [change if o.split("=")[0] == key else o for o in SAME_SYMBOL]


# variant -> (recipe, overrides on top of the reduced task)
VARIANTS: dict[str, tuple[str, list[str]]] = {
    "standard": ("horn-standard", []),
    "standard+β": ("horn-standard", SAME_SYMBOL),
    "standard+β on every token": ("horn-standard", _same_symbol_but("model.identity_bias_scope=all")),
    "standard, frozen": ("horn-standard", FROZEN),
    "standard, frozen+β": ("horn-standard", FROZEN + SAME_SYMBOL),
    "copy, frozen": ("horn-copy-frozen", []),
    "copy, frozen+β": ("horn-copy-frozen", SAME_SYMBOL),
    "copy in every block, frozen+β": (
        "horn-copy-frozen",
        SAME_SYMBOL + ["model.copy_layers=[0,1,2,3]", "model.copy_gate_init=1.0"],
    ),
    "copy, forget all rows+β": (
        "horn-copy-forget",
        _same_symbol_but("train.intervention_rows=all"),
    ),
    "copy, forget symbol rows+β": ("horn-copy-forget", SAME_SYMBOL),
}


def _slug(variant: str) -> str:
    keep = variant.replace("+β", " ss").replace(",", "")
    return "ablation-" + "-".join(keep.split())


def _reduced(suite: str, recipe: str) -> list[str]:
    forget = "forget" in recipe
    if suite == "smoke":
        drop = ("train.forget",) if not forget else ("train.forget_until",)
        return [o for o in SMOKE if not o.startswith(drop)]
    return [o for o in REDUCED if forget or not o.startswith("train.forget")]


class UnseenAblationExperiment(Experiment):
    name = "unseen-ablation"
    title = "Paper A ablation: same-symbol attention, copy heads and row interventions"
    suites = ("smoke", "quick")

    def runs(self, suite: str) -> list[RunSpec]:
        reduced = [
            RunSpec(_slug(v), recipe, _reduced(suite, recipe) + extra)
            for v, (recipe, extra) in VARIANTS.items()
        ]
        return reduced + method_runs(suite)

    def analyze(self, suite: str, run_dirs: dict[str, Path], figure_dir: Path) -> Section:
        reduced = {v: run_dirs[_slug(v)] for v in VARIANTS}
        quick = {r.name.removeprefix("unseen-"): run_dirs[r.name] for r in method_runs(suite)}
        tables = [
            self._table(reduced, "Reduced task (one proof step, 3-4 rules), seed 0."),
            self._table(quick, "The quick task: every run of the unseen-symbols experiment ('-ss': + β)."),
        ]
        figures = []
        for label, runs in (("reduced", reduced), ("quick", quick)):
            records = {name: read_metrics(d) for name, d in runs.items()}
            for scenario in ("all_seen", "all_unseen"):
                figures.append(
                    line_figure(
                        figure_dir / f"unseen_ablation_{label}_{scenario}.png",
                        {n: curve(r, f"eval/{scenario}/exact_match") for n, r in records.items()},
                        "training step",
                        "exact match",
                        f"{label} task: {scenario} exact match during training",
                        ylim=(-0.02, 1.02),
                    )
                )
        text = [
            "β: the same-symbol attention term (model.identity_bias=3.0) read on the symbols' rows "
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
