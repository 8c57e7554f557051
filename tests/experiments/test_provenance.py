"""Provenance: commands recorded as the user would retype them, and no book in a tracked folder at a
`-dirty` commit."""

import json
import subprocess
from pathlib import Path

import pytest

from symgen.errors import UserError
from symgen.experiments import provenance
from symgen.experiments.book import merge
from symgen.experiments.provenance import command_line, dirty_note, portable, refuse_dirty_book
from symgen.experiments.report import write_claims


def test_paths_are_written_relative_to_the_outputs_parent(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "work").mkdir()
    args = ["reproduce", "--suite", "smoke", "--out", str(tmp_path / "results" / "smoke"), "--no-progress"]
    assert portable(args, tmp_path / "results" / "smoke") == [*args[:4], "smoke", "--no-progress"]
    # relative to the folder the command ran in, an --out=PATH, a --set KEY=/abs/path, a config given
    pre = f"train.init_from={tmp_path}/runs/pre"
    args = ["reproduce", "--out=results/smoke", "--set", pre, "--executor-config", "c.yaml"]
    assert portable(args, Path("results/smoke"), [Path("c.yaml")]) == [
        "reproduce", "--out=smoke", "--set", "train.init_from=../runs/pre", "--executor-config", "../c.yaml",
    ]  # fmt: skip
    # a book: its sources and --out, given from elsewhere
    monkeypatch.chdir(tmp_path / "work")
    args = ["report", "../parts/a", str(tmp_path / "parts" / "b"), "--out", "../book"]
    back = portable(args, Path("../book"), [Path("../parts/a"), tmp_path / "parts" / "b"])
    assert back == ["report", "parts/a", "parts/b", "--out", "book"]
    # a word that is no path (the suite's name) stays as it is
    assert portable(["--suite", "smoke", "--out", "x/smoke"], Path("x/smoke"))[1] == "smoke"


def test_command_line_reads_the_running_command(monkeypatch, tmp_path: Path):
    monkeypatch.setattr(
        "sys.argv", ["symgen", "report", str(tmp_path / "a b"), "--out", str(tmp_path / "bk")]
    )
    assert command_line(tmp_path / "bk", [tmp_path / "a b"]) == "symgen report 'a b' --out bk"
    assert command_line() == f"symgen report '{tmp_path}/a b' --out {tmp_path}/bk"


def test_a_dirty_commit_is_named_in_one_line():
    assert dirty_note({"out": "abc123", "part x": "def456"}) == ""
    note = dirty_note({"out": "abc123", "part x": "def456-dirty"})
    assert "part x at def456-dirty" in note and "\n" not in note and "out at" not in note


def _repo(path: Path) -> Path:
    """A git repository with one committed file, then changed (its tracked files differ from HEAD)."""
    path.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    (path / ".gitignore").write_text("scratch/\n")
    (path / "code.py").write_text("x = 1\n")
    subprocess.run([*git, "init", "-q"], cwd=path, check=True)
    subprocess.run([*git, "add", "."], cwd=path, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first"], cwd=path, check=True)
    (path / "code.py").write_text("x = 2\n")
    return path


def test_a_book_at_a_dirty_commit_is_refused_only_in_a_folder_the_repository_tracks(tmp_path: Path):
    repo = _repo(tmp_path / "repo")
    dirty = provenance.commit(repo)
    assert dirty.endswith("-dirty")
    with pytest.raises(UserError, match="records commit .*-dirty"):
        refuse_dirty_book(repo / "docs" / "results", {"this checkout": dirty}, repo)
    with pytest.raises(UserError, match="part quick-a records commit abc-dirty"):
        refuse_dirty_book(
            repo / "docs" / "results", {"this checkout": "abc", "part quick-a": "abc-dirty"}, repo
        )
    refuse_dirty_book(repo / "scratch" / "book", {"this checkout": dirty}, repo)  # git ignores it
    refuse_dirty_book(tmp_path / "elsewhere", {"this checkout": dirty}, repo)  # outside the repository
    refuse_dirty_book(repo / "docs" / "results", {"this checkout": "abc"}, repo)  # clean


def test_merge_refuses_a_dirty_part_into_the_repository_before_writing(tmp_path: Path, monkeypatch):
    repo = _repo(tmp_path / "repo")
    subprocess.run(["git", "checkout", "-q", "code.py"], cwd=repo, check=True)  # the checkout is clean
    monkeypatch.setattr(provenance, "SOURCE", repo)
    part = tmp_path / "part"
    part.mkdir()
    write_claims(part / "claims.json", {"suite": "quick", "seeds": [0], "commit": "0123abc-dirty"}, [])
    (part / "report.html").write_text("<html></html>")
    with pytest.raises(UserError, match="part part records commit 0123abc-dirty"):
        merge([part], repo / "docs" / "results", "symgen report")
    assert not (repo / "docs").exists()
    book = merge([part], tmp_path / "book", "symgen report")  # outside the repository: written
    assert json.loads(book.with_name("claims.json").read_text())["commit"] == provenance.commit(repo)
