"""Every experiment of symgen, in the report's order. Adding an experiment: its folder, and one
line here (docs/architecture.md)."""

from __future__ import annotations

import re

from symgen.errors import UserError
from symgen.experiments.claims import ClaimResult
from symgen.experiments.implicit_horn.experiment import ImplicitHornExperiment
from symgen.experiments.implicit_horn_ablation.experiment import ImplicitHornAblationExperiment
from symgen.experiments.kg_depth.experiment import KGDepthExperiment
from symgen.experiments.kg_inside.experiment import KGInsideExperiment
from symgen.experiments.kg_systematic.experiment import KGSystematicExperiment
from symgen.experiments.reverse.experiment import ReverseExperiment
from symgen.experiments.speed.experiment import SpeedExperiment
from symgen.experiments.theory.experiment import TheoryExperiment
from symgen.experiments.transfer.experiment import TransferExperiment
from symgen.experiments.types import SUITES, Experiment
from symgen.experiments.unseen.experiment import UnseenSymbolsExperiment
from symgen.experiments.unseen_ablation.experiment import UnseenAblationExperiment
from symgen.experiments.unseen_mid.experiment import UnseenMidExperiment

EXPERIMENTS: tuple[type[Experiment], ...] = (
    ReverseExperiment,
    UnseenSymbolsExperiment,
    UnseenAblationExperiment,
    UnseenMidExperiment,
    TheoryExperiment,
    TransferExperiment,
    KGSystematicExperiment,
    KGDepthExperiment,
    KGInsideExperiment,
    ImplicitHornExperiment,
    ImplicitHornAblationExperiment,
    SpeedExperiment,
)


def experiments() -> list[Experiment]:
    return [cls() for cls in EXPERIMENTS]


def select(suite: str, only: str | None) -> list[Experiment]:
    if suite not in SUITES:
        raise UserError(f"--suite {suite!r}: allowed are {', '.join(SUITES)}")
    chosen = [e for e in experiments() if suite in e.suites]
    if only:
        names = [n.strip() for n in only.split(",") if n.strip()]
        known = {e.name for e in chosen}
        unknown = [n for n in names if n not in known]
        if unknown:
            raise UserError(
                f"--only {unknown[0]!r}: experiments of suite {suite} are {', '.join(sorted(known))}"
            )
        chosen = [e for e in chosen if e.name in names]
    return chosen


def claim_order(cid: str) -> tuple:
    """A7.1, A7.1β, A7.2, …, A7.1 (mid), …, B5.1, …, C1: by part, then scale (the claims judged at
    another scale after the suite's own), number, the β variant after its claim."""
    match = re.fullmatch(r"([A-Z])(\d+)(?:\.(\d+))?(β?)(?: \((\w+)\))?", cid)
    if match is None:
        return (cid,)
    part, major, minor, beta, scale = match.groups()
    return (part, scale or "", int(major), int(minor or 0), beta)


def default_claims() -> dict[str, ClaimResult]:
    """Every claim some experiment states, `not run` until judged."""
    statements = [s for exp in experiments() for s in exp.statements]
    return {s.id: s.not_run() for s in sorted(statements, key=lambda s: claim_order(s.id))}


def measured_by(cid: str) -> str:
    """The experiment that judges claim `cid` (what `--only` takes to measure it)."""
    return next((exp.name for exp in experiments() for s in exp.statements if s.id == cid), "")
