"""The claim of learnable depth: B5.3 (SPEC B5)."""

from __future__ import annotations

from symgen.experiments.claims import Statement

B53 = Statement(
    "B5.3",
    "Learnable depth grows with training R.",
    "R = 1→2, 2→6, 3→9, 4→10, 5→12, 6→13, 7→16, 8→16, dynamic → 22 hops",
)

STATEMENTS = (B53,)
