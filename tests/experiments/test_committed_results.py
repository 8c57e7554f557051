"""The committed results book: every link resolves, no file names the machine that wrote it, and every
commit it records is clean."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from symgen.experiments.book import LINK

RESULTS = Path(__file__).resolve().parents[2] / "docs" / "results"
REPORTS = sorted(RESULTS.rglob("report.html"))
ABSOLUTE = re.compile(r'"/(?:work|tmp|root|home|Users)/')
# a machine path anywhere in the text (a command's --out /work/results/x), and a commit with local changes
MACHINE_PATH = re.compile(r"(?<![\w.])/(?:work|tmp|root|home|Users|private|var|mnt|scratch)/")
DIRTY = re.compile(r"\b[0-9a-f]{7,40}-dirty\b")


def _ignored_by_git(paths: list[Path]) -> list[Path]:
    """Those of `paths` that git would leave out of a commit (none outside a git checkout)."""
    if not paths or shutil.which("git") is None or not (RESULTS.parents[1] / ".git").exists():
        return []
    done = subprocess.run(
        ["git", "check-ignore", "--no-index", *map(str, paths)],
        cwd=RESULTS.parents[1],
        capture_output=True,
        text=True,
        check=False,
    )
    return [Path(line) for line in done.stdout.splitlines()]


def test_the_book_holds_reports():
    assert REPORTS, f"no report.html under {RESULTS}"


@pytest.mark.parametrize("report", REPORTS, ids=lambda p: str(p.relative_to(RESULTS)))
def test_every_relative_link_of_a_committed_report_resolves(report: Path):
    links = [link for link in LINK.findall(report.read_text()) if not link.startswith("data")]
    dead = [link for link in links if not (report.parent / link).is_file()]
    assert not dead, f"{report.relative_to(RESULTS)} links to missing files: {dead[:5]}"
    # a file that exists here but that .gitignore leaves out is missing on a clean clone
    ignored = _ignored_by_git([report.parent / link for link in links])
    assert not ignored, f"{report.relative_to(RESULTS)} links to files git ignores: {ignored[:5]}"


@pytest.mark.parametrize(
    "claims", sorted(RESULTS.rglob("claims.json")), ids=lambda p: str(p.relative_to(RESULTS))
)
def test_committed_claims_name_no_absolute_path(claims: Path):
    assert not ABSOLUTE.search(claims.read_text()), f"{claims} names an absolute path"


@pytest.mark.parametrize(
    "page",
    sorted([*RESULTS.rglob("claims.json"), *RESULTS.rglob("report.html")]),
    ids=lambda p: str(p.relative_to(RESULTS)),
)
def test_committed_results_record_retypable_commands_at_clean_commits(page: Path):
    text = page.read_text()
    assert not MACHINE_PATH.search(text), f"{page.relative_to(RESULTS)}: {MACHINE_PATH.search(text)[0]!r}"
    assert not DIRTY.search(text), f"{page.relative_to(RESULTS)} records commit {DIRTY.search(text)[0]}"
