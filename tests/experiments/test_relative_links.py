"""Reports and books link relative to the page itself, whatever `--out` was (a relative one too)."""

import re
from pathlib import Path

from conftest import symgen

from symgen.experiments.suite import relative_evidence

ATTR = re.compile(r'(?:href|src)="([^"]*)"')


def _local_links(page: Path) -> list[str]:
    """Every href and src of the page but embedded images and in-page anchors."""
    return [
        link.split("#", 1)[0]
        for link in ATTR.findall(page.read_text())
        if not link.startswith(("data:", "#"))
    ]


def test_a_reproduction_and_a_book_with_relative_out_link_to_files_beside_them(tmp_path: Path):
    done = symgen(
        "reproduce", "--suite", "smoke", "--only", "reverse,unseen", "--out", "smoke", "--no-progress",
        cwd=tmp_path, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    book = symgen("report", "smoke", "--out", "book/smoke-book", cwd=tmp_path)
    assert book.returncode == 0, book.stderr[-2000:]
    pages = [tmp_path / "smoke" / "report.html", tmp_path / "book" / "smoke-book" / "report.html"]
    for page in pages:
        links = _local_links(page)
        assert any(link.endswith("summary.json") for link in links), f"{page}: no run linked"
        for link in links:
            assert not Path(link).is_absolute(), f"{page}: {link}"
            assert (page.parent / link).is_file(), f"{page}: dead link {link}"


def test_evidence_under_a_relative_out_is_read_from_out_itself(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = Path("smoke")
    items = ["smoke/runs/a", str(tmp_path / "smoke" / "runs" / "b" / "seed-1"), "c.png", "runs/d", "note"]
    rel = relative_evidence(items, out, out / "figures" / "seed-1")
    assert rel == ["runs/a", "runs/b/seed-1", "figures/seed-1/c.png", "runs/d", "note"]
