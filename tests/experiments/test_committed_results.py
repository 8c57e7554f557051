"""The committed results book: every link resolves, and no file names the machine that wrote it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from symgen.experiments.book import LINK

RESULTS = Path(__file__).resolve().parents[2] / "docs" / "results"
REPORTS = sorted(RESULTS.rglob("report.html"))
ABSOLUTE = re.compile(r'"/(?:work|tmp|root|home|Users)/')


def test_the_book_holds_reports():
    assert REPORTS, f"no report.html under {RESULTS}"


@pytest.mark.parametrize("report", REPORTS, ids=lambda p: str(p.relative_to(RESULTS)))
def test_every_relative_link_of_a_committed_report_resolves(report: Path):
    links = [link for link in LINK.findall(report.read_text()) if not link.startswith("data")]
    dead = [link for link in links if not (report.parent / link).is_file()]
    assert not dead, f"{report.relative_to(RESULTS)} links to missing files: {dead[:5]}"


@pytest.mark.parametrize(
    "claims", sorted(RESULTS.rglob("claims.json")), ids=lambda p: str(p.relative_to(RESULTS))
)
def test_committed_claims_name_no_absolute_path(claims: Path):
    assert not ABSOLUTE.search(claims.read_text()), f"{claims} names an absolute path"
