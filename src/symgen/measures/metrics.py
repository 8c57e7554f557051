"""Reading a run's metrics.jsonl back: curves and first-crossing times; a rank correlation."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np


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


def rank_correlation(x: list[float], y: list[float]) -> float:
    """Spearman's rank correlation, ties sharing their mean rank; 0 when either side is constant."""

    def ranks(v: list[float]) -> np.ndarray:
        a = np.asarray(v, dtype=float)
        r = np.empty(len(a))
        r[a.argsort(kind="stable")] = np.arange(len(a))
        for value in np.unique(a):
            r[a == value] = r[a == value].mean()
        return r

    rx, ry = ranks(x), ranks(y)
    if rx.std() == 0 or ry.std() == 0:
        return 0.0
    return float(np.corrcoef(rx, ry)[0, 1])
