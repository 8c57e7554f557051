"""`symgen report --check BOOK`: re-derive a book's claims from its committed files and name every
difference.

Two levels, each from the files alone:

- **the book from its parts**: every claim chosen anew from the parts' claims.json (BOOK/NAME/), as
  `symgen report` chose it, its verdict derived from its parts by today's rule, and compared with
  BOOK/claims.json: verdict, each part's outcomes, measured text and values, evidence and source;
- **each part from its runs**: where a part holds, for every run of an experiment it reports, the
  files the analysis reads (config.yaml, metrics.jsonl, summary.json), the experiment is analysed anew
  on them and its claims compared with the part's claims.json. A part that lacks them is named, with
  the first missing file: its numbers can then be checked against the book only.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from symgen.errors import UserError
from symgen.experiments.book import ANALYSED_FILES, choose_claims
from symgen.experiments.registry import experiments
from symgen.experiments.report import read_claims
from symgen.experiments.suite import Selection, analyze_experiment, seed_views, seeded

COMPARED = ("verdict", "parts", "evidence", "source")  # what a claim states; notes are diagnostics


@dataclass
class CheckResult:
    differences: list[str] = field(default_factory=list)
    rederived: list[str] = field(default_factory=list)  # parts re-analysed from their runs
    not_rederivable: dict[str, str] = field(default_factory=dict)  # part -> the first file it lacks

    def lines(self) -> list[str]:
        out = [f"differs: {d}" for d in self.differences]
        out += [f"part {p}: re-analysed from its runs, identical" for p in self.rederived]
        out += [
            f"part {p}: not re-derivable from its runs ({why})" for p, why in self.not_rederivable.items()
        ]
        return out


def _raw_claims(path: Path) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in json.loads(path.read_text())["claims"]}


def _differences(
    where: str, expected: dict[str, dict], found: dict[str, dict], keys: tuple[str, ...]
) -> list[str]:
    """Each claim of `expected` against `found`, key by key, as one line per difference."""
    out = []
    for cid, claim in expected.items():
        other = found.get(cid)
        if other is None:
            out.append(f"{where}: {cid} is missing")
            continue
        for key in keys:
            if json.dumps(claim.get(key), sort_keys=True) != json.dumps(other.get(key), sort_keys=True):
                out.append(f"{where}: {cid}'s {key} differs from what its files give")
    return out


def check_book(book: Path) -> CheckResult:
    """Both levels on the book in `book` (a folder `symgen report` wrote)."""
    if not (book / "claims.json").is_file():
        raise UserError(
            f"report --check {book}: no claims.json there (give the folder `symgen report` wrote)"
        )
    header, _ = read_claims(book / "claims.json")
    names = header.get("parts")
    if not names:
        raise UserError(f"report --check {book}: its claims.json names no parts; it is no book")
    result = CheckResult()
    parts = []
    for name in names:
        if not (book / name / "claims.json").is_file():
            result.differences.append(f"part {name}: its claims.json is not in the book")
            continue
        parts.append((name, book / name, *read_claims(book / name / "claims.json")))
    chosen = {cid: c.to_dict() for cid, c in choose_claims(parts).items()}
    result.differences += _differences("book", _raw_claims(book / "claims.json"), chosen, COMPARED)
    for name, folder, part_header, _ in parts:
        why, differences = rederive_part(folder, part_header, name)
        result.differences += differences
        if why:
            result.not_rederivable[name] = why
        else:
            result.rederived.append(name)
    return result


def _selection(header: dict) -> Selection:
    return Selection(tuple(header.get("runs", ())), tuple(header.get("set", ())))


def rederive_part(folder: Path, header: dict, name: str) -> tuple[str, list[str]]:
    """Analyse the part anew from its runs' files: ('', each difference from its claims.json), or
    (why it cannot: the first file missing, [])."""
    suite, seeds = header.get("suite", ""), tuple(header.get("seeds") or (0,))
    by_name = {e.name: e for e in experiments()}
    asked = [by_name[n] for n in header.get("experiments", []) if n in by_name]
    if not asked:
        return "its header names no experiment this version knows", []
    if not (folder / "runs").is_dir():
        return "runs/ is not committed", []
    selection = _selection(header)
    plans = []
    for exp in asked:
        specs = seeded(selection.apply(exp.runs(suite)), seeds)
        present = [r for r in specs if (folder / "runs" / r.name).is_dir()]
        for view in seed_views(present, folder / "runs").values():  # the folders the analysis reads
            for run_dir in view.values():
                lacking = next((f for f in ANALYSED_FILES if not (run_dir / f).is_file()), None)
                if lacking:
                    return f"{run_dir.relative_to(folder)}/{lacking} is not committed", []
        if not present:
            return f"none of {exp.name}'s runs is committed", []
        plans.append((exp, present, tuple(r.name for r in exp.runs(suite) if r not in present)))
    found: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        shutil.copytree(folder / "runs", out / "runs")
        for exp, present, left_out in plans:
            exp.invocation_sets = selection.sets
            try:
                _, judged = analyze_experiment(exp, suite, present, out, left_out)
            except UserError as e:  # an analysis that needs weights the book does not hold
                return f"{exp.name}'s analysis needs more than the book holds: {e}", []
            found |= {cid: c.to_dict() for cid, c in judged.items()}
    recorded = {cid: c for cid, c in _raw_claims(folder / "claims.json").items() if cid in found}
    return "", _differences(f"part {name}", recorded, found, ("verdict", "parts"))
