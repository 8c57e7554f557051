"""One report section from an experiment analysed once per seed (`reproduce --seeds 0-2`): tables of
the same shape merge cell by cell (a number that differs between seeds reads mean [min–max]; other
differing cells list each seed's value), paragraphs that agree appear once, and every seed's
figures appear side by side, each captioned with its seed."""

from __future__ import annotations

from symgen.experiments.types import Section, Table


def combine_sections(by_seed: dict[int, Section]) -> Section:
    """One section from the same experiment's sections at several seeds (in seed order)."""
    seeds = sorted(by_seed)
    if len(seeds) == 1:
        return by_seed[seeds[0]]
    sections = [by_seed[s] for s in seeds]
    first = sections[0]
    out = Section(first.title, claims=[c for s in sections for c in s.claims])
    out.paragraphs = _paragraphs(seeds, [s.paragraphs for s in sections])
    out.tables = _tables(seeds, [s.tables for s in sections])
    out.figures, out.figure_notes = _figures(seeds, [s.figures for s in sections])
    return out


def _paragraphs(seeds: list[int], per_seed: list[list[str]]) -> list[str]:
    if all(p == per_seed[0] for p in per_seed):
        return list(per_seed[0])
    if any(len(p) != len(per_seed[0]) for p in per_seed):
        return [f"Seed {s}: {p}" for s, ps in zip(seeds, per_seed, strict=True) for p in ps]
    out = []
    for same_place in zip(*per_seed, strict=True):
        if all(p == same_place[0] for p in same_place):
            out.append(same_place[0])
        else:
            out += [f"Seed {s}: {p}" for s, p in zip(seeds, same_place, strict=True)]
    return out


def _tables(seeds: list[int], per_seed: list[list[Table]]) -> list[Table]:
    """Tables at the same place merge when their headers and row counts agree; others stay per seed."""
    if any(len(t) != len(per_seed[0]) for t in per_seed):
        return [_seed_table(s, t) for s, ts in zip(seeds, per_seed, strict=True) for t in ts]
    out = []
    for same_place in zip(*per_seed, strict=True):
        first = same_place[0]
        if any(t.headers != first.headers or len(t.rows) != len(first.rows) for t in same_place):
            out += [_seed_table(s, t) for s, t in zip(seeds, same_place, strict=True)]
            continue
        rows = [
            [merge_cells(list(cells)) for cells in zip(*same_rows, strict=True)]
            for same_rows in zip(*(t.rows for t in same_place), strict=True)
        ]
        caption = first.caption if all(t.caption == first.caption for t in same_place) else ""
        note = (
            f"Seeds {', '.join(map(str, seeds))}: a number that differs between seeds reads mean "
            "[min–max]; another cell that differs lists each seed's value (seed "
            + " / ".join(map(str, seeds))
            + ")."
        )
        out.append(Table(list(first.headers), rows, f"{caption} {note}".strip()))
    return out


def _seed_table(seed: int, table: Table) -> Table:
    return Table(table.headers, table.rows, f"Seed {seed}. {table.caption}".strip())


def _figures(seeds: list[int], per_seed: list[list]) -> tuple[list, dict[str, str]]:
    """Every seed's figures, the same figure of each seed side by side, captioned with the seed."""
    order: dict[str, list] = {}
    notes = {}
    for seed, figures in zip(seeds, per_seed, strict=True):
        for path in figures:
            order.setdefault(path.name, []).append(path)
            notes[str(path)] = f"seed {seed}"
    return [p for paths in order.values() for p in paths], notes


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def merge_cells(cells: list[object]) -> object:
    """One table cell from its value at every seed: the value when all agree; mean [min–max] when all
    are numbers; otherwise each seed's value, in seed order, joined by ' / '."""
    if all(c == cells[0] for c in cells):
        return cells[0]
    numbers = [_number(c) for c in cells]
    if all(n is not None for n in numbers):
        whole = all(n.is_integer() for n in numbers)
        mean = sum(numbers) / len(numbers)
        return f"{_show(mean, whole)} [{_show(min(numbers), whole)}–{_show(max(numbers), whole)}]"
    return " / ".join(f"{c:.3f}" if isinstance(c, float) else str(c) for c in cells)


def _show(value: float, whole: bool) -> str:
    """Counts (steps, hops) as integers, a mean of them to one decimal; other numbers to three."""
    if not whole:
        return f"{value:.3f}"
    return f"{value:.0f}" if value.is_integer() else f"{value:.1f}"
