"""The claim the reserved-token experiment judges: A7.6 (SPEC A6)."""

from __future__ import annotations

from symgen.experiments.claims import Statement

A76 = Statement(
    "A7.6",
    "Reserved rows of a real model are collapsed; fine-tuning from them is several times slower.",
    "Gemma 3 1B mean cosine 0.78; ~5000 vs ~500 steps to 90%",
)

STATEMENTS = (A76,)
