"""The claims the reproduction checks: every id of SPEC A7 and B5, `not run` until an experiment
fills it with a measured value and a verdict."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

# partly reproduced: some part of the claim, or some seed, fails (the measured text names which);
# not judged: the run behind the claim never learned its task, so its numbers cannot test the claim
VERDICTS = ("reproduced", "partly reproduced", "not reproduced", "not judged", "not run")


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


PAPER_CLAIMS: dict[str, tuple[str, str]] = {
    "A7.1": (
        "A standard transformer is near-perfect on all_seen and fails on all_unseen.",
        "≈100% all_seen, ≈0% all_unseen",
    ),
    "A7.2": ("Copy attention + high diversity helps query_unseen but still fails all_unseen.", "qualitative"),
    "A7.3": (
        "Copy attention + frozen or actively forgotten embeddings solves all_unseen.",
        "≈100% all_unseen",
    ),
    "A7.4": ("Temporary active forgetting holds only with copy attention.", "qualitative"),
    "A7.5": (
        "Unseen unembeddings collapse under weight decay (cosine → 1), not when frozen.",
        "cosine ≈ 1 vs ≈ 0",
    ),
    "A7.1β": (
        "Same-symbol variant: the standard transformer + β (learned rows, weight decay) is near-perfect on "
        "all_seen and still fails on all_unseen.",
        "A7.1 (the term must not fix collapsed rows)",
    ),
    "A7.2β": (
        "Same-symbol variant: copy attention + β helps query_unseen but still fails all_unseen.",
        "A7.2",
    ),
    "A7.3β": (
        "Same-symbol variant: copy attention + β with frozen or actively forgotten symbol rows solves "
        "all_unseen, in every seed.",
        "A7.3, ≈100% all_unseen",
    ),
    "A7.4β": ("Same-symbol variant: temporary active forgetting holds only with copy attention.", "A7.4"),
    "A7.6": (
        "Reserved rows of a real model are collapsed; fine-tuning from them is several times slower.",
        "Gemma 3 1B mean cosine 0.78; ~5000 vs ~500 steps to 90%",
    ),
    "A7.7": (
        "Under (S)GD with weight decay unseen rows contract within the bound, at the predicted rate; "
        "the sign flips when ηλ > 1.",
        "Lemma 4.1",
    ),
    "B5.1": (
        "Looped models generalize systematically (OOD 2-hop); vanilla models do not.",
        "OOD ≈ 0.75–0.8 for R = 2/4/8, ≈ 0 vanilla; R = 4 in ~2k epochs, R = 2 in ~7k",
    ),
    "B5.2": (
        "Train, ID and OOD accuracy rise in three phases; after grokking the bridge entity is decodable "
        "at the r1 position; vanilla never decodes the OOD second hop.",
        "three phases in order",
    ),
    "B5.3": (
        "Learnable depth grows with training R.",
        "R = 1→2, 2→6, 3→9, 4→10, 5→12, 6→13, 7→16, 8→16, dynamic → 22 hops",
    ),
    "B5.4": (
        "More inference iterations extend depth beyond the learnable depth, only for R > 4.",
        "R = 6: 13→17 hops; R = 8: 16→24",
    ),
    "B5.5": (
        "Logit margins peak then decay with iterations; the dynamic model decays more slowly.",
        "qualitative",
    ),
    "B5.6": (
        "Halting on KL + entropy beats KL-only at similar cost and tracks the needed depth.",
        "qualitative",
    ),
    "C1": (
        "Beyond both papers (SPEC C.1), stated before measured: on Horn problems without a chain of "
        "thought, a looped model answers deeper proofs than it was trained on when given more "
        "iterations, and a vanilla model of equal parameters does not.",
        "new question",
    ),
    "C2": (
        "Beyond both papers: without a chain of thought, with frozen symbol rows and same-symbol "
        "attention, all_unseen accuracy stays within 10 points of all_seen at every trained depth, "
        "while learned rows under weight decay fall to chance on all_unseen.",
        "new question",
    ),
    "C3": (
        "Beyond both papers: on implicit Horn problems, adaptive halting (KL + entropy) spends more "
        "iterations on deeper proofs.",
        "new question",
    ),
}


def default_claims() -> dict[str, Claim]:
    return {cid: Claim(cid, text, paper) for cid, (text, paper) in PAPER_CLAIMS.items()}


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


def parts_claim(cid: str, parts: dict[str, bool | None], evidence: list[str]) -> Claim:
    """A claim checked part by part against its sentence, each part named with its outcome: `yes`,
    `no`, or `not judged` (None: the suite lacks the runs the part needs, or the part is not tested
    at this scale; the part's text says why). The verdict comes from the judged parts alone, and
    is `not judged` when none is."""
    text, paper = PAPER_CLAIMS[cid]
    outcome = {True: "yes", False: "no", None: "not judged"}
    measured = "; ".join(f"{p}: {outcome[ok]}" for p, ok in parts.items())
    judged = {p: ok for p, ok in parts.items() if ok is not None}
    verdict = verdict_of(judged)[0] if judged else "not judged"
    return Claim(cid, text, paper, measured, verdict, evidence)


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
