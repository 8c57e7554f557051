"""Errors a user can cause: one line on stderr, non-zero exit, no traceback."""

from pathlib import Path

import pytest
from conftest import TINY, symgen


def assert_one_line_error(result, *fragments: str) -> None:
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


@pytest.mark.parametrize(
    "args, fragments",
    [
        (["train", "missing.yaml", "--out", "x"], ["missing.yaml", "does not exist"]),
        (["train", "no-such-recipe", "--out", "x"], ["no recipe 'no-such-recipe'"]),
        (["train", "reverse", "train.stepz=5", "--out", "x"], ["unknown key train.stepz"]),
        (["train", "reverse", "train.steps=many", "--out", "x"], ["train.steps: expected int"]),
        (["reproduce", "--suite", "huge"], ["'huge' is not one of 'smoke', 'quick', 'mid', 'paper'"]),
        (
            ["reproduce", "--out", "x"],
            ["reproduce: Missing option '--suite'. Choose from: smoke, quick, mid, paper"],
        ),
        (["reproduce", "--suite", "smoke", "--jobs", "0"], ["'--jobs': 0 is not in the range x>=1"]),
        (["data", "kg", "--setting", "nonsense", "--out", "x"], ["data kg: Invalid value for '--setting'"]),
        (["data", "kg", "--setting", "depth"], ["data kg: Missing option '--out'", "symgen data kg --help"]),
        (["tokens", "repair", "m", "--out", "x", "--method", "foo"], ["tokens repair: ", "'foo' is not one"]),
        (["bench", "--stack", "x"], ["--stack 'x': give comma-separated integers, e.g. --stack 1,4,16"]),
        (["bench", "--stack", "0,4"], ["--stack '0,4': every value must be >= 1"]),
        (["train", "reverse", "--seeds", "0,x", "--out", "x"], ["--seeds '0,x'"]),
        (["no-such-command"], ["No such command 'no-such-command'"]),
        (["data", "kg", "--setting", "systematic", "--entities", "0", "--out", "x"], ["entities"]),
        (["train", "reverse", "train.threads=-1", "--out", "x"], ["train.threads=-1 must be >= 0"]),
        (["train", "reverse", *TINY, "train.steps=2", "--out", "a-file/run"], ["cannot create the folder"]),
        (["reproduce", "--suite", "smoke", "--only", "reverse", "--out", "a-file/out"], ["cannot create"]),
    ],
)
def test_bad_input_gives_one_line(tmp_path: Path, args, fragments):
    (tmp_path / "a-file").write_text("not a folder")
    result = symgen(*args, cwd=tmp_path)
    assert_one_line_error(result, *fragments)
    assert result.stderr.startswith("symgen: error: ")
    assert result.returncode == 2 and (tmp_path / "a-file").read_text() == "not a folder"


def interrupted_run(tmp_path: Path) -> list[str]:
    """A finished tiny run with its summary removed: as if killed after its step-20 checkpoint."""
    args = ["reverse", *TINY, "train.steps=40", "--out", str(tmp_path / "run"), "--no-progress"]
    assert symgen("train", *args).returncode == 0
    (tmp_path / "run" / "summary.json").unlink()
    return args


def test_damaged_checkpoint_json_and_another_thread_count_give_one_line(tmp_path: Path):
    args = interrupted_run(tmp_path)
    state = next((tmp_path / "run" / "checkpoints").glob("*.json"))
    good = state.read_bytes()
    result = symgen("train", *args, "train.threads=2", "--resume")
    assert_one_line_error(result, "train.threads=1", "same count")
    state.write_bytes(bytes(range(256)))
    assert_one_line_error(symgen("train", *args, "--resume"), "truncated or corrupt")
    state.write_text('{"step": 20}')
    pair = (state.with_suffix(".safetensors").name, state.name)
    assert_one_line_error(symgen("train", *args, "--resume"), "truncated or corrupt", "no elapsed", *pair)
    state.write_bytes(good)
    assert symgen("train", *args, "--resume").returncode == 0


def test_truncated_checkpoint_gives_one_line_naming_both_files_to_delete(tmp_path: Path):
    args = interrupted_run(tmp_path)
    ckpt = next((tmp_path / "run" / "checkpoints").glob("*.safetensors"))
    ckpt.write_bytes(ckpt.read_bytes()[:100])
    pair = (ckpt.name, ckpt.with_suffix(".json").name)
    assert_one_line_error(symgen("train", *args, "--resume"), "truncated or corrupt", *pair)
    for name in pair:  # the advice, followed: the run resumes (from step 0, its only checkpoint gone)
        (ckpt.parent / name).unlink()
    assert symgen("train", *args, "--resume").returncode == 0


def test_recipes_lists_one_name_per_line():
    result = symgen("recipes")
    assert result.returncode == 0
    names = [line.split("\t")[0] for line in result.stdout.splitlines()]
    assert "reverse" in names and all(" " not in n for n in names)


def test_ctrl_c_closes_the_progress_bar_then_says_how_to_continue(tmp_path: Path):
    import os
    import signal
    import subprocess
    import sys
    import time

    run = tmp_path / "run"
    cmd = [sys.executable, "-m", "symgen", "train", "reverse", *TINY, "train.steps=100000", "--out", str(run)]
    env = os.environ | {"OMP_NUM_THREADS": "1"}
    # a shell that starts its jobs in the background (`cmd &`) ignores SIGINT in them, and a child
    # inherits that; a terminal's Ctrl-C reaches a process whose SIGINT is the default
    proc = subprocess.Popen(
        cmd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.time() + 120
    while not list(run.glob("checkpoints/*.json")):
        assert proc.poll() is None and time.time() < deadline, "no checkpoint before the deadline"
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)  # what Ctrl-C sends
    stderr = proc.communicate(timeout=60)[1]
    assert proc.returncode == 130
    # the progress bar (drawn with carriage returns) is closed before the last line, never after it
    last = stderr.rstrip("\n").split("\n")[-1]
    assert "\r" not in last and stderr.endswith(last + "\n"), stderr[-300:]
    assert last.startswith("symgen: interrupted; the same command with --resume continues from the last ")
    assert last.endswith(")") and "checkpoint (step " in last
