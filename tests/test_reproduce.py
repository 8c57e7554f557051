import json
from pathlib import Path

from conftest import symgen

from symgen.experiments.claims import PAPER_CLAIMS, VERDICTS

JUDGED = [v for v in VERDICTS if v != "not run"]


def test_smoke_suite_runs_every_experiment_and_fills_every_claim(tmp_path: Path):
    out = tmp_path / "repro"
    result = symgen("reproduce", "--suite", "smoke", "--out", str(out), "--no-progress", timeout=1200)
    assert result.returncode == 0, result.stderr[-2000:]
    claims = json.loads((out / "claims.json").read_text())
    assert [c["id"] for c in claims] == list(PAPER_CLAIMS)
    assert all(
        set(c) == {"id", "claim", "paper", "measured", "verdict", "evidence", "values"} for c in claims
    )
    assert all(c["verdict"] in JUDGED and c["measured"] for c in claims)
    assert all(isinstance(c["values"], dict) and c["values"] for c in claims), [
        c["id"] for c in claims if not c["values"]
    ]
    page = (out / "report.html").read_text()
    assert page.count("data:image/png;base64,") >= 8 and "A7.1" in page and "Time taken" in page

    again = symgen("reproduce", "--suite", "smoke", "--only", "reverse", "--out", str(out), "--no-progress")
    assert again.returncode == 0 and "1 of 1 runs finished already" in again.stderr
    claims = json.loads((out / "claims.json").read_text())  # the finished experiments stay reported
    assert all(c["verdict"] in JUDGED for c in claims)


def test_list_names_experiments_and_runs():
    result = symgen("reproduce", "--suite", "quick", "--list")
    assert result.returncode == 0 and result.stdout.startswith("reverse")
    names = [line.split("\t")[0] for line in result.stdout.splitlines() if not line.startswith(" ")]
    assert {"reverse", "unseen", "theory", "transfer", "kg-systematic", "kg-depth", "kg-inside"} <= set(names)
    assert "implicit-horn" in names
