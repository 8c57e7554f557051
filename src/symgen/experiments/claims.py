"""Claims and how they are judged: a claim is a sentence with parts, each part judged on each seed.

Each experiment states the claims it judges (`Statement`s, in its folder's claims.py) and, analysing
one seed's runs, returns a `Claim`: one `Part` per part of the sentence, each `pass`, `fail` or
`not judged` (the part could not be tested: an arm of its comparison never learned its own seen
task, a run or package is missing, the scale cannot test it; `measured` says why). The suite merges
a claim's seeds into a `ClaimResult` (what claims.json holds), whose verdict follows from its parts
alone:

- **reproduced**: every part passes on every seed;
- **not reproduced**: some part fails on every seed that judged it (a claim is its whole sentence);
- **partly reproduced**: neither: every judged part passes on at least one seed, and some part
  fails on some seed or could not be judged;
- **not judged**: no part could be judged on any seed;
- **not run**: no output measured the claim.

A part across seeds reads `pass` (every seed), `fail` (every seed that judged it), `mixed` (some
seeds pass, others fail or could not judge it) or `not judged` (no seed could).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

PASS, FAIL, NOT_JUDGED, MIXED = "pass", "fail", "not judged", "mixed"
OUTCOMES = (PASS, FAIL, NOT_JUDGED)  # a part at one seed
PART_OUTCOMES = (PASS, FAIL, MIXED, NOT_JUDGED)  # a part over every seed
VERDICTS = ("reproduced", "partly reproduced", "not reproduced", "not judged", "not run")
VERDICT_LEGEND = {
    "reproduced": "every part of the claim passes on every seed",
    "partly reproduced": "every judged part passes on at least one seed, but not every part on every seed",
    "not reproduced": "some part fails on every seed that judged it (a claim is its whole sentence)",
    "not judged": "no part could be judged: an arm of the comparison never learned its own seen task, "
    "or the output lacks the runs, package or scale the part needs (each part says which)",
    "not run": "no output measured the claim",
}


@dataclass
class Part:
    """One part of a claim's sentence at one seed. `text` is the part and its bar, stated before the
    run; `measured` holds the numbers beside the bar (or why the part could not be judged)."""

    text: str
    outcome: str
    measured: str = ""
    values: dict[str, Any] = field(default_factory=dict)
    noise: bool = False  # the 95 % interval of a number it judges crosses its bar: "within noise"

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise ValueError(f"part outcome {self.outcome!r} not in {OUTCOMES}")


def judge(
    text: str, ok: bool, measured: str, values: dict[str, Any] | None = None, noise: bool = False
) -> Part:
    """A judged part; `noise`: a number it judges has a 95 % interval that crosses the part's bar, so
    the outcome is marked "within noise" beside it (it stands, but n cannot tell which side holds)."""
    return Part(
        text, PASS if ok else FAIL, measured + ("; within noise" if noise else ""), values or {}, noise
    )


def not_judged(text: str, why: str, values: dict[str, Any] | None = None) -> Part:
    return Part(text, NOT_JUDGED, why, values or {})


def left_out(text: str, names: Iterable[str], values: dict[str, Any] | None = None) -> Part | None:
    """A part over a group of runs while some of the group are absent from the output (`--runs` left
    them out): `not judged`, naming them, since the runs present cannot stand for the whole group.
    None when the group is whole."""
    names = sorted(names)
    if not names:
        return None
    return not_judged(
        text, f"runs of its group that --runs left out of this analysis: {', '.join(names)}", values
    )


def unlearned(arms: dict[str, float], bar: float, what: str) -> str:
    """Why a comparison cannot be judged: the arms below the bar on their own seen task ("" when every
    arm learned). A control that never learned is no evidence."""
    below = [f"{name} {_shown(value)}" for name, value in arms.items() if not value >= bar]
    if not below:
        return ""
    return f"not learned: {', '.join(below)} < {bar:g} ({what})"


def _shown(value: float) -> str:
    """A count (a learnable depth) as an integer, an accuracy to three decimals."""
    return (
        f"{value:.0f}"
        if isinstance(value, int) or float(value).is_integer() and value > 1
        else f"{value:.3f}"
    )


@dataclass(frozen=True)
class Statement:
    """A claim as stated before any run: its id (SPEC A7, B5, C), sentence, and the paper's value."""

    id: str
    text: str
    paper: str

    def check(self, parts: list[Part], evidence: list[str] | None = None, note: str = "") -> Claim:
        """This claim as one analysis (one seed's runs) judged it, part by part."""
        return Claim(self.id, self.text, self.paper, list(parts), list(evidence or []), note)

    def not_run(self) -> ClaimResult:
        return ClaimResult(self.id, self.text, self.paper)


@dataclass
class Claim:
    """A claim judged on one seed's runs."""

    id: str
    claim: str
    paper: str
    parts: list[Part]
    evidence: list[str] = field(default_factory=list)
    note: str = ""  # what the analysis adds beside the parts (a diagnostic view, a count)

    @property
    def verdict(self) -> str:
        return verdict_of_parts([[p.outcome] for p in self.parts])

    @property
    def measured(self) -> str:
        return "; ".join(
            f"{p.text}: {p.outcome} ({p.measured})" if p.measured else p.text for p in self.parts
        )


