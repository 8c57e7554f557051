"""`symgen report`: several reproduce outputs merged into one book whose links all resolve inside it."""

import json
import re
from pathlib import Path

from conftest import symgen

from symgen.experiments.book import copy_run_files, merge
from symgen.experiments.claims import ClaimResult, JudgedPart
from symgen.experiments.registry import default_claims
from symgen.experiments.report import read_claims, write_claims


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
    assert list(claims) == list(default_claims())
    # commands as the user would retype them from the output's parent folder, no machine path
    assert data["command"] == "symgen report part-theory part-transfer --out book"
    part = json.loads((book / "part-theory" / "claims.json").read_text())["command"]
    assert part == "symgen reproduce --suite smoke --only theory --out part-theory --no-progress"
    assert str(tmp_path) not in (book / "report.html").read_text()
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
    # what an analysis reads of every run is in the book (so `report --check` can re-analyse), weights not
    run_files = [p.relative_to(parts["transfer"]) for p in (parts["transfer"] / "runs").rglob("config.yaml")]
    assert run_files and all((book / "part-transfer" / f).is_file() for f in run_files)
    assert not list((book / "part-transfer").rglob("*.safetensors"))
    # the transfer part's runs, each with the training time it measured, in the book's time table
    transfer_runs = json.loads((parts["transfer"] / "claims.json").read_text())["timing"]["runs"]
    page = (book / "report.html").read_text()
    assert transfer_runs and all(f"<td>{name}</td>" in page for name in transfer_runs)
    assert "Training time per run" in page and "runs of 2 parts" in page
    # every command once, in the provenance table: the book's, then each part's with the claims it judges
    provenance = page[page.index('<h2 id="provenance">') :]
    provenance = provenance[: provenance.index("</table>")]
    theory_row = provenance[provenance.index('<a href="part-theory/report.html">') :].split("</tr>")[0]
    assert f"<td>{part}</td>" in theory_row and "<td>A7.7</td>" in theory_row
    assert "<td>this book</td><td>symgen report part-theory part-transfer --out book</td>" in provenance
    assert page.count("--only theory --out part-theory") == 1


def test_a_folder_without_an_output_is_refused_in_one_line(tmp_path: Path):
    done = symgen("report", str(tmp_path / "nothing"), "--out", str(tmp_path / "book"))
    assert (
        done.returncode == 2
        and done.stderr.count("\n") == 1
        and "no finished reproduce output" in done.stderr
    )


def _output(out: Path, seeds: list[int], outcomes: list[str], trained: bool = False) -> Path:
    """A reproduce output holding claim A7.1 judged by one part with these per-seed outcomes; its
    evidence run is in the output when `trained`."""
    out.mkdir()
    if trained:
        (out / "runs" / "unseen-standard").mkdir(parents=True)
    claim = ClaimResult(
        "A7.1",
        default_claims()["A7.1"].claim,
        "A",
        "reproduced" if outcomes[0] == "pass" else "not judged",
        [JudgedPart("a part", outcomes[0], dict(zip(map(str, seeds), outcomes, strict=True)), {}, {})],
        seeds,
        ["unseen-standard"],
    )
    write_claims(out / "claims.json", {"suite": "quick", "seeds": seeds}, [claim])
    (out / "report.html").write_text("<html></html>")
    return out


def _merged_a71(sources: list[Path], book: Path):
    """Claim A7.1 as the book merged from `sources` holds it."""
    merge(sources, book, "symgen report")
    return {c.id: c for c in read_claims(book / "claims.json")[1]}["A7.1"]


def test_the_part_that_judged_a_claim_wins_over_one_with_more_seeds_that_did_not(tmp_path: Path):
    judged = _output(tmp_path / "judged", [0], ["pass"])
    unjudged = _output(tmp_path / "unjudged", [0, 1, 2], ["not judged"] * 3)
    for order in ([judged, unjudged], [unjudged, judged]):
        claim = _merged_a71(order, tmp_path / f"book-{order[0].name}")
        assert claim.source["part"] == "judged" and claim.verdict == "reproduced"
    more = _output(tmp_path / "more", [0, 1, 2], ["pass"] * 3)  # judged on more seeds: it wins
    assert _merged_a71([judged, more], tmp_path / "book-more").seeds == [0, 1, 2]


def test_among_parts_that_judged_nothing_the_one_that_trained_the_runs_wins(tmp_path: Path):
    trained = _output(tmp_path / "trained", [0], ["not judged"], trained=True)  # an arm never learned
    absent = _output(tmp_path / "absent", [0, 1, 2], ["not judged"] * 3)  # --runs left the run out
    for order in ([trained, absent], [absent, trained]):
        assert _merged_a71(order, tmp_path / f"book-{order[0].name}").source["part"] == "trained"


def test_a_book_keeps_what_each_analysis_reads_of_a_run_and_no_weights(tmp_path: Path):
    run = tmp_path / "part" / "runs" / "kg-depth-r8" / "seed-0"
    kept = ["config.yaml", "metrics.jsonl", "summary.json", "rows.json", "analysis/iterations.json"]
    kept += ["analysis/margins.json", "analysis/halting.json", "analysis/halting-eps0.01.json"]
    left = ["final.safetensors", "checkpoints/step_0000020.safetensors", "analysis/halting.png", "notes.json"]
    left += ["analysis/other.json"]
    for name in kept + left:
        (run / name).parent.mkdir(parents=True, exist_ok=True)
        (run / name).write_text("{}")
    copy_run_files(tmp_path / "part", tmp_path / "book")
    copied = {
        p.relative_to(tmp_path / "book" / "runs" / "kg-depth-r8" / "seed-0").as_posix()
        for p in (tmp_path / "book").rglob("*")
        if p.is_file()
    }
    assert copied == set(kept)
