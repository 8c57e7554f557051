import json
from pathlib import Path

from conftest import symgen

from symgen.config import resolve
from symgen.training.run import train_run

TINY = [
    "task.n_seen=20",
    "task.n_unseen=12",
    "task.min_rules=2",
    "task.max_rules=3",
    "task.min_facts=2",
    "task.max_facts=2",
    "task.max_depth=1",
    "task.n_test=6",
    "model.d_model=32",
    "model.n_heads=2",
    "train.batch_size=8",
    "train.steps=6",
    "train.warmup_steps=2",
    "train.eval_every=3",
    "train.checkpoint_every=3",
]


def test_the_sweep_names_each_runs_changes_and_reads_a_stopped_run_at_its_last_evaluation(tmp_path: Path):
    train_run(resolve("horn-copy-frozen", [*TINY, "seed=3"]), tmp_path / "control", progress=False)
    lever = [*TINY, "seed=3", "model.rotary_fraction=0.25"]
    train_run(resolve("horn-copy-frozen", lever), tmp_path / "lever", progress=False)
    for name in ("summary.json", "final.safetensors"):  # as a run stopped before its budget leaves it
        (tmp_path / "lever" / name).unlink()
    scaffold = [*TINY, "seed=3", "model.identity_bias=3.0", "model.identity_bias_fade=[2,10]"]
    train_run(resolve("horn-copy-frozen", scaffold), tmp_path / "scaffold", progress=False)
    out = tmp_path / "sweep.json"
    dirs = [str(tmp_path / name) for name in ("control", "lever", "scaffold")]
    result = symgen("analyze", "sweep", *dirs, "--out", str(out))
    assert result.returncode == 0, result.stderr
    rows = {r["run"]: r for r in json.loads(out.read_text())}
    assert rows["lever"]["changes"]["model.rotary_fraction"] == 0.25
    assert "model.rotary_fraction" not in rows["control"]["changes"]
    assert rows["lever"]["stopped_early"] and not rows["control"]["stopped_early"]
    assert rows["control"]["own_matching"]["weights"] == "final"
    assert rows["lever"]["own_matching"]["weights"] == 3  # its last checkpoint
    assert "match/best" in rows["lever"]["own_matching"] and "| lever | horn-copy-frozen |" in result.stdout
    # a run whose scaffold had not faded out: its end is not the paper's architecture, and it says so
    faded = rows["scaffold"]
    assert faded["scaffold_weight_last"] == 0.5 and faded["own_matching"]["scaffold_weight"] == 0.5
    assert 0.0 <= faded["own_matching"]["rule_choice_without_scaffold"] <= 1.0
    assert "rule_choice_without_scaffold" not in rows["control"]["own_matching"]
    bad = symgen("analyze", "sweep", str(tmp_path), "--out", str(out))
    assert bad.returncode == 2 and "not a run directory" in bad.stderr