@dataclass
class JudgedPart:
    """A part over every seed: each seed's outcome, measurement and values, keyed by seed."""

    text: str
    outcome: str
    outcomes: dict[str, str]
    measured: dict[str, str]
    values: dict[str, dict[str, Any]]
    summary: dict[str, dict[str, float]] = field(default_factory=dict)  # mean/min/max of each number
    noise: dict[str, bool] = field(default_factory=dict)  # seeds whose outcome is within noise


@dataclass
class ClaimResult:
    """A claim over every seed of one output: what claims.json holds."""

    id: str
    claim: str
    paper: str
    verdict: str = "not run"
    parts: list[JudgedPart] = field(default_factory=list)
    seeds: list[int] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    notes: dict[str, str] = field(default_factory=dict)  # per seed
    source: dict[str, Any] = field(default_factory=dict)  # the output that measured it (merged reports)

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict {self.verdict!r} not in {VERDICTS}")

    @property
    def measured(self) -> str:
        """One line: each part's outcome and, per seed, its numbers."""
        out = []
        for p in self.parts:
            per_seed = "; ".join(f"seed {s}: {m}" for s, m in p.measured.items() if m)
            out.append(f"{p.text}: {p.outcome}" + (f" ({per_seed})" if per_seed else ""))
        return " | ".join(out)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["measured"] = self.measured
        if not out["source"]:
            del out["source"]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ClaimResult:
        """A claim as claims.json holds it, its verdict derived anew from its parts: a file written under
        an earlier verdict rule reads under today's."""
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        known["parts"] = [JudgedPart(**p) for p in data.get("parts", [])]
        if known["parts"]:
            known["verdict"] = verdict_of_parts([list(p.outcomes.values()) for p in known["parts"]])
        return cls(**known)


def part_outcome(outcomes: list[str]) -> str:
    """A part over seeds: pass on every seed, fail on every seed that judged it, mixed, or not judged."""
    judged = [o for o in outcomes if o != NOT_JUDGED]
    if not judged:
        return NOT_JUDGED
    if all(o == PASS for o in outcomes):
        return PASS
    if all(o == FAIL for o in judged):
        return FAIL
    return MIXED


def verdict_of_parts(outcomes_by_part: list[list[str]]) -> str:
    """The verdict from every part's outcome at every seed (the rule in the module docstring)."""
    every = [o for outcomes in outcomes_by_part for o in outcomes]
    if not every:
        return "not run"
    if all(o == NOT_JUDGED for o in every):
        return "not judged"
    if all(o == PASS for o in every):
        return "reproduced"
    if any(part_outcome(outcomes) == FAIL for outcomes in outcomes_by_part):
        return "not reproduced"
    return "partly reproduced"


def merge_seeds(per_seed: dict[int, Claim]) -> ClaimResult:
    """One result from a claim's checks at several seeds (one seed too): parts matched by their text;
    a seed that lacks a part counts it `not judged`."""
    seeds = sorted(per_seed)
    first = per_seed[seeds[0]]
    texts = list(dict.fromkeys(p.text for s in seeds for p in per_seed[s].parts))
    parts = []
    for text in texts:
        at = {str(s): next((p for p in per_seed[s].parts if p.text == text), None) for s in seeds}
        outcomes = {s: p.outcome if p else NOT_JUDGED for s, p in at.items()}
        measured = {s: p.measured if p else "the part is missing at this seed" for s, p in at.items()}
        values = {s: p.values if p else {} for s, p in at.items()}
        summary = numeric_summary(list(values.values())) if len(seeds) > 1 else {}
        noise = {s: True for s, p in at.items() if p and p.noise}
        outcome = part_outcome(list(outcomes.values()))
        parts.append(JudgedPart(text, outcome, outcomes, measured, values, summary, noise))
    verdict = verdict_of_parts([list(p.outcomes.values()) for p in parts])
    evidence = list(dict.fromkeys(e for s in seeds for e in per_seed[s].evidence))
    notes = {str(s): per_seed[s].note for s in seeds if per_seed[s].note}
    return ClaimResult(first.id, first.claim, first.paper, verdict, parts, seeds, evidence, notes)


def _numbers(values: dict[str, Any], prefix: str = "") -> dict[str, float]:
    out: dict[str, float] = {}
    for key, value in values.items():
        if isinstance(value, dict):
            out |= _numbers(value, f"{prefix}{key}/")
        elif isinstance(value, int | float) and not isinstance(value, bool):
            out[f"{prefix}{key}"] = float(value)
    return out


def numeric_summary(per_seed_values: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Mean, min and max over seeds of every number all seeds report (nested keys joined by '/')."""
    flat = [_numbers(v) for v in per_seed_values]
    shared = set(flat[0]).intersection(*flat[1:]) if flat else set()
    return {
        key: {
            "mean": round(sum(f[key] for f in flat) / len(flat), 4),
            "min": min(f[key] for f in flat),
            "max": max(f[key] for f in flat),
        }
        for key in sorted(shared)
    }
