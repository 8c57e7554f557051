from pathlib import Path

from symgen.analysis.plots import line_figure
from symgen.experiments.claims import Claim
from symgen.experiments.report import write_report
from symgen.experiments.types import Section, Table


def test_report_names_its_scale_links_evidence_and_wraps_wide_tables(tmp_path: Path):
    claims = [
        Claim("A7.1", "claim", "paper", "measured", "not reproduced", ["unseen-standard", "kg_halting.png"]),
        Claim("B5.6", "claim", "paper", "at chance", "not judged", ["runs-*"]),
        Claim("B5.1", "claim", "paper", "m", "reproduced", ["/out/runs/kg-sys-looped/seed-1"]),
    ]
    section = Section("S", ["text"], [], [Table(["a"] * 30, [[0.5] * 30])])
    page = write_report(
        tmp_path / "r.html", "smoke", [section], claims, {"wall_seconds": 1, "train_seconds_of_runs": 1}
    )
    text = page.read_text()
    assert "Smoke scale" in text and "not reproduced (smoke scale)" in text
    assert 'href="runs/unseen-standard/"' in text and 'href="figures/kg_halting.png"' in text
    assert "runs-*" in text and 'class="not-judged"' in text and "1 not judged" in text
    assert 'href="runs/kg-sys-looped/seed-1/">kg-sys-looped/seed-1</a>' in text  # one seed of a stacked run
    assert text.count('<div class="wide"><table>') == 2
    quick = write_report(
        tmp_path / "q.html", "quick", [section], claims, {"wall_seconds": 1, "train_seconds_of_runs": 1}
    )
    assert "(smoke scale)" not in quick.read_text() and "Quick scale" in quick.read_text()


def test_a_single_point_chart_is_centred_on_its_value(tmp_path: Path):
    import matplotlib.pyplot as plt

    captured = {}
    original = plt.Figure.savefig

    def keep(fig, *args, **kwargs):
        captured["xlim"] = fig.axes[0].get_xlim()
        return original(fig, *args, **kwargs)

    plt.Figure.savefig = keep
    try:
        line_figure(tmp_path / "one.png", {"a": ([12], [0.5]), "b": ([12], [0.7])}, "x", "y")
    finally:
        plt.Figure.savefig = original
    assert captured["xlim"] == (6.0, 18.0)
