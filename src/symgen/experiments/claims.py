"""Claims and how they are judged. Each experiment states the claims it judges (`Statement`s, in its
folder's claims.py); the report lists every statement of every experiment, `not run` until an
experiment fills it with a measured value and a verdict."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

# partly reproduced: some part of the claim, or some seed, fails (the measured text names which);
# not judged: the run behind the claim never learned its task, so its numbers cannot test the claim
VERDICTS = ("reproduced", "partly reproduced", "not reproduced", "not judged", "not run")


@dataclass(frozen=True)
class Statement:
    """A claim as stated before any run: its id (SPEC A7, B5, C), sentence, and the paper's value."""

    id: str
    text: str
    paper: str

    def unjudged(self) -> Claim:
        return Claim(self.id, self.text, self.paper)

    def judged(
        self,
        measured: str,
        verdict: str,
        evidence: list[str] | None = None,
        values: dict[str, Any] | None = None,
    ) -> Claim:
        return Claim(self.id, self.text, self.paper, measured, verdict, list(evidence or []), values or {})


@dataclass
class Claim:
    id: str
    claim: str
    paper: str
    measured: str = ""
    verdict: str = "not run"
    evidence: list[str] = field(default_factory=list)
    values: dict[str, Any] = field(default_factory=dict)  # the numbers the verdict used (per seed: lists)

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict {self.verdict!r} not in {VERDICTS}")

    def to_dict(self) -> dict:
        return asdict(self)


def verdict_of(passed: dict[str, bool]) -> tuple[str, str]:
    """A verdict from one pass/fail per seed, per run and seed, or per part of a claim's sentence:
    `reproduced` when every one holds, `partly reproduced` naming those that fail, `not reproduced`
    when none holds."""
    failed = [name for name, ok in passed.items() if not ok]
    if not passed:
        return "not run", ""
    if not failed:
        return "reproduced", ""
    if len(failed) == len(passed):
        return "not reproduced", ""
    return "partly reproduced", f"fails in {', '.join(failed)}"


JUDGED = ("reproduced", "partly reproduced", "not reproduced")


def parts_claim(statement: Statement, parts: dict[str, bool | None], evidence: list[str]) -> Claim:
    """A claim checked part by part against its sentence, each part named with its outcome: `yes`,
    `no`, or `not judged` (None: the suite lacks the runs the part needs, or the part is not tested
    at this scale; the part's text says why). The verdict comes from the judged parts alone, and
    is `not judged` when none is."""
    outcome = {True: "yes", False: "no", None: "not judged"}
    measured = "; ".join(f"{p}: {outcome[ok]}" for p, ok in parts.items())
    judged = {p: ok for p, ok in parts.items() if ok is not None}
    verdict = verdict_of(judged)[0] if judged else "not judged"
    return statement.judged(measured, verdict, evidence)


def merge_seeds(per_seed: dict[int, Claim]) -> Claim:
    """One claim from its checks at several seeds: `reproduced` only when every seed reproduces it,
    `partly reproduced` naming the seeds that do not when some do, `not reproduced` when none does.
    `values` keeps every seed's values, their verdicts, and mean / min / max of each number."""
    if len(per_seed) == 1:
        return next(iter(per_seed.values()))
    seeds = sorted(per_seed)
    verdicts = {s: per_seed[s].verdict for s in seeds}
    judged = {s: v for s, v in verdicts.items() if v in JUDGED}
    note = ""
    if not judged:
        verdict = "not judged" if "not judged" in verdicts.values() else "not run"
    elif len(judged) == len(seeds) and all(v == "reproduced" for v in judged.values()):
        verdict = "reproduced"
    elif any(v != "not reproduced" for v in judged.values()):
        verdict = "partly reproduced"
        failing = [f"seed {s} ({verdicts[s]})" for s in seeds if verdicts[s] != "reproduced"]
        note = f" — not reproduced in {', '.join(failing)}"
    else:
        verdict = "not reproduced"
    first = per_seed[seeds[0]]
    measured = " | ".join(f"seed {s}: {per_seed[s].measured}" for s in seeds) + note
    evidence = list(dict.fromkeys(e for s in seeds for e in per_seed[s].evidence))
    values = {
        "per_seed": {str(s): per_seed[s].values for s in seeds},
        "verdicts": {str(s): verdicts[s] for s in seeds},
        "summary": numeric_summary([per_seed[s].values for s in seeds]),
    }
    return Claim(first.id, first.claim, first.paper, measured, verdict, evidence, values)


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
