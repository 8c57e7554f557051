"""Horn-clause datasets on disk: the splits as JSONL files, ``vocab.json``, and a summary of what
was written (sizes, balance, depths, the shortcut audit)."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

from symgen.errors import UserError
from symgen.tasks import checker
from symgen.tasks.horn import SPECIAL_TOKENS, SPLITS, HornConfig, vocab_groups
from symgen.tasks.horn_audit import shortcut_audit
from symgen.tasks.horn_generator import generate_splits
from symgen.tasks.horn_text import encode_prompt, encode_target


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    path = Path(path)
    try:
        lines = path.read_text().splitlines()
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror}") from None
    out = []
    for i, line in enumerate(lines, 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise UserError(f"{path}:{i}: {checker.json_error(e)}") from None
    return out


# the files `write_dataset` writes: a dataset folder holds every one of them
DATASET_FILES = tuple(f"{split}.jsonl" for split in SPLITS) + ("vocab.json",)


def file_scenario(name: str) -> str | None:
    """The scenario of the records in a dataset file named `name` (None: not a split's file name)."""
    scenarios = {f"{split}.jsonl": split.removeprefix("test_") for split in SPLITS}
    return scenarios.get(name)


def is_dataset(directory: Path) -> bool:
    """Whether a folder is meant as a Horn dataset: it holds a file only a Horn dataset holds (any
    but train.jsonl, which a knowledge-graph dataset holds too). It must then hold them all."""
    return any((directory / name).is_file() for name in DATASET_FILES if name != "train.jsonl")


def check_dataset(directory: Path) -> list[tuple[Path, int]]:
    """Check a Horn dataset folder: it holds every file `write_dataset` writes, and every record of
    every JSONL file is valid and of its file's scenario. Returns (file, records) per JSONL file;
    raises UserError naming what is missing or the first bad record."""
    missing = [name for name in DATASET_FILES if not (directory / name).is_file()]
    if missing:
        raise UserError(
            f"{directory} is missing {', '.join(missing)}: a Horn dataset holds {', '.join(DATASET_FILES)} "
            "(as `symgen data horn` writes them)"
        )
    files = sorted(directory.glob("*.jsonl"))
    return [(f, checker.check_file(f, file_scenario(f.name))) for f in files]


def _write_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    with path.open("w") as fh:
        for r in records:
            fh.write(json.dumps(r, separators=(",", ":")))
            fh.write("\n")


def split_summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(records)
    hist = {
        lab: dict(sorted(Counter(r["depth"] for r in records if r["label"] == (lab == "true")).items()))
        for lab in ("true", "false")
    }
    return {
        "n": n,
        "frac_true": (sum(r["label"] for r in records) / n) if n else None,
        "depth_hist": hist,
        "mean_prompt_tokens": (sum(len(encode_prompt(r)) for r in records) / n) if n else None,
        "mean_target_tokens": (sum(len(encode_target(r)) for r in records) / n) if n else None,
    }


def write_dataset(cfg: HornConfig, out_dir: str | Path) -> dict[str, Any]:
    """Write the four splits and ``vocab.json`` to ``out_dir``; return a summary."""
    out_dir = Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"cannot create output directory {out_dir}: {e.strerror}") from None
    t0 = time.perf_counter()
    splits = generate_splits(cfg)
    gen_s = time.perf_counter() - t0
    for name, recs in splits.items():
        for i, r in enumerate(recs, 1):
            err = checker.check_record(r)
            if err:  # a generator bug, not a user error
                raise RuntimeError(f"generated {name} record {i} fails the checker: {err}")
        _write_jsonl(out_dir / f"{name}.jsonl", recs)
    (out_dir / "vocab.json").write_text(json.dumps(vocab_groups(cfg), indent=1) + "\n")
    audit = None
    if splits["train"] and splits["test_all_seen"]:
        audit = shortcut_audit(splits["train"], splits["test_all_seen"])
    return {
        "config": cfg.to_dict(),
        "generate_seconds": round(gen_s, 3),
        "vocab_size": len(SPECIAL_TOKENS) + cfg.n_symbols_total,
        "splits": {name: split_summary(recs) for name, recs in splits.items()},
        "audit_accuracy": audit,
    }


__all__ = [
    "DATASET_FILES",
    "check_dataset",
    "file_scenario",
    "is_dataset",
    "read_jsonl",
    "split_summary",
    "write_dataset",
]
