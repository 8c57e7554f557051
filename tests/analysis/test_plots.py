"""Figures: a crowded line plot puts its legend beside the panel instead of over the curves."""

import matplotlib.image

from symgen.analysis.plots import line_figure


def test_past_eight_curves_the_legend_moves_beside_the_panel(tmp_path):
    def width(n: int) -> int:
        series = {f"curve {i}": ([1, 2, 3], [0.1 * i, 0.2, 0.3]) for i in range(n)}
        return matplotlib.image.imread(line_figure(tmp_path / f"{n}.png", series, "x", "y")).shape[1]

    assert width(9) > 1.3 * width(8)
