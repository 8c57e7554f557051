"""Small matplotlib helpers (Agg backend, no display): every figure is a PNG file, legible where the
report shows it.

The report shows each figure at 49 % of its 1300 px page, SHOWN_PX wide (never narrower, on a
narrower window, unless the window itself is), scaled down from the PNG's own width (never up). A
figure one panel wide is WIDTH inches (704 px at DPI), so its text is drawn at 90 % of its size;
`save` raises any text that would still be drawn smaller than MIN_TEXT_PX there. Curves differ in
colour and, past ten (the colour cycle's length), in line style and marker too; past four curves the
legend stands below the panel, off the data, and a smaller legend takes the panel's emptiest corner
(`loc="best"`). A figure saved under `stamped(TEXT)` (the suite's analysis: the experiment and its
seed) names TEXT in its title, unless its title names a seed already.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.text import Text  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

DPI = 110
SHOWN_PX = 637  # a figure's width in the report: 49 % of a 1300 px page
MIN_TEXT_PX = 10.0  # the smallest text a reader is asked to read there
WIDTH = 6.4  # inches: a figure of one panel, or of panels stacked in a column
COLOURS = plt.rcParams["axes.prop_cycle"].by_key()["color"]  # tab10: ten colours
STYLES = ("-", "--", ":", "-.")
MARKERS = ("o", "s", "^", "D")
LEGEND_BELOW = 4  # past this many curves the legend stands below the panel


def shown_scale(fig: plt.Figure) -> float:
    """How much the report shrinks `fig` (1: shown at its own size)."""
    return min(1.0, SHOWN_PX / (fig.get_figwidth() * DPI))


def text_px(fig: plt.Figure, points: float) -> float:
    """The height in report pixels of text of `points` in `fig`."""
    return points * DPI / 72 * shown_scale(fig)


def smallest_text_px(fig: plt.Figure) -> float:
    """The smallest visible text of `fig`, in report pixels."""
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    return text_px(fig, min(sizes)) if sizes else float("inf")


def legible(fig: plt.Figure) -> None:
    """Raise every text of `fig` that the report would draw below MIN_TEXT_PX to that size."""
    least = MIN_TEXT_PX * 72 / (DPI * shown_scale(fig))
    fig.canvas.draw()  # makes every text, tick labels included, that the saved figure will hold
    for text in fig.findobj(Text):
        if text.get_text().strip() and text.get_fontsize() < least:
            text.set_fontsize(least)


_STAMP: ContextVar[str] = ContextVar("figure_stamp", default="")


@contextlib.contextmanager
def stamped(text: str) -> Iterator[None]:
    """Every figure saved inside names `text` (what it shows: an experiment or run, and its seed) in its
    title, unless a title of the figure names a seed already."""
    token = _STAMP.set(text)
    try:
        yield
    finally:
        _STAMP.reset(token)


def stamp(fig: plt.Figure, text: str) -> None:
    """`text` in the figure's title: after its suptitle, or its one titled panel's title, or as a
    suptitle of its own; nothing when a title names a seed already."""
    titled = [ax for ax in fig.axes if ax.get_visible() and ax.get_title().strip()]
    titles = [fig.get_suptitle(), *(ax.get_title() for ax in titled)]
    if not text or any("seed" in t.lower() for t in titles):
        return
    if fig.get_suptitle().strip():
        fig.suptitle(f"{fig.get_suptitle()} ({text})", fontsize=10, wrap=True)
    elif len(titled) == 1:
        title = titled[0].title
        title.set_text(f"{title.get_text()} ({text})")
        title.set_wrap(True)
    else:
        fig.suptitle(text, fontsize=9, wrap=True)


def save(fig: plt.Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    stamp(fig, _STAMP.get())
    legible(fig)
    if fig.get_layout_engine() is None:
        fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def curve_style(index: int, markers: bool = True) -> dict[str, Any]:
    """The colour, line style and marker of the index-th curve: no two of the first 40 alike."""
    colour, rest = index % len(COLOURS), index // len(COLOURS)
    style = {"color": COLOURS[colour], "ls": STYLES[rest % len(STYLES)]}
    return style | ({"marker": MARKERS[rest % len(MARKERS)]} if markers else {})


def _columns(labels: Sequence[str], width: float, fontsize: float) -> int:
    """Legend columns that fit `width` inches, from the longest label (about 0.55 em a character)."""
    column = max(len(label) for label in labels) * 0.55 * fontsize + 40  # points: text and handle
    return max(1, min(len(labels), int(width * 72 * 0.95 // column)))


def legend_rows(labels: Sequence[str], fontsize: float = 8) -> int:
    """Rows `legend_below` takes for `labels` in a figure WIDTH wide."""
    return math.ceil(len(labels) / _columns(labels, WIDTH, fontsize))


def legend_below(fig: plt.Figure, fontsize: float = 8) -> None:
    """The legend of the figure's first panel under all its panels (layout "constrained"), in as many
    columns as the longest label allows."""
    handles, labels = fig.axes[0].get_legend_handles_labels()
    ncol = _columns(labels, fig.get_figwidth(), fontsize)
    fig.legend(handles, labels, loc="outside lower center", ncol=ncol, fontsize=fontsize, frameon=False)


def line_figure(
    path: Path,
    series: dict[str, tuple[Sequence[float], Sequence[float]]],
    xlabel: str,
    ylabel: str,
    title: str = "",
    vlines: dict[str, float] | None = None,
    ylim: tuple[float, float] | None = None,
) -> Path:
    """One panel of named (x, y) curves, with optional labelled vertical markers. Each curve has its
    own colour, and past ten its own line style and marker too; past four curves the legend stands
    below the panel, in columns, so it covers no curve."""
    below = len(series) > LEGEND_BELOW
    rows = legend_rows(list(series)) if below else 0
    fig, ax = plt.subplots(figsize=(WIDTH, 3.8 + 0.22 * rows), layout="constrained")
    for index, (label, (x, y)) in enumerate(series.items()):
        ax.plot(x, y, label=label, lw=1.6, ms=4, **curve_style(index, markers=len(x) <= 30))
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
        ax.set_title(title, fontsize=10)
    if below:
        legend_below(fig)
    elif len(series) > 1:
        ax.legend(fontsize=8, loc="best")
    ax.grid(alpha=0.3)
    return save(fig, path)


def histogram_figure(
    path: Path,
    panels: dict[str, dict[str, Sequence[float]]],
    xlabel: str,
    title: str = "",
    bins: int = 60,
    density: bool = True,
) -> Path:
    """One panel per entry (two to a row), each overlaying named distributions as histograms
    (densities, or counts), on its own x-range: a narrow distribution is not a spike beside a wide
    one's range."""
    columns = min(len(panels), 2)
    rows = math.ceil(len(panels) / columns)
    fig, axes = plt.subplots(
        rows, columns, figsize=(WIDTH, 3.0 * rows + 0.4), squeeze=False, layout="constrained"
    )
    for ax, (name, series) in zip(axes.flat, panels.items(), strict=False):
        for index, (label, values) in enumerate(series.items()):
            ax.hist(values, bins=bins, density=density, alpha=0.55, label=label, color=COLOURS[index])
        ax.set_xlabel(xlabel)
        ax.set_ylabel("density" if density else "count")
        ax.set_title(name, fontsize=9)
        if len(series) > 1:
            ax.legend(fontsize=8, loc="best")
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    if title:
        fig.suptitle(title, fontsize=10)
    return save(fig, path)


