"""An experiment analysed once per seed reads as one report section: tables show mean [min–max],
every seed's figures appear with their seed, and the claims table summarises each number."""

from pathlib import Path

from symgen.analysis.plots import line_figure
from symgen.experiments.claims import merge_seeds
from symgen.experiments.kg_systematic.claims import check_b51
from symgen.experiments.report import write_report
from symgen.experiments.seeds import combine_sections, merge_cells
from symgen.experiments.types import Section, Table

TIMING = {"wall_seconds": 1, "train_seconds_of_runs": 1}


def test_cells_merge_into_mean_and_range_or_per_seed_values():
    assert merge_cells(["looped", "looped"]) == "looped" and merge_cells([0.5, 0.5]) == 0.5
    assert merge_cells([0.6, 0.8, 0.7]) == "0.700 [0.600–0.800]"
    assert merge_cells([1500, 1750]) == "1625 [1500–1750]" and merge_cells([1, 2]) == "1.5 [1–2]"
    assert merge_cells(["1500", "1750"]) == "1625 [1500–1750]"  # steps written as text
    assert merge_cells(["1500", "—"]) == "1500 / —" and merge_cells([0.25, "—"]) == "0.250 / —"


def section(seed: int, ood: float, step: str, rows: int = 2) -> Section:
    table = Table(["run", "OOD", "OOD learned"], [["looped", ood, step], ["vanilla", 0.01, "—"]][:rows], "c")
    return Section("KG", ["same text", f"seed-dependent {seed}"], [Path(f"s{seed}/ood.png")], [table])


def test_sections_of_several_seeds_merge_into_one():
    merged = combine_sections({0: section(0, 0.6, "1500"), 1: section(1, 0.8, "1750")})
    assert merged.title == "KG" and len(merged.tables) == 1
    assert merged.tables[0].rows == [
        ["looped", "0.700 [0.600–0.800]", "1625 [1500–1750]"],
        ["vanilla", 0.01, "—"],
    ]
    assert merged.tables[0].caption.startswith("c Seeds 0, 1: a number that differs")
    assert merged.paragraphs == ["same text", "Seed 0: seed-dependent 0", "Seed 1: seed-dependent 1"]
    assert merged.figures == [Path("s0/ood.png"), Path("s1/ood.png")]
    assert merged.figure_notes == {"s0/ood.png": "seed 0", "s1/ood.png": "seed 1"}

    # tables of different shapes stay one per seed, captioned with their seed
    uneven = combine_sections({0: section(0, 0.6, "1500"), 1: section(1, 0.8, "1750", rows=1)})
    assert [t.caption for t in uneven.tables] == ["Seed 0. c", "Seed 1. c"]
    single = section(0, 0.6, "1500")
    assert combine_sections({0: single}) is single


def b51(r2_step: int | None, r4_step: int | None):
    finals = {
        "kg-sys-looped-r2": {"ood": 0.78, "id": 1.0, "loops": 2, "ood_step": r2_step, "steps": 60000},
        "kg-sys-looped-r4": {"ood": 0.77, "id": 1.0, "loops": 4, "ood_step": r4_step, "steps": 20000},
        "kg-sys-vanilla": {"ood": 0.01, "id": 0.95, "loops": 1, "ood_step": None, "steps": 20000},
    }
    for f in finals.values():
        f["blocks"] = 4  # the paper's block
    return check_b51(finals, "paper", [])


def test_a_seed_where_r2_learns_first_makes_b51_partly_reproduced_and_the_report_shows_the_range(
    tmp_path: Path,
):
    merged = merge_seeds({0: b51(7000, 2000), 1: b51(2000, 3000)})
    assert merged.verdict == "partly reproduced" and merged.seeds == [0, 1]
    speed = next(p for p in merged.parts if p.text.startswith("R = 4 reaches"))
    assert speed.outcome == "mixed" and speed.outcomes == {"0": "pass", "1": "fail"}
    assert speed.measured["1"] == "kg-sys-looped-r4 step 3000 against kg-sys-looped-r2 step 2000"
    assert speed.summary["kg-sys-looped-r4/ood_step"] == {"mean": 2500, "min": 2000, "max": 3000}
    assert all(p.outcome == "pass" for p in merged.parts if p is not speed)

    figure = line_figure(tmp_path / "ood.png", {"a": ([1, 2], [0.1, 0.2])}, "x", "y")
    page = write_report(
        tmp_path / "r.html",
        {"suite": "paper", "timing": TIMING},
        [Section("KG", figures=[figure], figure_notes={str(figure): "seed 1"})],
        [merged],
    ).read_text()
    assert "kg-sys-looped-r4/ood_step 2500 [2000–3000]" in page
    assert "seed 1: fail — kg-sys-looped-r4 step 3000 against kg-sys-looped-r2 step 2000" in page
    assert "<figure><figcaption>seed 1</figcaption><img" in page  # the seed label above its figure
