"""`--seeds` lists: parsed where the command line is read."""

from __future__ import annotations

from symgen.errors import UserError


def parse_seeds(text: str, option: str = "--seeds", example: str = "0,1,2", least: int = 0) -> list[int]:
    """`--seeds 0,1,2`: distinct integers >= `least`; `option` and `example` name the option in errors
    (`--stack 1,4,16` takes the same list of seed counts)."""
    try:
        seeds = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UserError(
            f"{option} {text!r}: give comma-separated integers, e.g. {option} {example}"
        ) from None
    if not seeds:
        raise UserError(f"{option} is empty: give at least one value, e.g. {option} {example}")
    if any(s < least for s in seeds):
        raise UserError(f"{option} {text!r}: every value must be >= {least}")
    if len(set(seeds)) != len(seeds):
        raise UserError(f"{option} {text!r}: a value is repeated")
    return seeds


def suite_seeds(text: str | None) -> int | tuple[int, ...] | None:
    """`reproduce --seeds`: N (seeds 0..N-1), or a comma-separated list of seeds."""
    if text is None:
        return None
    if "," not in text:
        try:
            return int(text)
        except ValueError:
            raise UserError(f"--seeds {text!r}: give a count (3) or comma-separated seeds (4,5,6)") from None
    return tuple(parse_seeds(text))
