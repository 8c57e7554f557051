"""The committed results book: every link resolves, and no file names the machine that wrote it."""

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
