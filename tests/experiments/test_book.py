"""`symgen report`: several reproduce outputs merged into one book whose links all resolve inside it."""

import json
import re
from pathlib import Path

from conftest import symgen

from symgen.experiments.registry import default_claims


def test_two_outputs_of_different_experiments_make_one_claims_table(tmp_path: Path):
    parts = {"theory": tmp_path / "part-theory", "transfer": tmp_path / "part-transfer"}
    for only, out in parts.items():
        done = symgen(
            "reproduce", "--suite", "smoke", "--only", only, "--out", str(out), "--no-progress", timeout=900
        )
        assert done.returncode == 0, done.stderr[-2000:]
    book = tmp_path / "book"
    merged = symgen("report", str(parts["theory"]), str(parts["transfer"]), "--out", str(book))
    assert merged.returncode == 0, merged.stderr[-2000:]
    data = json.loads((book / "claims.json").read_text())
    claims = {c["id"]: c for c in data["claims"]}
    assert list(claims) == list(default_claims()) and data["command"].startswith("symgen report")
    assert claims["A7.7"]["verdict"] != "not run" and claims["A7.7"]["source"]["part"] == "part-theory"
    assert claims["A7.6"]["verdict"] != "not run" and claims["A7.6"]["source"]["part"] == "part-transfer"
    assert "--only kg-systematic" in claims["B5.1"]["notes"][""] and claims["B5.1"]["verdict"] == "not run"
    for claim in claims.values():  # evidence inside the book, never absolute
        for item in claim["evidence"]:
            assert not Path(item).is_absolute() and (not item.endswith(".png") or (book / item).is_file())
    for page in [book / "report.html", *book.glob("*/report.html")]:
        for link in re.findall(r'(?:href|src)="([^"#:]+)"', page.read_text()):
            assert (page.parent / link).is_file(), f"{page}: dead link {link}"
    assert (book / "part-theory" / "report.html").is_file() and (
        book / "part-transfer" / "claims.json"
    ).is_file()


def test_a_folder_without_an_output_is_refused_in_one_line(tmp_path: Path):
    done = symgen("report", str(tmp_path / "nothing"), "--out", str(tmp_path / "book"))
    assert (
        done.returncode == 2
        and done.stderr.count("\n") == 1
        and "no finished reproduce output" in done.stderr
    )
