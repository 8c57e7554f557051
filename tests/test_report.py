from pathlib import Path

from symgen.analysis.plots import line_figure
from symgen.experiments.claims import Part, Statement, merge_seeds
from symgen.experiments.report import read_claims, write_claims, write_report
from symgen.experiments.types import Section, Table

HEADER = {
    "commit": "abc123",
    "command": "symgen reproduce --suite smoke",
    "written": "2026-12-06 10:00",
    "suite": "smoke",
    "seeds": [0, 1],
    "timing": {"wall_seconds": 1, "train_seconds_of_runs": 1},
}


def claims():
    a71 = Statement("A7.1", "claim", "paper")
    parts = [
        Part("near-perfect on all_seen (≥ 0.9)", "pass", "0.950"),
        Part("fails all_unseen", "fail", "0.4"),
    ]
    return [
        merge_seeds({0: a71.check(parts, ["runs/unseen-standard", "figures/kg_halting.png"])}),
        merge_seeds({0: Statement("B5.6", "claim", "paper").check([Part("p", "not judged", "why")])}),
        merge_seeds({1: Statement("B5.1", "claim", "paper").check([Part("p", "pass")], ["runs/kg/seed-1"])}),
        Statement("C1", "claim", "paper").not_run(),
    ]


def test_report_names_its_scale_source_legend_parts_and_links(tmp_path: Path):
    section = Section("S", ["text"], [], [Table(["a"] * 30, [[0.5] * 30])])
    text = write_report(tmp_path / "r.html", HEADER, [section], claims()).read_text()
    assert "Smoke scale" in text and "not reproduced (smoke scale)" in text
    assert "abc123" in text and "symgen reproduce --suite smoke" in text
    for verdict in ("reproduced", "partly reproduced", "not reproduced", "not judged", "not run"):
        assert f"<td>{verdict}</td>" in text  # the legend names every verdict
    assert "near-perfect on all_seen (≥ 0.9)" in text and "seed 0: pass — 0.950" in text
    assert 'href="runs/unseen-standard/summary.json"' in text and 'href="figures/kg_halting.png"' in text
    assert 'href="runs/kg/seed-1/summary.json">kg/seed-1</a>' in text
    assert "1 not judged" in text and "1 not run" in text
    quick = write_report(tmp_path / "q.html", HEADER | {"suite": "quick"}, [section], claims())
    assert "(smoke scale)" not in quick.read_text() and "Quick scale" in quick.read_text()
    book = write_report(tmp_path / "b.html", HEADER | {"suite": "quick+mid"}, [section], claims()).read_text()
    assert "Quick scale" in book and "Mid scale" in book  # a book of several suites notes each scale
    other = write_report(tmp_path / "o.html", HEADER | {"suite": "other"}, [section], claims()).read_text()
    assert 'class="scale"></p>' not in other  # no empty note


def test_claims_json_carries_its_source_and_reads_back(tmp_path: Path):
    path = write_claims(tmp_path / "claims.json", HEADER, claims())
    header, back = read_claims(path)
    assert header["commit"] == "abc123" and header["command"].startswith("symgen reproduce")
    assert [c.id for c in back] == ["A7.1", "B5.6", "B5.1", "C1"] and back[0].parts[0].outcomes == {
        "0": "pass"
    }
    assert [c.verdict for c in back] == ["not reproduced", "not judged", "reproduced", "not run"]


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
