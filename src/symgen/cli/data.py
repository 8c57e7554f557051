"""`symgen data`: write the datasets of both papers, and check any of them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from symgen.errors import UserError


@click.group()
def data() -> None:
    """Generate and check datasets (Horn-clause problems, knowledge graphs)."""


@data.command()
@click.option("--out", type=click.Path(path_type=Path), required=True, help="Output directory.")
@click.option("--n-train", type=int, default=20_000, show_default=True)
@click.option("--n-test", type=int, default=500, show_default=True, help="Problems per test scenario.")
@click.option("--n-seen", type=int, default=200, show_default=True, help="Seen symbols used in training.")
@click.option("--n-unseen", type=int, default=100, show_default=True)
@click.option("--max-depth", type=int, default=3, show_default=True, help="Proof depths 1..D.")
@click.option("--min-rules", type=int, default=4, show_default=True)
@click.option("--max-rules", type=int, default=8, show_default=True)
@click.option("--min-facts", type=int, default=2, show_default=True)
@click.option("--max-facts", type=int, default=4, show_default=True)
@click.option("--max-body", type=int, default=3, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
def horn(out: Path, **sizes: int) -> None:
    """Horn-clause problems with a forward-chaining chain of thought: train.jsonl, three test
    scenarios (all_seen, query_unseen, all_unseen) and vocab.json."""
    from symgen.tasks.horn import HornConfig
    from symgen.tasks.horn_io import write_dataset

    cfg = HornConfig(**sizes).validate()
    summary = write_dataset(cfg, out)
    click.echo(json.dumps(summary, indent=1, default=str))


# the `data kg` options of one setting only; `data horn` has no setting, and its every option applies
KG_ONLY = {
    "systematic": ("out_degree", "ood_fraction", "phi"),
    "depth": ("max_hops", "per_hop", "test_per_hop"),
}


@data.command()
@click.option("--setting", type=click.Choice(["systematic", "depth"]), required=True)
@click.option("--out", type=click.Path(path_type=Path), required=True, help="Output directory.")
@click.option("--entities", type=int, default=None, help="Default: paper value of the setting.")
@click.option("--relations", type=int, default=None)
@click.option("--out-degree", type=int, default=None, help="systematic: relations per entity.")
@click.option("--ood-fraction", type=float, default=None, help="systematic: share of OOD atomic facts.")
@click.option("--phi", type=float, default=None, help="systematic: 2-hop facts per ID atomic fact.")
@click.option("--max-hops", type=int, default=None, help="depth: chains of 2..H hops.")
@click.option("--per-hop", type=int, default=None, help="depth: training chains per hop count.")
@click.option("--test-per-hop", type=int, default=None, help="depth: test chains per hop count.")
@click.option("--seed", type=int, default=None)
def kg(setting: str, out: Path, **options: float | None) -> None:
    """Knowledge-graph k-hop queries: graph.json, train.jsonl and test files."""
    import dataclasses

    from symgen.tasks.kg import paper_depth, paper_systematic, write_dataset

    other = "depth" if setting == "systematic" else "systematic"
    misplaced = [k for k in KG_ONLY[other] if options[k] is not None]
    if misplaced:
        option = "--" + misplaced[0].replace("_", "-")
        raise UserError(f"data kg: {option} applies to --setting {other} only, not {setting}")
    base = paper_systematic() if setting == "systematic" else paper_depth()
    cfg = dataclasses.replace(base, **{k: v for k, v in options.items() if v is not None})
    cfg.validate()
    click.echo(json.dumps(write_dataset(cfg, out, progress=True), indent=1, default=str))


@data.command()
@click.argument("path", type=click.Path(path_type=Path))
def check(path: Path) -> None:
    """Validate a Horn-clause JSONL file or dataset directory (every file `symgen data horn` writes
    must be there; every record of every file, with the independent checker, of its file's scenario)
    or audit a knowledge-graph dataset directory. A Horn dataset's seen/unseen split is checked
    against its vocab.json: no unseen symbol in train or all_seen, query_unseen's query unseen and
    its other atoms seen, all_unseen unseen throughout, every atom and special token in vocab.json.
    Exit 1 naming the first problem; exit 2 when PATH is not a dataset at all (missing, an empty
    folder or file, binary, a folder of no dataset)."""
    from symgen.tasks import checker, kg_audit
    from symgen.tasks.horn import SPECIAL_TOKENS
    from symgen.tasks.horn_io import check_dataset, file_scenario, is_dataset

    if not path.exists():
        raise UserError(f"{path} does not exist")
    if path.is_dir():
        if not any(path.iterdir()):
            raise UserError(f"{path} is an empty folder: no dataset to check")
        for name in ("graph.json", "config.json", "vocab.json"):
            if (path / name).is_file():
                _refuse_non_text(path / name)
        if not is_dataset(path) and not kg_audit.detect(path):
            raise UserError(
                f"{path} is a directory without graph.json or vocab.json: give a JSONL file, a Horn "
                "dataset or a KG dataset"
            )
    else:
        _refuse_non_text(path)
    try:
        if path.is_dir() and is_dataset(path) and not kg_audit.detect(path):
            for f, n in check_dataset(path):
                click.echo(f"{f}: {n} records valid")
            n_seen, n_unseen = checker.check_split(path, SPECIAL_TOKENS)
            click.echo(
                f"{path}: vocab.json holds every atom ({n_seen} seen, {n_unseen} unseen symbols) and the "
                "special tokens; no unseen symbol in train or all_seen, query_unseen's queries alone "
                "unseen, all_unseen unseen throughout"
            )
        elif path.is_dir():
            click.echo(f"auditing the knowledge-graph dataset in {path}...")
            problems = kg_audit.audit_dir(path)
            if problems:
                raise UserError(
                    f"{path}: {problems[0]}" + (f" (+{len(problems) - 1} more)" if len(problems) > 1 else "")
                )
            click.echo(f"{path}: knowledge-graph dataset passes the audit")
        else:
            n = checker.check_file(path, file_scenario(path.name))
            click.echo(f"{path}: {n} records valid")
    except UserError as e:
        print(f"symgen: invalid: {e}", file=sys.stderr)
        sys.exit(1)


def _refuse_non_text(path: Path) -> None:
    """A file that is empty or not UTF-8 text is no dataset: refused before any checking (exit 2)."""
    data = path.read_bytes()
    if not data.strip():
        raise UserError(f"{path} is empty: no records to check")
    try:
        text = b"\x00" not in data and bool(data.decode("utf-8"))
    except UnicodeDecodeError:
        text = False
    if not text:
        raise UserError(f"{path} is not a text file (a JSON or JSONL dataset file is expected)")
