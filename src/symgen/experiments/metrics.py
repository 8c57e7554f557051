"""Reading a run's metrics.jsonl back: curves and first-crossing times."""

from __future__ import annotations

import json
from pathlib import Path


def read_metrics(run_dir: Path) -> list[dict]:
    path = Path(run_dir) / "metrics.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def curve(records: list[dict], key: str, x: str = "step") -> tuple[list[float], list[float]]:
    rows = [r for r in records if key in r]
    return [r[x] for r in rows], [r[key] for r in rows]


def first_crossing(records: list[dict], key: str, threshold: float, x: str = "step") -> float | None:
    """The first x at which `key` reaches `threshold`, or None if it never does."""
    for r in records:
        if key in r and r[key] >= threshold:
            return r[x]
    return None
