"""One results book from several `reproduce` outputs (`symgen report DIR [DIR ...] --out OUT`).

Parts of a suite run separately (`--only`, with any seeds) each write DIR/claims.json and
DIR/report.html. The book copies each part into OUT/NAME/ (its report, its claims, every file its
report links to: figures, and each run's config, metrics and summary, so that `symgen report
--check` can analyse the part anew), then writes
OUT/claims.json and OUT/report.html with every claim once, judged by the part that measured it most
(`evidence_weight`: the most judged part-seeds, then the most of the claim's runs held, then the
most seeds; the later on the command line when they tie), beside that part's command, commit and
seeds. A claim no part measured reads `not run` and names the `--only` that measures it. Every link
of the book points inside OUT, relative to the page that holds it. A book written into a folder the
repository tracks (docs/results) is refused while the checkout or a part records a `-dirty` commit.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from symgen.errors import UserError, writable_dir
from symgen.experiments.claims import NOT_JUDGED, ClaimResult
from symgen.experiments.cost import from_header, time_section
from symgen.experiments.provenance import refuse_dirty_book, stamp
from symgen.experiments.registry import default_claims, measured_by
from symgen.experiments.report import read_claims, write_claims, write_report
from symgen.experiments.types import Link, Section, Table
from symgen.experiments.unseen.experiment import ROW_GEOMETRY_FILE

LINK = re.compile(r'(?:href|src)="([^"#:]+)"')


def part_name(source: Path, taken: set[str]) -> str:
    name, n = source.resolve().name, 2
    while name in taken:
        name, n = f"{source.resolve().name}-{n}", n + 1
    return name


# what an analysis reads of a run, small enough to commit: the book keeps them for every run (and a
# stacked run's seed list), so that `symgen report --check` can analyse a part anew (weights stay out)
ANALYSED_FILES = ("config.yaml", "metrics.jsonl", "summary.json")
RUN_FILES = (*ANALYSED_FILES, "seeds.json")
# and, where an analysis wrote them, the small summaries it read of the weights: paper A's unseen rows
# (RUN/rows.json) and the looped models' iterations, margins, halting and logit lens (RUN/analysis/)
LOOP_ANALYSES = ("iterations", "margins", "halting", "lens")


def kept_in_book(path: Path) -> bool:
    """A run's file a book keeps: RUN_FILES, rows.json, and the looped analyses' JSON (halting's one
    per KL threshold)."""
    if not path.is_file():
        return False
    if path.name in (*RUN_FILES, ROW_GEOMETRY_FILE):
        return True
    return path.parent.name == "analysis" and path.suffix == ".json" and path.stem.startswith(LOOP_ANALYSES)


def copy_run_files(source: Path, target: Path) -> None:
    """RUN_FILES of every run (and seed) under source/runs, into target/runs."""
    for path in sorted((source / "runs").rglob("*")) if (source / "runs").is_dir() else []:
        if kept_in_book(path):
            (target / path.relative_to(source)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target / path.relative_to(source))


def copy_part(source: Path, target: Path) -> list[str]:
    """The part's report and claims, every file its report links to, and what an analysis reads of
    each run (RUN_FILES); returns the links that could not be resolved (none, for an output
    `reproduce` wrote)."""
    target.mkdir(parents=True, exist_ok=True)
    copy_run_files(source, target)
    page = (source / "report.html").read_text()
    (target / "report.html").write_text(page)
    shutil.copyfile(source / "claims.json", target / "claims.json")
    missing = []
    for link in sorted(set(LINK.findall(page))):
        if link.startswith("data"):
            continue
        src = source / link
        if src.is_file():
            (target / link).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, target / link)
        else:
            missing.append(link)
    return missing


def evidence_weight(claim: ClaimResult, source: Path) -> tuple[int, int, int]:
    """How much a part measured of a claim: its parts judged (pass or fail) summed over seeds, then
    how many of the claim's evidence runs the part holds, then its seeds. Seeds alone would let a part
    with more seeds but without the claim's runs (every part `not judged`) displace one that judged
    it; among parts that judged nothing, one that trained the runs says why (an arm never learned)."""
    judged = sum(o != NOT_JUDGED for part in claim.parts for o in part.outcomes.values())
    runs = [e.removeprefix("runs/").split("/")[0] for e in claim.evidence if not e.endswith(".png")]
    held = sum((source / "runs" / name).is_dir() for name in dict.fromkeys(runs))
    return judged, held, len(claim.seeds)


def _rebased(claim: ClaimResult, part: str, header: dict) -> ClaimResult:
    """The claim as the book shows it: evidence inside the part's folder, and where it came from."""
    claim.evidence = [
        f"{part}/{e}" if e.endswith(".png") or e.startswith("runs/") else e for e in claim.evidence
    ]
    claim.source = {
        "part": part,
        "command": header.get("command", ""),
        "commit": header.get("commit", ""),
        "seeds": header.get("seeds", []),
    }
    return claim


