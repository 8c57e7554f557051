import json
from pathlib import Path

import pytest

from symgen.experiments.cost import as_header, cost_table, from_header, run_costs
from symgen.experiments.types import RunSpec


def finish(run_dir: Path, seconds: float, steps: int, stacked: int | None = None) -> None:
    run_dir.mkdir(parents=True)
    summary = {"train_seconds": seconds, "steps": steps, "layer_passes": 4 * steps}
    if stacked:
        summary["stacked_seeds"] = stacked
    (run_dir / "summary.json").write_text(json.dumps(summary))


def test_a_stacked_process_counts_once_and_an_extension_counts_what_it_added(tmp_path: Path):
    for seed in (0, 1, 2):  # three stacked seeds: each summary holds the one process's seconds
        finish(tmp_path / "budget" / f"seed-{seed}", 300.0, 1000, stacked=3)
        finish(tmp_path / "budget-stall" / f"seed-{seed}", 420.0, 1400, stacked=3)
    finish(tmp_path / "single", 50.0, 200)
    runs = [
        RunSpec("budget", "r", seeds=(0, 1, 2)),
        RunSpec("budget-stall", "r", seeds=(0, 1, 2), extends="budget"),
        RunSpec("single", "r"),
    ]
    costs = {c.name: c for c in run_costs(runs, tmp_path)}
    assert costs["budget"].seconds == pytest.approx(300.0) and costs["budget"].seeds == 3
    assert costs["budget-stall"].seconds == pytest.approx(120.0)
    assert costs["single"].seconds == pytest.approx(50.0) and costs["single"].layer_passes == 800

    table = cost_table(list(costs.values()))
    assert [row[0] for row in table.rows] == ["budget", "budget-stall", "single"]  # most costly first
    assert table.rows[0][5] == 100 and table.rows[0][6] == "64 %"  # 300 s over 3 seeds; 300 of 470


def test_an_extension_that_stalled_already_adds_nothing(tmp_path: Path):
    finish(tmp_path / "budget", 300.0, 1000)
    finish(tmp_path / "budget-stall", 300.0, 1000)  # reopened: it ended by its curriculum, so it stays
    runs = [RunSpec("budget", "r"), RunSpec("budget-stall", "r", extends="budget")]
    assert [c.seconds for c in run_costs(runs, tmp_path)] == [300.0, 0.0]


def test_costs_read_back_from_a_header_name_their_part(tmp_path: Path):
    finish(tmp_path / "single", 50.0, 200)
    costs = run_costs([RunSpec("single", "r")], tmp_path)
    again = from_header(as_header(costs), "quick-a")
    assert again[0].seconds == 50.0 and again[0].part == "quick-a" and again[0].steps == 200
    table = cost_table(again)
    assert table.headers[0] == "part" and table.rows[0][:2] == ["quick-a", "single"]
