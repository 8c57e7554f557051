"""Beyond both papers (SPEC C.1): the claims C1–C3, stated before any of their runs."""

from __future__ import annotations

from symgen.experiments.claims import Statement

C1 = Statement(
    "C1",
    "Beyond both papers (SPEC C.1), stated before measured: on Horn problems without a chain of "
    "thought, a looped model answers deeper proofs than it was trained on when given more iterations, "
    "and a vanilla model of equal parameters does not.",
    "new question",
)

C2 = Statement(
    "C2",
    "Beyond both papers: without a chain of thought, with frozen symbol rows and same-symbol "
    "attention, all_unseen accuracy stays within 10 points of all_seen at every trained depth, while "
    "learned rows under weight decay fall to chance on all_unseen.",
    "new question",
)

C3 = Statement(
    "C3",
    "Beyond both papers: on implicit Horn problems, adaptive halting (KL + entropy) spends more "
    "iterations on deeper proofs.",
    "new question",
)

STATEMENTS = (
    C1,
    C2,
    C3,
)
