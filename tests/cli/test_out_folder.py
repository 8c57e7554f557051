"""`train --out` writes only into a new or empty folder or a run directory of its kind."""

import json
from pathlib import Path

import pytest
from conftest import TINY, symgen

from symgen.errors import UserError
from symgen.training.run_dir import refuse_foreign_folder


def one_line(result) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2 and "Traceback" not in result.stderr and len(lines) == 1, result.stderr
    return lines[0]


def test_a_folder_that_is_no_run_directory_is_refused_untouched(tmp_path: Path):
    repro = tmp_path / "repro"  # a reproduce output
    (repro / "runs" / "reverse" / "checkpoints").mkdir(parents=True)
    (repro / "claims.json").write_text("{}")
    checkpoints = repro / "runs" / "reverse" / "checkpoints"  # another run's checkpoints
    (checkpoints / "step_0000020.json").write_text('{"step": 20}')
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "todo.txt").write_text("read the paper")
    for folder in (repro, checkpoints, notes):
        before = sorted(p.name for p in folder.iterdir())
        resume = ["--resume"] if folder == notes else []
        result = symgen("train", "reverse", *TINY, "train.steps=2", "--out", str(folder), *resume)
        assert "is neither empty nor a run directory" in one_line(result)
        assert sorted(p.name for p in folder.iterdir()) == before


def test_a_run_directory_of_the_other_kind_is_refused(tmp_path: Path):
    stacked = tmp_path / "stacked"
    stacked.mkdir()
    (stacked / "seeds.json").write_text(json.dumps({"seeds": [0, 1]}))
    line = one_line(symgen("train", "reverse", *TINY, "train.steps=2", "--out", str(stacked)))
    assert "holds a stacked run (seeds 0,1): give --seeds 0,1" in line
    single = tmp_path / "single"
    single.mkdir()
    (single / "config.yaml").write_text("name: reverse\n")
    assert "holds a single run (config.yaml)" in one_line(
        symgen("train", "reverse", "--seeds", "0,1", "--out", str(single))
    )
    assert not (single / "seeds.json").exists()


def test_new_empty_and_run_folders_are_taken(tmp_path: Path):
    refuse_foreign_folder(tmp_path / "new", stacked=False)
    refuse_foreign_folder(tmp_path, stacked=True)  # empty
    (tmp_path / "metrics.jsonl").write_text("")
    refuse_foreign_folder(tmp_path, stacked=False)
    with pytest.raises(UserError, match="not a stacked one"):
        refuse_foreign_folder(tmp_path, stacked=True)
