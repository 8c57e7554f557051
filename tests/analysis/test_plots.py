"""Figures read as the report shows them (49 % of a 1300 px page): no text under 10 px, every curve
told apart from the others, legends off the data."""

from types import SimpleNamespace

import matplotlib.image
import numpy as np
import pytest

from symgen.analysis import plots, theory
from symgen.analysis.plots import MIN_TEXT_PX, heatmap_figure, histogram_figure, line_figure, plt

LABELS = [
    "standard",
    "copy",
    "copy + frozen",
    "copy + forgetting",
    "temporary forgetting",
    "copy + temporary forgetting",
    "standard + same-symbol",
    "standard, rows without weight decay + same-symbol",
    "copy + same-symbol",
    "copy + frozen + same-symbol",
    "copy + forgetting + same-symbol",
    "temporary forgetting + same-symbol",
    "copy + temporary forgetting + same-symbol",
]


@pytest.fixture
def drawn(monkeypatch):
    """The figures `save` wrote, kept open to be inspected."""
    figures: list[plt.Figure] = []
    close = plt.close
    monkeypatch.setattr(plt, "close", figures.append)
    yield figures
    for fig in figures:
        close(fig)


def overlaps(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def check_legible(fig: plt.Figure, path) -> None:
    fig.canvas.draw()
    assert plots.smallest_text_px(fig) >= MIN_TEXT_PX - 1e-6
    assert matplotlib.image.imread(path).shape[1] == round(fig.get_figwidth() * plots.DPI)


def test_many_curves_differ_in_colour_or_style_and_their_legend_stands_off_the_data(tmp_path, drawn):
    series = {label: ([0, 10, 20], [0.1 * i, 0.2, 0.3]) for i, label in enumerate(LABELS)}
    path = line_figure(tmp_path / "many.png", series, "training step", "mean pairwise cosine", "title")
    (fig,) = drawn
    check_legible(fig, path)
    (ax,) = fig.axes
    styles = [(line.get_color(), line.get_linestyle(), line.get_marker()) for line in ax.lines]
    assert len(styles) == len(LABELS) == len(set(styles))  # the 11th curve is not the 1st one's blue
    assert ax.get_legend() is None and len(fig.legends) == 1
    renderer = fig.canvas.get_renderer()
    assert not overlaps(fig.legends[0].get_window_extent(renderer), ax.get_window_extent(renderer))
    assert fig.legends[0].get_window_extent(renderer).x1 <= fig.bbox.x1  # nothing cut off at the side


def test_heatmap_marks_are_told_apart_in_a_legend_off_the_cells(tmp_path, drawn):
    marks = {
        "trained depths ≤ 3": ("h", 2.5),
        "training R = 4": ("v", 3),
        "r chosen on validation = 6": ("v", 4.1),
    }
    grid = np.full((6, 6), 0.5)
    path = heatmap_figure(tmp_path / "h.png", grid, list("123456"), list("123468"), "r", "depth", "t", marks)
    (fig,) = drawn
    check_legible(fig, path)
    ax = fig.axes[0]
    styles = {(str(line.get_color()), line.get_linestyle()) for line in ax.lines}
    assert len(styles) == 3 and ax.get_legend() is None
    renderer = fig.canvas.get_renderer()
    assert not overlaps(fig.legends[0].get_window_extent(renderer), ax.get_window_extent(renderer))


def test_histograms_and_the_theory_figure_are_legible(tmp_path, drawn):
    rng = np.random.default_rng(0)
    panels = {
        f"method {i}\n(mean 0.999)": {"": list(0.999 + 1e-4 * rng.standard_normal(50))} for i in range(5)
    }
    path = histogram_figure(tmp_path / "h.png", panels, "cosine", density=False)
    check_legible(drawn[-1], path)
    # each panel on its own x-range: a spread of 1e-4 near 0.999 is drawn across its panel, no spike
    assert all(ax.get_xlim()[1] - ax.get_xlim()[0] < 0.01 for ax in drawn[-1].axes if ax.get_visible())

    names = ("gd", "sgd", "sign_flip", "diverge", "adamw", "adamw_no_decay")
    steps = np.arange(1, 41)[:, None]
    records = {
        n: {"dnorm": 0.9**steps * np.ones((1, 3)), "bound": np.full(39, 0.95), "signed": np.ones((40, 3))}
        | {"cos": np.linspace(0, 1, 40)}
        for n in names
    }
    cases = {n: SimpleNamespace(lr=0.5, weight_decay=0.1) for n in names}
    path = theory.plot(records, cases, tmp_path / "theory.png")
    check_legible(drawn[-1], path)


def test_a_figure_saved_under_a_stamp_names_its_experiment_and_seed_in_its_title(tmp_path, drawn):
    two = {"a": ([0, 1], [0.1, 0.2]), "b": ([0, 1], [0.3, 0.4])}
    with plots.stamped("unseen, seed 1"):
        path = line_figure(tmp_path / "one.png", two, "step", "accuracy", "all_seen during training")
        heatmap_figure(
            tmp_path / "h.png", np.full((2, 2), 0.5), ["1", "2"], ["1", "2"], "r", "d", "run (seed 4)"
        )
        histogram_figure(tmp_path / "two.png", {"p": {"x": [0.1, 0.2]}, "q": {"x": [0.3, 0.4]}}, "cosine")
    line_figure(tmp_path / "bare.png", two, "step", "accuracy", "no stamp")
    line, heatmap, panels, bare = drawn
    assert line.axes[0].get_title() == "all_seen during training (unseen, seed 1)"
    check_legible(line, path)  # the longer title is drawn at a legible size too
    assert heatmap.axes[0].get_title() == "run (seed 4)"  # a title that names its seed is left as it is
    assert panels.get_suptitle() == "unseen, seed 1"  # several titled panels: the figure's own title
    assert bare.axes[0].get_title() == "no stamp"  # outside the stamp, nothing is added
    # a small legend takes the panel's emptiest corner: no point of a curve under it
    ax, renderer = line.axes[0], line.canvas.get_renderer()
    box = ax.get_legend().get_window_extent(renderer)
    points = [ax.transData.transform(xy) for curve in ax.lines for xy in curve.get_xydata()]
    assert points and not any(box.contains(x, y) for x, y in points)
