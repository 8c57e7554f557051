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
        (["reproduce", "--suite", "huge"], ["--suite 'huge'"]),
        (["data", "kg", "--setting", "systematic", "--entities", "0", "--out", "x"], ["entities"]),
    ],
)
def test_bad_input_gives_one_line(tmp_path: Path, args, fragments):
    assert_one_line_error(symgen(*args, cwd=tmp_path), *fragments)


def test_truncated_checkpoint_gives_one_line(tmp_path: Path):
    args = ["reverse", *TINY, "train.steps=40", "--out", str(tmp_path / "run"), "--no-progress"]
    assert symgen("train", *args).returncode == 0
    (tmp_path / "run" / "summary.json").unlink()  # pretend it was interrupted after step 20
    ckpt = next((tmp_path / "run" / "checkpoints").glob("*.safetensors"))
    ckpt.write_bytes(ckpt.read_bytes()[:100])
    assert_one_line_error(symgen("train", *args, "--resume"), "truncated or corrupt")


def test_recipes_lists_one_name_per_line():
    result = symgen("recipes")
    assert result.returncode == 0
    names = [line.split("\t")[0] for line in result.stdout.splitlines()]
    assert "reverse" in names and all(" " not in n for n in names)
