"""Every experiment of symgen, in the report's order. Adding an experiment: its folder, and one
line here (docs/architecture.md)."""

from __future__ import annotations

import re
import textwrap

from symgen.errors import UserError
from symgen.experiments import plan
from symgen.experiments.claims import ClaimResult
from symgen.experiments.implicit_horn.experiment import ImplicitHornExperiment
from symgen.experiments.implicit_horn_ablation.experiment import ImplicitHornAblationExperiment
from symgen.experiments.kg_depth.experiment import KGDepthExperiment
from symgen.experiments.kg_inside.experiment import KGInsideExperiment
from symgen.experiments.kg_systematic.experiment import KGSystematicExperiment
from symgen.experiments.kg_systematic_ablation.experiment import KGSystematicAblationExperiment
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
    KGSystematicAblationExperiment,
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


def list_suite(suite: str, only: str | None, width: int = 110) -> str:
    """Each experiment of the suite (its name, a tab, its title) and its runs, each run once: its
    recipe, the named sets of runs.yaml it takes, in brackets, and its own overrides. A set's
    overrides are shown once, under the first experiment that uses it; a run an earlier experiment
    listed names that experiment instead of repeating its overrides."""
    lines: list[str] = []
    listed: dict[str, str] = {}  # run -> the experiment that listed it
    shown: dict[tuple[str, tuple[str, ...]], str] = {}  # a set (name, overrides) -> where it was shown
    for exp in select(suite, only):
        lines.append(f"{exp.name}\t{exp.title}")
        specs = plan.described(exp.folder(), suite)
        if not specs:
            lines.append("  no runs: it measures when the report is written")
            continue
        fresh = [spec for spec in specs if spec["name"] not in listed]
        sets = {(name, tuple(o)): name for spec in fresh for name, o in spec["sets"].items()}
        new = [key for key in sets if key not in shown]
        if new:
            lines.append("  sets:")
            pad = max(len(name) for name, _ in new) + 2
            for key in new:
                lines += _wrapped(key[0].ljust(pad) + " ".join(key[1]), "    ", " " * pad, width)
                shown[key] = exp.name
        above = [f"{name} ({shown[key]})" for key, name in sets.items() if shown[key] != exp.name]
        if above:
            lines += _wrapped("sets shown above: " + ", ".join(above), "  ", "    ", width)
        lines.append("  runs: recipe [sets] own overrides")
        pad = max(len(spec["name"]) for spec in specs) + 2
        for spec in specs:
            if spec["name"] in listed:
                lines.append(f"    {spec['name'].ljust(pad)}listed under {listed[spec['name']]}")
                continue
            listed[spec["name"]] = exp.name
            lines += _wrapped(spec["name"].ljust(pad) + _run_text(spec), "    ", " " * pad, width)
    return "\n".join(lines)


def _run_text(spec: dict) -> str:
    """A run as runs.yaml gives it: recipe, [sets], own overrides, then seeds, order and extension."""
    words = [spec["recipe"]]
    if spec["sets"]:
        words.append("[" + ", ".join(spec["sets"]) + "]")
    words += spec["set"]
    if spec["seeds"]:
        words.append(f"(seeds {','.join(map(str, spec['seeds']))})")
    if spec["after"]:
        words.append(f"(after {', '.join(spec['after'])})")
    if spec["extends"]:
        words.append(f"(extends {spec['extends']}: goes on from its last checkpoint)")
    if spec["label"]:
        words.append(f"(shown as {spec['label']!r})")
    return " ".join(words)


def _wrapped(text: str, indent: str, hanging: str, width: int) -> list[str]:
    """`text` wrapped at `width`, its first line indented by `indent`, the others by that and `hanging`."""
    return textwrap.wrap(
        text,
        width,
        initial_indent=indent,
        subsequent_indent=indent + hanging,
        break_long_words=False,
        break_on_hyphens=False,
    )
