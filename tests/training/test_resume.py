import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml
from conftest import TINY, symgen

from symgen.config import resolve
from symgen.training.run_dir import config_differences

STEPS = ["train.steps=400", "train.checkpoint_every=50", "train.eval_every=100", "model.dropout=0.1"]


def test_sigkilled_run_resumes_to_byte_identical_weights(tmp_path: Path):
    args = ["reverse", *TINY, *STEPS]
    reference = symgen("train", *args, "--out", str(tmp_path / "ref"), "--no-progress")
    assert reference.returncode == 0, reference.stderr

    run = tmp_path / "killed"
    env = os.environ | {"OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "symgen", "train", *args, "--out", str(run), "--no-progress"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while not (run / "checkpoints" / "step_0000100.json").exists():
        assert proc.poll() is None and time.time() < deadline, "run ended before its second checkpoint"
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not (run / "summary.json").exists(), "the run finished before it could be killed"

    refused = symgen("train", *args, "--out", str(run), "--no-progress")
    assert refused.returncode == 2 and "--resume" in refused.stderr

    resumed = symgen("train", *args, "--out", str(run), "--resume", "--no-progress")
    assert resumed.returncode == 0, resumed.stderr
    assert (run / "final.safetensors").read_bytes() == (tmp_path / "ref" / "final.safetensors").read_bytes()

    def evals(path: Path) -> list:
        records = [json.loads(line) for line in (path / "metrics.jsonl").read_text().splitlines()]
        return [(r["step"], r.get("eval/exact_match"), r.get("train/loss")) for r in records]

    assert evals(run) == evals(tmp_path / "ref")

    again = symgen("train", *args, "--out", str(run), "--no-progress")
    assert again.returncode == 0 and "nothing to do" in again.stdout


def test_a_finished_run_with_another_config_is_refused(tmp_path: Path):
    args = ["reverse", *TINY, "train.steps=20"]
    assert symgen("train", *args, "--out", str(tmp_path / "run"), "--no-progress").returncode == 0
    same = symgen("train", *args, "train.threads=2", "--out", str(tmp_path / "run"), "--no-progress")
    assert same.returncode == 0 and "nothing to do" in same.stdout  # threads change how, not what
    other = symgen("train", *args, "train.lr=0.5", "--out", str(tmp_path / "run"), "--no-progress")
    assert other.returncode == 2 and "another config" in other.stderr


def test_a_setting_added_after_a_run_was_stored_counts_only_when_it_leaves_its_default(tmp_path: Path):
    cfg = resolve("reverse", [])
    stored = cfg.to_dict()
    del stored["model"]["identity_bias_scope"]  # as if stored by a symgen without that setting
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(stored))
    assert config_differences(cfg, path) == []
    changed = resolve("reverse", ["model.identity_bias_scope=symbols", "train.lr=0.01"])
    assert config_differences(changed, path) == ["model.identity_bias_scope", "train.lr"]


def test_settings_the_task_filled_in_do_not_count_as_a_different_config(tmp_path: Path):
    cfg = resolve("horn-implicit-vanilla", ["model.causal=false"])
    stored = cfg.to_dict()
    stored["model"] |= {"vocab_size": 311, "max_seq_len": 70, "pad_id": 0}  # as build_model stores them
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(stored))
    assert config_differences(cfg, path) == []
    assert config_differences(resolve("horn-implicit-vanilla", ["model.pad_id=3"]), path) == ["model.pad_id"]


