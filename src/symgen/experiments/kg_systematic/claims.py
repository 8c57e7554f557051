"""The claim of systematic composition: B5.1 (SPEC B5)."""

from __future__ import annotations

from symgen.experiments.claims import Statement

B51 = Statement(
    "B5.1",
    "Looped models generalize systematically (OOD 2-hop); vanilla models do not.",
    "OOD ≈ 0.75–0.8 for R = 2/4/8, ≈ 0 vanilla; R = 4 in ~2k epochs, R = 2 in ~7k",
)

STATEMENTS = (B51,)
