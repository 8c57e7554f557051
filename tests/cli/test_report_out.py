"""`report --out` may not be, sit inside, or hold one of the outputs it merges."""

from pathlib import Path

from conftest import symgen


def test_a_book_over_one_of_its_outputs_is_refused_in_one_line(tmp_path: Path):
    part = tmp_path / "parts" / "quick-a"
    part.mkdir(parents=True)
    (part / "claims.json").write_text('{"claims": []}')
    (part / "report.html").write_text("<p>the part's own report</p>")
    cases = [("quick-a", "is"), ("quick-a/book", "sits inside"), (".", "holds")]
    for out, how in cases:
        done = symgen("report", "quick-a", "--out", out, cwd=part.parent)
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        assert done.returncode == 2 and len(lines) == 1, done.stderr
        assert f"report --out {out} {how} the merged output quick-a" in lines[0]
    assert sorted(p.name for p in part.iterdir()) == ["claims.json", "report.html"]
    assert (part / "report.html").read_text() == "<p>the part's own report</p>"