def test_a_finished_run_extended_under_resume_equals_one_trained_at_the_larger_budget(tmp_path: Path):
    """`--resume` with a larger compute budget goes on from the last checkpoint; the result is the run a
    fresh start at that budget gives (a constant learning rate: nothing before depends on the budget)."""
    depth = [
        "task.entities=12",
        "task.relations=3",
        "task.max_hops=4",
        "task.per_hop=60",
        "task.test_per_hop=20",
        "task.curriculum_max_hops=3",
        "task.curriculum_threshold=0.3",
        "task.n_eval_train=32",
        "model.d_model=32",
        "train.batch_size=32",
        "train.eval_every=10",
        "train.checkpoint_every=10",
        "train.warmup_steps=5",
        "train.steps=1000",
    ]
    small, large = ["train.budget_layer_passes=200"], ["train.budget_layer_passes=360"]
    grown = tmp_path / "grown"
    assert symgen("train", "kg-depth-curriculum", *depth, *small, "--out", str(grown)).returncode == 0
    assert json.loads((grown / "summary.json").read_text())["stopped_by"] == "budget"
    again = symgen("train", "kg-depth-curriculum", *depth, *large, "--out", str(grown), "--resume")
    assert again.returncode == 0 and "goes on from its last checkpoint" in again.stderr
    fresh = tmp_path / "fresh"
    assert symgen("train", "kg-depth-curriculum", *depth, *large, "--out", str(fresh)).returncode == 0
    summary = json.loads((grown / "summary.json").read_text())
    assert summary["layer_passes"] == 360 and summary["stopped_by"] == "budget"
    assert (grown / "final.safetensors").read_bytes() == (fresh / "final.safetensors").read_bytes()
    # a smaller budget, or another setting, is no extension: refused as a different config
    other = symgen(
        "train", "kg-depth-curriculum", *depth, *large, "train.lr=0.01", "--out", str(grown), "--resume"
    )
    assert other.returncode == 2 and "train.lr" in other.stderr


def test_resume_says_where_it_starts(tmp_path: Path):
    """--resume names the step it continues from, or says why it starts from step 0."""
    args = ["reverse", *TINY, "--no-progress", "--resume"]

    def note(result: subprocess.CompletedProcess) -> str:
        assert result.returncode == 0, result.stderr
        (line,) = [line for line in result.stderr.splitlines() if line.startswith("--resume")]
        return line

    missing = tmp_path / "mistyped"
    fresh = note(symgen("train", *args, "train.steps=10", "--out", str(missing)))
    assert fresh == f"--resume: nothing to resume in {missing}: no run there, the folder does not exist; " + (
        "starting from step 0"
    )
    (tmp_path / "empty").mkdir()
    empty = note(symgen("train", *args, "train.steps=10", "--out", str(tmp_path / "empty")))
    assert "no run there; starting from step 0" in empty

    (missing / "summary.json").unlink()  # killed after 10 steps, before its first checkpoint at 20
    early = note(symgen("train", *args, "train.steps=10", "--out", str(missing)))
    assert "no checkpoint yet, the run stopped before step 20 (train.checkpoint_every)" in early
    assert early.endswith("starting from step 0")

    run = tmp_path / "run"
    assert symgen("train", *args, "train.steps=40", "--out", str(run)).returncode == 0
    (run / "summary.json").unlink()
    assert note(symgen("train", *args, "train.steps=40", "--out", str(run))) == (
        f"--resume: {run} continues from step 20 (its last checkpoint)"
    )


def test_stacked_resume_says_where_each_seed_starts(tmp_path: Path):
    args = ["reverse", *TINY, "task.n_symbols=200", "task.min_len=4", "train.steps=40", "--seeds", "0,1"]
    args += ["--out", str(tmp_path / "s"), "--no-progress", "--resume"]
    first = symgen("train", *args)
    assert first.returncode == 0, first.stderr
    assert f"--resume: nothing to resume in {tmp_path / 's'}: no run there" in first.stderr
    assert first.stderr.count("--resume") == 1  # one line for the stacked run, not one per seed
    for seed in (0, 1):
        (tmp_path / "s" / f"seed-{seed}" / "summary.json").unlink()
    again = symgen("train", *args)
    assert again.returncode == 0, again.stderr
    for seed in (0, 1):
        assert f"--resume: {tmp_path / 's' / f'seed-{seed}'} continues from step 20" in again.stderr


def test_tensor_files_get_the_mode_of_every_other_file(tmp_path: Path):
    """safetensors alone would write 0600; a run's weights are as readable as its config."""
    import torch

    from symgen.training.checkpoint import atomic_save_tensors, atomic_write_bytes

    atomic_save_tensors(tmp_path / "w.safetensors", {"x": torch.zeros(2)})
    atomic_write_bytes(tmp_path / "c.yaml", b"x: 1\n")
    mode = (tmp_path / "c.yaml").stat().st_mode & 0o777
    assert (tmp_path / "w.safetensors").stat().st_mode & 0o777 == mode
