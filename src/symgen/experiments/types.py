"""What an experiment is: the runs it trains per suite, and the report section it makes of them.

An experiment lives in one folder of `symgen.experiments`: `runs.yaml` (its runs per suite, as data),
`experiment.py` (an `Experiment` subclass: analysis, tables, figures) and `claims.py` (the claims it
judges: each statement and its judge). The registry (`symgen.experiments.registry`) lists them.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from symgen.config import ExperimentConfig, resolve
from symgen.experiments import plan
from symgen.experiments.claims import Claim, Statement
from symgen.training.run_dir import is_finished, seed_dir

SUITES = ("smoke", "quick", "mid", "paper")


@dataclass
class RunSpec:
    """One training run of a suite. Overrides may name `{runs}`, the suite's run directory (a
    fine-tune's `train.init_from={runs}/pretrain`); runs listed in `after` are trained first."""

    name: str  # directory under OUT/runs/, unique in the suite
    recipe: str
    overrides: list[str] = field(default_factory=list)
    after: list[str] = field(default_factory=list)
    seeds: tuple[int, ...] = ()  # several seeds trained as one stacked model: OUT/runs/NAME/seed-N
    suite_seeds: bool = False  # seeds given by `reproduce --seeds`: the experiment is analysed per seed
    label: str = ""  # the name tables show (default: the run's name)
    extends: str = ""  # a finished run of the suite this one continues under a larger budget

    def resolved_overrides(self, run_root: Path) -> list[str]:
        return [o.replace("{runs}", str(run_root)) for o in self.overrides]

    def with_sets(self, sets: Sequence[str]) -> RunSpec:
        """This run under an invocation's `--set` overrides, which come after its own (the last wins)."""
        return replace(self, overrides=plan.last_wins([*self.overrides, *sets])) if sets else self

    def run_dirs(self, run_root: Path) -> list[Path]:
        """The ordinary run directories this spec trains (one per seed when stacked)."""
        if not self.seeds:
            return [run_root / self.name]
        return [seed_dir(run_root / self.name, s) for s in self.seeds]

    def finished(self, run_root: Path) -> bool:
        return all(is_finished(d) for d in self.run_dirs(run_root))


@dataclass(frozen=True)
class Link:
    """A table cell that links to a file of the output (a path relative to the report)."""

    text: str
    href: str


@dataclass
class Table:
    headers: list[str]
    rows: list[list[object]]
    caption: str = ""


@dataclass
class Section:
    title: str
    paragraphs: list[str] = field(default_factory=list)
    figures: list[Path] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)
    figure_notes: dict[str, str] = field(default_factory=dict)  # a caption per figure path (its seed)


class Experiment:
    name = "experiment"
    title = "Experiment"
    # the suites this experiment belongs to: a new suite (mid) holds only the experiments that list it
    suites: tuple[str, ...] = ("smoke", "quick", "paper")
    report_unasked = True  # reported whenever its runs are finished, also when --only leaves it out
    statements: tuple[Statement, ...] = ()  # the claims this experiment judges, in the report's order
    # the --set overrides of the invocation that analyses it (`reproduce` gives them): a run the
    # analysis lacks would have trained under them too
    invocation_sets: tuple[str, ...] = ()

    @classmethod
    def folder(cls) -> Path:
        """The experiment's folder: its runs.yaml lives there."""
        return Path(inspect.getfile(cls)).parent

    def runs(self, suite: str) -> list[RunSpec]:
        """The runs of `suite`, read from the folder's runs.yaml (none when it has no such file)."""
        return [RunSpec(**entry) for entry in plan.runs(self.folder(), suite)]

    def absent(self, suite: str, present: Iterable[str]) -> dict[str, ExperimentConfig]:
        """The suite's runs of this experiment that an analysis lacks (`--runs` left them out), with
        the configs they would train: a part over a group of runs (every fixed R, every looped run) is
        not judged while one of its group is absent, rather than judged over the runs present."""
        present = set(present)
        return {
            spec.name: resolve(
                spec.recipe, spec.with_sets(self.invocation_sets).resolved_overrides(Path("runs"))
            )
            for spec in self.runs(suite)
            if spec.name not in present
        }

    def analyze(self, suite: str, run_dirs: dict[str, Path], figure_dir: Path) -> Section:
        raise NotImplementedError