HEATMAP_MARKS = (("red", "--"), ("white", ":"), ("orange", "-."))  # visible on every viridis cell


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
    """Values in [0, 1] on a grid (rows bottom to top), annotated; `marks` draws labelled lines, each
    in its own colour and style, named in a legend below the grid: {label: ("v" | "h", position in
    cell units)}."""
    values = np.asarray(grid, dtype=float)
    marks = marks or {}
    size = (1.6 + 0.55 * len(col_labels), 1.6 + 0.4 * len(row_labels) + 0.22 * len(marks))
    fig, ax = plt.subplots(figsize=size, layout="constrained")
    im = ax.imshow(values, aspect="auto", vmin=0, vmax=1, cmap="viridis", origin="lower")
    for (i, j), v in np.ndenumerate(values):
        if not np.isnan(v):
            ax.text(
                j, i, f"{v:.2f}", ha="center", va="center", fontsize=7, color="white" if v < 0.6 else "black"
            )
    ax.set_xticks(range(len(col_labels)), col_labels)
    ax.set_yticks(range(len(row_labels)), row_labels)
    for (label, (kind, at)), (colour, style) in zip(marks.items(), HEATMAP_MARKS * len(marks), strict=False):
        line = ax.axvline if kind == "v" else ax.axhline
        line(at, color=colour, ls=style, lw=2, label=label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title, fontsize=9)
    fig.colorbar(im, ax=ax, label="accuracy")
    if marks:  # below the grid, off its cells; a grey face shows the white line
        fig.legend(loc="outside lower center", fontsize=7, facecolor="#bbbbbb", framealpha=1)
    return save(fig, path)
