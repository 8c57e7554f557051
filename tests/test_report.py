import re
from pathlib import Path

from symgen.analysis.plots import SHOWN_PX, line_figure
from symgen.experiments.claims import ClaimResult, JudgedPart, Part, Statement, merge_seeds
from symgen.experiments.report import headline, read_claims, write_claims, write_report
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
    # counts per source, never one mixed total
    assert "Paper A as published</b></a>: 0 reproduced, 0 partly, 1 not reproduced, 0 not judged" in text
    assert "Paper B</b></a>: 1 reproduced, 0 partly, 0 not reproduced, 1 not judged" in text
    part_c = "Part C (beyond the papers)</b></a>: 0 reproduced, 0 partly, 0 not reproduced, 0 not judged"
    assert f"{part_c}, 1 not run" in text
    assert "Claims: " not in text
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


def _claim(cid: str, verdict: str, outcomes: dict[str, str], measured: dict[str, str], paper: str = "p"):
    part = JudgedPart("a part", "pass", outcomes, measured, {})
    return ClaimResult(cid, f"claim {cid}", paper, verdict, [part], [int(s) for s in outcomes])


def test_the_first_screen_groups_claims_by_source_one_line_each(tmp_path: Path):
    judged = {"0": "pass", "1": "pass", "2": "pass"}
    claims = [
        _claim(
            "A7.1",
            "reproduced",
            judged,
            {"0": "all_seen 0.985", "1": "all_seen 0.130", "2": "all_seen 0.070"},
        ),
        _claim("A7.1β", "reproduced", judged, dict.fromkeys(judged, "all_seen 0.9"), "≈100% all_seen"),
        _claim("A7.1 (mid)", "not judged", {"0": "not judged"}, {"0": "not learned"}),
        _claim("A7.3β (mid)", "reproduced", {"0": "pass"}, {"0": "all_unseen 0.97"}),
        _claim("A7.3σ", "reproduced", {"0": "pass"}, {"0": "all_unseen 0.87"}),
        _claim("B5.1", "reproduced", {"0": "pass"}, {"0": "OOD 0.74"}),
        _claim(
            "C1",
            "partly reproduced",
            {"4": "pass", "5": "not judged"},
            {"4": "reaches 5", "5": "not learned"},
        ),
    ]
    claims[0].source = {"part": "quick-a", "command": "symgen reproduce --only unseen --out quick-a"}
    text = write_report(tmp_path / "r.html", HEADER | {"seeds": list(range(7))}, [], claims).read_text()
    sections = {
        key: text[text.index(f'<h2 id="{key}">') :].split("<h2", 2)[1]
        for key in ("paper-a", "same-symbol", "scaffold-head", "paper-b", "part-c")
    }
    assert "A7.3σ" in sections["scaffold-head"] and 'id="claim-A7-3s"' in text  # its own source, a Latin id
    assert "A7.1<" in sections["paper-a"] and "A7.1 (mid)" in sections["paper-a"]
    assert "A7.1β" in sections["same-symbol"] and "A7.3β (mid)" in sections["same-symbol"]
    assert "A7.1β" not in sections["paper-a"] and "B5.1" in sections["paper-b"] and "C1" in sections["part-c"]
    assert "symgen's same-symbol variant</b></a>: 2 reproduced, 0 partly" in text
    # one line per claim: verdict, seeds, the measured headline beside the paper's value; parts below
    line = re.search(r'<details class="claim reproduced" id="claim-A7-1"><summary>(.*?)</summary>', text)[1]
    assert "reproduced" in line and "seeds 0–2" in line and "measured: all_seen 0.985 / 0.130 / 0.070" in line
    assert "paper: p" in line and "seed 0: pass — all_seen 0.985" not in line
    assert "seed 0: pass — all_seen 0.985" in text  # one click below
    assert "seeds 4, 5 (judged on 4)" in text
    # the header names the seeds that judged claims, not every seed of the header
    meta = re.search(r'<p class="meta">(.*?)</p>', text)[1]
    assert meta.startswith("Claims judged on seeds 0–2, 4 (at most 3 per claim).") and "0–6" not in meta
    # the part's command lives in the provenance table (a book's), not in the claim's line
    assert "--only unseen --out quick-a" not in text and 'href="quick-a/report.html"' in text
    assert text.count("symgen reproduce --suite smoke") == 1 and '<h2 id="provenance">' in text
    # figures two to a row only where each is shown at the width their text was sized for
    assert f"figure{{display:inline-block;width:49%;min-width:min({SHOWN_PX}px,100%)" in text
    # every table scrolls inside its own box, so a narrow window never cuts the page
    assert text.count("<table") == text.count('<div class="wide"><table')


def test_a_claims_headline_is_its_first_parts_numbers_over_seeds():
    def one(measured: dict[str, str]) -> str:
        return headline(_claim("A7.1", "reproduced", dict.fromkeys(measured, "pass"), measured))

    assert one({"0": "query_unseen 0.450 against 0.430", "1": "query_unseen 0.455 against 0.490"}) == (
        "query_unseen 0.450 / 0.455 against 0.430 / 0.490"
    )
    assert one({"0": "all_unseen 0.000", "1": "all_unseen 0.000"}) == "all_unseen 0.000"
    many = one({"4": "iterations 5.9 5.8 6.5 over depths 1–3", "5": "iterations 8.8 8.1 9.4 over depths 1–3"})
    assert (
        many
        == "seed 4: iterations 5.9 5.8 6.5 over depths 1–3; seed 5: iterations 8.8 8.1 9.4 over depths 1–3"
    )
    assert one({"0": "reaches 3; learned: the model 0.93 ≥ 0.75"}) == "reaches 3"
    long = one({"0": "word " * 60})
    assert len(long) <= 140 and long.endswith(" …")
