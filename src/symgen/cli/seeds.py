"""`--seeds`: parsed where the command line is read, with one meaning in every command.

`--seeds` always names seeds, never a count: comma-separated integers, ranges `A-B` (both ends
included) or both, e.g. `0,1,2`, `0-2`, `0-2,7`. `reproduce` refuses a bare integer (`--seeds 3`),
which it once read as a count: written alone, a number there would look like a count and train one
seed."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from symgen.errors import UserError

if TYPE_CHECKING:
    from symgen.experiments.suite import Selection

_RANGE = re.compile(r"\s*(\d+)\s*-\s*(\d+)\s*")


def parse_seeds(text: str, option: str = "--seeds", example: str = "0,1,2", least: int = 0) -> list[int]:
    """`--seeds 0,1,2` or `--seeds 0-2` (ranges and single values may mix: `0-2,7`): distinct
    integers >= `least`; `option` and `example` name the option in errors (`--stack 1,4,16` takes
    the same list, of seed counts)."""
    seeds: list[int] = []
    for part in (p for p in text.split(",") if p.strip()):
        span = _RANGE.fullmatch(part)
        if span:
            first, last = int(span[1]), int(span[2])
            if last < first:
                raise UserError(
                    f"{option} {text!r}: the range {part.strip()} runs downward; write {last}-{first}"
                )
            seeds += range(first, last + 1)
            continue
        try:
            seeds.append(int(part))
        except ValueError:
            raise UserError(
                f"{option} {text!r}: give comma-separated integers, e.g. {option} {example}, or ranges (0-2)"
            ) from None
    if not seeds:
        raise UserError(f"{option} is empty: give at least one value, e.g. {option} {example}")
    if any(s < least for s in seeds):
        raise UserError(f"{option} {text!r}: every value must be >= {least}")
    if len(set(seeds)) != len(seeds):
        raise UserError(f"{option} {text!r}: a value is repeated")
    return seeds


def suite_seeds(text: str | None) -> tuple[int, ...] | None:
    """`reproduce --seeds`: the seeds every run trains (None: the suite's default). A bare integer
    is refused, saying how to write seeds 0..N-1 or that one seed."""
    if text is None:
        return None
    if text.strip().isdigit():
        n = int(text)
        count = f"--seeds 0-{n - 1} for the {n} seeds 0 to {n - 1}, " if n > 1 else ""
        count = "--seeds 0-0 for the one seed 0, " if n == 1 else count
        raise UserError(
            f"reproduce --seeds {text.strip()}: --seeds takes seeds, not a count: write {count}"
            f"--seeds {n}-{n} for seed {n} alone (a list: --seeds 0,1,2)"
        )
    return tuple(parse_seeds(text, example="0-2"))


def refuse_seed_override(overrides: tuple[str, ...], seeds: str) -> None:
    """`train ... seed=N --seeds LIST`: the override and the list disagree on what trains, so
    neither is chosen silently."""
    for item in overrides:
        key, _, value = item.partition("=")
        if key.strip() == "seed":
            raise UserError(
                f"{item} and --seeds {seeds} both set the seed: name every seed in --seeds alone "
                f"(e.g. --seeds {value.strip()})"
            )


def refuse_set_seed(sets: tuple[str, ...]) -> None:
    """`reproduce --set seed=N`: the seeds a suite trains are --seeds', which claims.json records;
    a seed set beside them would train another seed than the one recorded."""
    for item in sets:
        key, _, value = item.partition("=")
        if key.strip() == "seed":
            n = value.strip()
            raise UserError(
                f"reproduce --set {item}: the seeds come from --seeds, which claims.json records: write "
                f"--seeds {n}-{n}"
            )


def seed_plan(suite: str, only: str | None, selection: Selection, seeds: tuple[int, ...] | None) -> str:
    """What `reproduce --list` adds: the seeds each listed run trains and where its run directories
    go, under this invocation's --seeds (or the suite's default)."""
    from pathlib import Path

    from symgen.config import resolve
    from symgen.experiments.registry import select
    from symgen.experiments.suite import DEFAULT_SEEDS, seeded

    chosen = seeds if seeds is not None else tuple(range(DEFAULT_SEEDS[suite]))
    source = f"--seeds {text_of(chosen)}" if seeds is not None else f"the {suite} suite's default"
    groups: dict[tuple[tuple[int, ...], bool], list[str]] = {}
    for exp in select(suite, only):
        for run in seeded(selection.apply(exp.runs(suite)), chosen):
            own = run.seeds or (resolve(run.recipe, run.resolved_overrides(Path("runs"))).seed,)
            names = groups.setdefault((tuple(own), bool(run.seeds)), [])
            if run.name not in names:
                names.append(run.name)
    if not groups:
        return f"seeds ({source}): no run to train"

    def trains(own: tuple[int, ...], stacked: bool) -> str:
        which = (
            f"seed {own[0]}" if len(own) == 1 else f"seeds {', '.join(map(str, own))} as one stacked model"
        )
        folder = ("/seed-N" if len(own) > 1 else f"/seed-{own[0]}") if stacked else ""
        return f"{which}, in OUT/runs/RUN{folder}"

    if len(groups) == 1:
        ((own, stacked),) = groups
        return f"seeds ({source}): every run trains {trains(own, stacked)}"
    lines = [f"seeds ({source}):"]
    for (own, stacked), names in groups.items():
        lines.append(f"  {trains(own, stacked)}: {', '.join(names)}")
    return "\n".join(lines)


def text_of(seeds: tuple[int, ...]) -> str:
    """Seeds as --seeds takes them: a range when they run without a gap (0-2), else a list (3,5)."""
    if len(seeds) > 1 and list(seeds) == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}-{seeds[-1]}"
    return ",".join(map(str, seeds)) if len(seeds) > 1 else f"{seeds[0]}-{seeds[0]}"
