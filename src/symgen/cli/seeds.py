"""`--seeds` lists: parsed where the command line is read."""

from __future__ import annotations

from symgen.errors import UserError


def parse_seeds(text: str) -> list[int]:
    """`--seeds 0,1,2`: distinct non-negative integers."""
    try:
        seeds = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UserError(f"--seeds {text!r}: give comma-separated integers, e.g. --seeds 0,1,2") from None
    if not seeds:
        raise UserError("--seeds is empty: give at least one seed, e.g. --seeds 0,1")
    if any(s < 0 for s in seeds):
        raise UserError(f"--seeds {text!r}: seeds must be >= 0")
    if len(set(seeds)) != len(seeds):
        raise UserError(f"--seeds {text!r}: a seed is repeated")
    return seeds
