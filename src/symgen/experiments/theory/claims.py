"""The claim the theory experiment judges: A7.7 (SPEC A5, Lemma 4.1)."""

from __future__ import annotations

from symgen.experiments.claims import Statement

A77 = Statement(
    "A7.7",
    "Under (S)GD with weight decay unseen rows contract within the bound, at the predicted rate; the "
    "sign flips when ηλ > 1.",
    "Lemma 4.1",
)

STATEMENTS = (A77,)
