"""Grokking in three phases (paper B, §5): train accuracy rises first (memorization), held-out ID
accuracy later, OOD accuracy only once ID is near perfect.

A phase time is the first step (or training second) at which an accuracy curve reaches its
threshold and stays there for ``patience`` consecutive evaluations (single evaluations swing by
a few points at a constant learning rate). Read from a run's metrics.jsonl.
"""

from __future__ import annotations

from pathlib import Path

from symgen.analysis.plots import line_figure
from symgen.measures.metrics import curve, read_metrics

PHASES = {"train": "eval/train/accuracy", "id": "eval/id/accuracy", "ood": "eval/ood/accuracy"}
THRESHOLDS = {"train": 0.9, "id": 0.9, "ood": 0.5}  # OOD chains are capped by OOD atomic recall


def first_sustained(xs: list[float], ys: list[float], threshold: float, patience: int = 1) -> float | None:
    """The first x from which y stays >= threshold for `patience` consecutive points."""
    run = 0
    for i, y in enumerate(ys):
        run = run + 1 if y >= threshold else 0
        if run >= patience:
            return xs[i - patience + 1]
    return None


def phase_times(
    records: list[dict],
    thresholds: dict[str, float] | None = None,
    x: str = "step",
    patience: int = 1,
    keys: dict[str, str] | None = None,
) -> dict[str, float | None]:
    """{phase: first x at which its accuracy passes its threshold, or None}."""
    thresholds = THRESHOLDS | (thresholds or {})
    out: dict[str, float | None] = {}
    for phase, key in (keys or PHASES).items():
        xs, ys = curve(records, key, x)
        out[phase] = first_sustained(xs, ys, thresholds[phase], patience)
    return out


def in_order(times: dict[str, float | None], order: tuple[str, ...] = ("train", "id", "ood")) -> bool:
    """True when every phase happened and strictly in `order` (train < ID < OOD)."""
    values = [times.get(p) for p in order]
    if any(v is None for v in values):
        return False
    return all(a < b for a, b in zip(values, values[1:], strict=False))


def run_phases(run_dir: Path, **kwargs) -> dict[str, float | None]:
    return phase_times(read_metrics(run_dir), **kwargs)


def grokking_figure(
    path: Path,
    records: list[dict],
    title: str = "Grokking: train, ID and OOD accuracy",
    x: str = "step",
    thresholds: dict[str, float] | None = None,
    patience: int = 1,
) -> Path:
    """Train/ID/OOD accuracy against training steps, with each phase time marked."""
    series = {}
    for phase, key in PHASES.items():
        xs, ys = curve(records, key, x)
        if xs:
            series[f"{phase} accuracy"] = (xs, ys)
    times = phase_times(records, thresholds, x, patience)
    marks = {f"{phase} phase": t for phase, t in times.items() if t is not None}
    xlabel = "training steps" if x == "step" else "training seconds"
    return line_figure(path, series, xlabel, "accuracy", title, vlines=marks, ylim=(0, 1.02))
