"""The claim the theory experiment judges: A7.7 (SPEC A5, Lemma 4.1)."""

from __future__ import annotations

from symgen.experiments.claims import Statement

A77 = Statement(
    "A7.7",
    "Under (S)GD with weight decay the measured contraction of unseen rows stays within the bound of "
    "Lemma 4.1 (an upper bound: a rate at or below 1 − η(λ − r²p) agrees; tightness is not claimed); "
    "the sign flips when ηλ > 1.",
    "Lemma 4.1: ‖Δ⁺‖ ≤ (|1 − ηλ| + ηr²p)‖Δ‖",
)

STATEMENTS = (A77,)
