import json
from pathlib import Path

from conftest import symgen

from symgen.experiments.claims import PAPER_CLAIMS


def test_smoke_suite_writes_report_and_every_claim(tmp_path: Path):
    out = tmp_path / "repro"
    result = symgen(
        "reproduce", "--suite", "smoke", "--only", "reverse", "--out", str(out), "--no-progress", timeout=300
    )
    assert result.returncode == 0, result.stderr
    claims = json.loads((out / "claims.json").read_text())
    assert [c["id"] for c in claims] == list(PAPER_CLAIMS)
    assert all(c["verdict"] in ("reproduced", "not reproduced", "not run") for c in claims)
    assert set(claims[0]) == {"id", "claim", "paper", "measured", "verdict", "evidence"}
    page = (out / "report.html").read_text()
    assert "data:image/png;base64," in page and "A7.1" in page
    assert (out / "runs" / "reverse" / "summary.json").exists()

    again = symgen("reproduce", "--suite", "smoke", "--only", "reverse", "--out", str(out), "--no-progress")
    assert again.returncode == 0 and "1 of 1 runs finished already" in again.stderr


def test_list_names_experiments_and_runs():
    result = symgen("reproduce", "--suite", "quick", "--list")
    assert result.returncode == 0 and result.stdout.startswith("reverse")
