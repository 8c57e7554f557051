"""`symgen bench`: every side steps the recipe's own batches; rates and ratios are reported."""

import json
from pathlib import Path

import pytest
from conftest import symgen

from symgen.errors import UserError
from symgen.experiments.speed.bench import SIZES, benchmark, size_setup


def test_bench_times_every_side_and_stacked_seeds_at_the_kg_quick_size():
    result = benchmark(["kg-quick"], rounds=2, steps=1, stack=[1, 2])
    size = result["sizes"]["kg-quick"]
    assert size["loops"] == 4 and size["layers"] == 2 and size["d_model"] == 64
    rates = size["steps_per_s"]
    assert {"symgen", "gpt2-loop", "plain"} <= set(rates)
    for rate in rates.values():
        assert 0 < rate["min"] <= rate["median"] <= rate["max"]
    assert size["symgen_vs_gpt2-loop"] == pytest.approx(
        rates["symgen"]["median"] / rates["gpt2-loop"]["median"], rel=1e-2
    )
    two = size["stacked"]["2"]
    assert two["per_seed_steps_per_s"] == pytest.approx(2 * two["steps_per_s"], rel=1e-3)


def test_bench_refuses_unknown_sizes_and_bad_counts(tmp_path: Path):
    with pytest.raises(UserError, match="known sizes"):
        benchmark(["huge"])
    with pytest.raises(UserError, match=">= 1"):
        benchmark(["kg-quick"], rounds=0)
    done = symgen("bench", "--stack", "4,0", "--out", str(tmp_path / "b.json"))
    assert done.returncode == 2 and ">= 1" in done.stderr and not (tmp_path / "b.json").exists()


def test_bench_cli_writes_its_json(tmp_path: Path):
    out = tmp_path / "bench.json"
    args = ["--sizes", "kg-quick", "--rounds", "1", "--steps", "1", "--stack", ""]
    done = symgen("bench", *args, "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "stacked" not in json.loads(out.read_text())["sizes"]["kg-quick"]


def test_the_kg_deep_size_steps_r8_on_wider_batches_than_kg_quick():
    _, quick = size_setup(SIZES["kg-quick"], n_batches=2)
    cfg, deep = size_setup(SIZES["kg-deep"], n_batches=2)
    assert cfg.model.n_loops == 8 and cfg.task.train_hops == 5
    assert deep.width >= quick.width + 3  # chains of up to 5 hops against the first stage's 2