def choose_claims(parts: list[tuple[str, Path, dict, list[ClaimResult]]]) -> dict[str, ClaimResult]:
    """Every claim once, from the part (name, folder, header, claims) that measured it most; a claim
    no part measured reads `not run` and names the `--only` that measures it."""
    claims = default_claims()
    weights: dict[str, tuple[int, int, int]] = {}
    for name, source, header, judged in parts:
        for claim in judged:
            if claim.verdict == "not run" or claim.id not in claims:
                continue
            weight = evidence_weight(claim, source)
            if claims[claim.id].verdict == "not run" or weight >= weights[claim.id]:
                claims[claim.id], weights[claim.id] = _rebased(claim, name, header), weight
    for cid, claim in claims.items():
        if claim.verdict == "not run":
            claim.notes = {"": f"no part measured it: `symgen reproduce --only {measured_by(cid)}` does"}
    return claims


def merge(sources: list[Path], out: Path, command: str) -> Path:
    """Write the book into OUT from the `reproduce` outputs in `sources`."""
    for source in sources:
        if not (source / "claims.json").is_file() or not (source / "report.html").is_file():
            raise UserError(f"{source} holds no finished reproduce output (claims.json and report.html)")
    names, taken = [], set()
    for source in sources:
        names.append(part_name(source, taken))
        taken.add(names[-1])
    read = [read_claims(source / "claims.json") for source in sources]
    # stamped before the book writes: a book inside the source tree would otherwise mark it -dirty itself
    book_header = stamp(command)
    commits = {"this checkout": book_header["commit"]}
    commits |= {f"part {name}": str(h.get("commit", "")) for name, (h, _) in zip(names, read, strict=True)}
    refuse_dirty_book(out, commits)
    writable_dir(out)
    parts = []
    for source, name, (header, _) in zip(sources, names, read, strict=True):
        parts.append((name, header, copy_part(source, out / name)))
    claims = choose_claims(
        [(name, source, *claims) for source, name, claims in zip(sources, names, read, strict=True)]
    )
    header = book_header | {"suite": _suites(parts), "seeds": _seeds(parts), "parts": [p[0] for p in parts]}
    write_claims(out / "claims.json", header, list(claims.values()))
    figures = [
        out / e for c in claims.values() for e in c.evidence if e.endswith(".png") and (out / e).is_file()
    ]
    evidence = Section(
        "Evidence figures", ["The figures the claims name, each from its part."], list(dict.fromkeys(figures))
    )
    evidence.figure_notes = {str(f): str(f.relative_to(out)) for f in evidence.figures}
    sections = [evidence, _time_section(parts)]
    provenance = _provenance(header, parts, list(claims.values()))
    return write_report(out / "report.html", header, sections, list(claims.values()), provenance)


def recorded_commits(out: Path) -> dict[str, str]:
    """The commits an output records, its own and (a book) each part's: {what: commit}."""
    header, _ = read_claims(out / "claims.json")
    commits = {str(out): str(header.get("commit", ""))}
    for name in header.get("parts", []):
        if (out / name / "claims.json").is_file():
            commits[f"part {name}"] = str(read_claims(out / name / "claims.json")[0].get("commit", ""))
    return commits


def _suites(parts: list[tuple[str, dict, list[str]]]) -> str:
    return "+".join(dict.fromkeys(str(h.get("suite", "")) for _, h, _ in parts))


def _seeds(parts: list[tuple[str, dict, list[str]]]) -> list[int]:
    return sorted({s for _, h, _ in parts for s in h.get("seeds", [])})


def _provenance(header: dict, parts: list[tuple[str, dict, list[str]]], claims: list[ClaimResult]) -> Table:
    """The book's provenance: its own command, then each part's command, commit and seeds, the claims
    it judges in this book and its training time."""
    rows: list[list[object]] = [
        ["this book", header.get("command", ""), header.get("commit", ""), "", "", "", "", ""]
    ]
    for name, part_header, missing in parts:
        timing = part_header.get("timing", {})
        rows.append(
            [
                Link(name, f"{name}/report.html"),
                part_header.get("command", ""),
                part_header.get("commit", ""),
                ", ".join(map(str, part_header.get("seeds", []))),
                ", ".join(c.id for c in claims if c.source.get("part") == name) or "none",
                _minutes(timing.get("train_seconds_of_runs")),
                _minutes(timing.get("wall_seconds")),
                f"{len(missing)} missing" if missing else "",
            ]
        )
    return Table(
        [
            "part",
            "command",
            "commit",
            "seeds",
            "claims it judges here",
            "training time",
            "last invocation",
            "links",
        ],
        rows,
        "Each command as its output recorded it (typed from the output's parent folder); each part's own "
        "report is NAME/report.html, "
        "with its experiments and training time run by run. Training time: the runs' own seconds, a process "
        "counted once (stacked seeds share one), summed over resumes; last invocation: the wall clock of the "
        "command that wrote the part.",
    )


def _minutes(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds / 60:.0f} min"


def _time_section(parts: list[tuple[str, dict, list[str]]]) -> Section:
    """Every part's runs with the training time each measured: where the book's compute went."""
    timings = [(name, header.get("timing", {}).get("runs", {})) for name, header, _ in parts]
    return time_section([c for name, runs in timings for c in from_header(runs, name)], len(parts))
