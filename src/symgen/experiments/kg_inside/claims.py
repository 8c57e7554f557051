"""The claims read inside the looped models: B5.2 and B5.4–B5.6 (SPEC B5)."""

from __future__ import annotations

from symgen.experiments.claims import Statement

B52 = Statement(
    "B5.2",
    "Train, ID and OOD accuracy rise in three phases; after grokking the bridge entity is decodable "
    "at the r1 position; vanilla never decodes the OOD second hop.",
    "three phases in order",
)

B54 = Statement(
    "B5.4",
    "More inference iterations extend depth beyond the learnable depth, only for R > 4.",
    "R = 6: 13→17 hops; R = 8: 16→24",
)

B55 = Statement(
    "B5.5",
    "Logit margins peak then decay with iterations; the dynamic model decays more slowly.",
    "qualitative",
)

B56 = Statement(
    "B5.6",
    "Halting on KL + entropy beats KL-only at similar cost and tracks the needed depth.",
    "qualitative",
)

STATEMENTS = (
    B52,
    B54,
    B55,
    B56,
)
