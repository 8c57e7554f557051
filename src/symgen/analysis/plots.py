"""Small matplotlib helpers (Agg backend, no display): every figure is a PNG file."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402


def save(fig: plt.Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def line_figure(
    path: Path,
    series: dict[str, tuple[Sequence[float], Sequence[float]]],
    xlabel: str,
    ylabel: str,
    title: str = "",
    vlines: dict[str, float] | None = None,
    ylim: tuple[float, float] | None = None,
) -> Path:
    """One panel of named (x, y) curves, with optional labelled vertical markers. Past eight curves
    the legend moves beside the panel, so it covers no curve."""
    many = len(series) > 8
    fig, ax = plt.subplots(figsize=(9.6 if many else 6.4, 3.8))
    for label, (x, y) in series.items():
        ax.plot(x, y, label=label, lw=1.6, marker="o" if len(x) <= 30 else None, ms=3)
    for label, x in (vlines or {}).items():
        ax.axvline(x, ls="--", lw=1, color="gray")
        ax.text(x, ax.get_ylim()[1], f" {label}", rotation=90, va="top", fontsize=8, color="gray")
    if all(float(v).is_integer() for x, _ in series.values() for v in x):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    xs = {float(v) for x, _ in series.values() for v in x}
    if len(xs) == 1:  # one x value: show it with room around, not an axis of 11.40-12.60
        (x0,) = xs
        ax.set_xlim(x0 - max(1.0, abs(x0) * 0.5), x0 + max(1.0, abs(x0) * 0.5))
        ax.set_xticks([x0])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if ylim:
        ax.set_ylim(*ylim)
    if title:
        ax.set_title(title)
    if many:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    elif len(series) > 1:
        ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return save(fig, path)


def histogram_figure(
    path: Path,
    panels: dict[str, dict[str, Sequence[float]]],
    xlabel: str,
    title: str = "",
    bins: int = 60,
) -> Path:
    """One panel per entry, each overlaying named distributions as density histograms."""
    fig, axes = plt.subplots(1, len(panels), figsize=(6.0 * len(panels), 3.8), squeeze=False)
    for ax, (name, series) in zip(axes[0], panels.items(), strict=True):
        for label, values in series.items():
            ax.hist(values, bins=bins, density=True, alpha=0.55, label=label)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("density")
        ax.set_title(name, fontsize=10)
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    if title:
        fig.suptitle(title)
    return save(fig, path)


def heatmap_figure(
    path: Path,
    grid: Sequence[Sequence[float]],
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    xlabel: str,
    ylabel: str,
    title: str = "",
    marks: dict[str, tuple[str, float]] | None = None,
) -> Path:
    """Values in [0, 1] on a grid (rows bottom to top), annotated; `marks` draws labelled lines:
    {label: ("v" | "h", position in cell units)}."""
    import numpy as np

    values = np.asarray(grid, dtype=float)
    fig, ax = plt.subplots(figsize=(1.0 + 0.55 * len(col_labels), 1.4 + 0.4 * len(row_labels)))
    im = ax.imshow(values, aspect="auto", vmin=0, vmax=1, cmap="viridis", origin="lower")
    for (i, j), v in np.ndenumerate(values):
        if not np.isnan(v):
            ax.text(
                j, i, f"{v:.2f}", ha="center", va="center", fontsize=7, color="white" if v < 0.6 else "black"
            )
    ax.set_xticks(range(len(col_labels)), col_labels)
    ax.set_yticks(range(len(row_labels)), row_labels)
    for label, (kind, at) in (marks or {}).items():
        line = ax.axvline if kind == "v" else ax.axhline
        line(at, color="red", ls="--", lw=1.2, label=label)
    if marks:
        ax.legend(fontsize=7, loc="upper right")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title, fontsize=9)
    fig.colorbar(im, ax=ax, label="accuracy")
    return save(fig, path)
