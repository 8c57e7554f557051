"""An experiment's runs per suite, read from the `runs.yaml` in its folder.

    sets:                      # named lists of overrides (also: experiments/sets.yaml, shared)
      small: [model.d_model=32, train.steps=40]
    suites:
      smoke:
        - {run: reverse, recipe: reverse, with: [small], set: [task.n_test=64]}
      quick:
        - {run: reverse, recipe: reverse}
        - {include: kg_systematic}   # every run another experiment's folder lists for this suite
        - {include: kg_depth, runs: [kg-depth-r4]}   # only the runs named, as that folder lists them
      paper: quick               # the same runs as another suite

A run's overrides are its sets in order, then its own `set` (a key given twice keeps its last value,
at its first place). `seeds: [0, 1]` trains the run at its own seeds as one stacked model; `after`
names runs trained first; `label` is the name tables show (default: the run's name); `extends: RUN`
continues a finished run of the suite under this run's config (a larger step or compute budget: the
run goes on from RUN's last checkpoint instead of training again from step 0). Runs appear in the order listed
(the longest first lets two jobs end together).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml

from symgen.config import yaml_error
from symgen.errors import UserError

PLAN = "runs.yaml"
SHARED = Path(__file__).parent / "sets.yaml"
RUN_KEYS = {"run", "recipe", "label", "with", "set", "after", "seeds", "extends"}
INCLUDE_KEYS = {"include", "runs"}


@cache
def _read(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as e:
        raise UserError(f"{path} is not valid YAML: {yaml_error(e)}") from None
    if not isinstance(data, dict):
        raise UserError(f"{path} must be a YAML mapping")
    return data


def runs(folder: Path, suite: str) -> list[dict[str, Any]]:
    """The runs `folder/runs.yaml` lists for `suite`, as RunSpec keyword arguments."""
    return [_run(entry, sets, path) for entry, sets, path in _entries(folder, suite)]


def described(folder: Path, suite: str) -> list[dict[str, Any]]:
    """The runs of `runs` as runs.yaml writes them, for reading (`reproduce --list`): each run's
    name, recipe, its sets by name with their overrides, its own overrides, and its other keys."""
    out = []
    for entry, sets, path in _entries(folder, suite):
        spec = _run(entry, sets, path)  # refuses a bad entry as `runs` does
        spec["sets"] = {name: list(sets[name]) for name in entry.get("with", [])}
        spec["set"] = list(entry.get("set", []))
        out.append(spec)
    return out


def _entries(folder: Path, suite: str) -> list[tuple[dict[str, Any], dict[str, list[str]], Path]]:
    """The run entries of `folder/runs.yaml` for `suite` (includes followed), each with the sets it may
    name and the file it comes from."""
    path = folder / PLAN
    if not path.exists():
        return []
    data = _read(path)
    sets = _read(SHARED).get("sets", {}) | data.get("sets", {})
    suites = data.get("suites", {})
    entries = suites.get(suite, [])
    seen = {suite}
    while isinstance(entries, str):  # `paper: quick`
        if entries in seen or entries not in suites:
            raise UserError(f"{path}: suite {suite} refers to {entries!r}, which lists no runs")
        seen.add(entries)
        entries = suites[entries]
    out: list[tuple[dict[str, Any], dict[str, list[str]], Path]] = []
    for entry in entries:
        if "include" in entry:
            out += _included(entry, folder, suite, path)
        else:
            out.append((entry, sets, path))
    return out


def _included(
    entry: dict[str, Any], folder: Path, suite: str, path: Path
) -> list[tuple[dict[str, Any], dict[str, list[str]], Path]]:
    """The runs an `include` entry takes from another folder: all of them, or those its `runs` names
    (a run listed beside another experiment's stays that experiment's own spec, not a copy)."""
    unknown = set(entry) - INCLUDE_KEYS
    if unknown:
        raise UserError(
            f"{path}: include {entry!r}: unknown keys {sorted(unknown)} (allowed {sorted(INCLUDE_KEYS)})"
        )
    entries = _entries(folder.parent / entry["include"], suite)
    if "runs" not in entry:
        return entries
    wanted = entry["runs"]
    if not isinstance(wanted, list) or not wanted or not all(isinstance(n, str) for n in wanted):
        raise UserError(f"{path}: include {entry['include']}: runs must be a non-empty list of run names")
    if len(set(wanted)) < len(wanted):
        raise UserError(f"{path}: include {entry['include']} names a run twice: {wanted}")
    named = {e["run"]: (e, sets, where) for e, sets, where in entries if "run" in e}
    missing = [name for name in wanted if name not in named]
    if missing:
        raise UserError(
            f"{path}: include {entry['include']} names runs its {suite} suite lacks: {', '.join(missing)} "
            f"(it has {', '.join(named) or 'none'})"
        )
    for name in wanted:  # a run trains after the runs it starts from: they come along by name only
        run = named[name][0]
        needed = [*run.get("after", []), *([run["extends"]] if run.get("extends") else [])]
        if left := [dep for dep in needed if dep not in wanted]:
            raise UserError(
                f"{path}: include {entry['include']} names run {name}, which starts from {left[0]}; "
                "name it too"
            )
    return [named[name] for name in wanted]


def _run(entry: dict[str, Any], sets: dict[str, list[str]], path: Path) -> dict[str, Any]:
    unknown = set(entry) - RUN_KEYS
    if unknown or "run" not in entry or "recipe" not in entry:
        raise UserError(f"{path}: run {entry!r} needs run: and recipe: (allowed keys {sorted(RUN_KEYS)})")
    overrides: list[str] = []
    for name in entry.get("with", []):
        if name not in sets:
            raise UserError(f"{path}: run {entry['run']} names no set {name!r}")
        overrides += sets[name]
    overrides += entry.get("set", [])
    return {
        "name": entry["run"],
        "recipe": entry["recipe"],
        "overrides": last_wins(overrides),
        "after": list(entry.get("after", [])),
        "seeds": tuple(entry.get("seeds", ())),
        "label": entry.get("label", ""),
        "extends": entry.get("extends", ""),
    }


def last_wins(overrides: list[str]) -> list[str]:
    """Overrides with each key once: its last value, at the place it first appeared."""
    by_key: dict[str, str] = {}
    for item in overrides:
        by_key[item.split("=", 1)[0]] = item
    return list(by_key.values())
