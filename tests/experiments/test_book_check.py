"""`symgen report --check BOOK`: the committed book re-derived from its files, and a changed number
found wherever it was changed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import symgen

from symgen.experiments.book_check import check_book

RESULTS = Path(__file__).resolve().parents[2] / "docs" / "results"
PART = "quick-a-paper"  # a part that commits its runs' config, metrics and summary


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the committed book: its claims and every part folder."""
    out = tmp_path_factory.mktemp("book") / "results"
    out.mkdir()
    shutil.copyfile(RESULTS / "claims.json", out / "claims.json")
    for name in json.loads((RESULTS / "claims.json").read_text())["parts"]:
        shutil.copytree(RESULTS / name, out / name)
    return out


def _copy(book: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(book, tmp_path / "results"))


def test_the_committed_book_re_derives_from_its_files(book: Path):
    result = check_book(book)
    assert result.differences == []
    assert PART in result.rederived  # one part re-analysed from its runs at least
    assert "quick-theory" in result.not_rederivable  # a part without runs is named, not passed over


def test_a_changed_verdict_in_the_book_is_found(book: Path, tmp_path: Path):
    copy = _copy(book, tmp_path)
    data = json.loads((copy / "claims.json").read_text())
    claim = next(c for c in data["claims"] if c["id"] == "A7.3")
    claim["verdict"] = "reproduced"
    (copy / "claims.json").write_text(json.dumps(data))
    assert check_book(copy).differences == ["book: A7.3's verdict differs from what its files give"]


def test_a_changed_number_in_a_run_is_found_in_the_part_that_reads_it(book: Path, tmp_path: Path):
    copy = _copy(book, tmp_path)
    summary = copy / PART / "runs" / "unseen-copy-frozen" / "seed-5" / "summary.json"
    data = json.loads(summary.read_text())
    data["final"]["eval/all_seen/exact_match"] = 0.95  # as if copy + frozen had learned
    summary.write_text(json.dumps(data))
    differences = check_book(copy).differences
    assert f"part {PART}: A7.3's parts differs from what its files give" in differences
    assert all(d.startswith(f"part {PART}: ") for d in differences)  # the book's claims read the part


def test_the_command_exits_1_on_a_difference_and_refuses_a_folder_that_is_no_book(book: Path, tmp_path: Path):
    copy = _copy(book, tmp_path)
    data = json.loads((copy / PART / "claims.json").read_text())
    part = next(c for c in data["claims"] if c["id"] == "A7.1")["parts"][0]
    part["measured"] = {seed: text + " (edited)" for seed, text in part["measured"].items()}
    (copy / PART / "claims.json").write_text(json.dumps(data))
    done = symgen("report", "--check", str(copy))
    assert done.returncode == 1 and f"part {PART}: A7.1's parts differs" in done.stdout
    refused = symgen("report", "--check", str(tmp_path / "nothing"))
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    both = symgen("report", str(copy), "--check", str(copy))
    assert both.returncode == 2 and "takes no outputs" in both.stderr
