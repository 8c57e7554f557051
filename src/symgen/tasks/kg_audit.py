"""Audit of a knowledge-graph dataset: every answer is right and the splits do not leak.

Checks:
- the graph is well formed: known tokens, tags "id"/"ood", one tail per (head, relation); in the
  depth setting every relation is a permutation of the entities and every fact is "id";
- every record is well formed (hops == len(input) - 1, len(bridges) == hops - 1, split name);
- every target and bridge equals the graph walk;
- training holds every atomic fact, and no training composition (hops >= 2) uses an OOD fact;
- test_id chains use only ID facts, test_ood chains only OOD facts; no test chain is in training;
- no query repeats inside a split; counts agree with config.json where it fixes them.

``audit`` and ``audit_dir`` return a list of problems, one line per kind of problem with a few
examples; an empty list means the dataset passes.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from symgen.errors import UserError
from symgen.tasks.kg import SPLITS, KGDataset, detect, load_dataset, no_gc

__all__ = ["audit", "audit_dir", "detect"]


class _Problems:
    def __init__(self, examples: int) -> None:
        self.examples = examples
        self.counts: Counter[str] = Counter()
        self.samples: dict[str, list[str]] = defaultdict(list)

    def add(self, kind: str, example: str) -> None:
        self.counts[kind] += 1
        if len(self.samples[kind]) < self.examples:
            self.samples[kind].append(example)

    def lines(self) -> list[str]:
        out = []
        for kind, n in self.counts.items():
            more = "; ..." if n > len(self.samples[kind]) else ""
            out.append(f"{kind} ({n}): " + "; ".join(self.samples[kind]) + more)
        return out


def audit_dir(data_dir: str | Path, examples: int = 3) -> list[str]:
    """Load and audit a dataset directory; a file that cannot be read is reported as a problem."""
    try:
        ds = load_dataset(data_dir)
    except UserError as e:
        return [str(e)]
    return audit(ds, examples=examples)


def _setting(ds: KGDataset) -> str:
    if ds.config is not None:
        return ds.config.setting
    return "depth" if "test" in ds.splits else "systematic"


def _check_graph(graph: dict[str, Any], setting: str, p: _Problems) -> dict[tuple[str, str], tuple[str, str]]:
    entities, relations = list(graph["entities"]), list(graph["relations"])
    ents, rels = set(entities), set(relations)
    if len(ents) != len(entities) or len(rels) != len(relations) or ents & rels:
        p.add("graph tokens repeat", "entities and relations must be distinct tokens")
    walk: dict[tuple[str, str], tuple[str, str]] = {}
    for i, f in enumerate(graph["facts"]):
        where = f"graph.json facts[{i}]"
        if not (isinstance(f, list) and len(f) == 4):
            p.add("malformed fact", f"{where}: {f!r}")
            continue
        h, r, t, tag = f
        if h not in ents or t not in ents or r not in rels:
            p.add("fact with unknown token", f"{where}: {f!r}")
            continue
        if tag not in ("id", "ood") or (setting == "depth" and tag != "id"):
            p.add("fact with a wrong id/ood tag", f"{where}: {f!r}")
        if (h, r) in walk:
            p.add("two tails for one (head, relation)", f"{where}: {h} {r}")
            continue
        walk[(h, r)] = (t, tag)
    if setting == "depth":
        for r in relations:
            heads = [h for h in entities if (h, r) in walk]
            tails = {walk[(h, r)][0] for h in heads}
            if len(heads) != len(entities) or len(tails) != len(entities):
                p.add(
                    "relation is not a permutation of the entities",
                    f"{r}: {len(heads)} heads, {len(tails)} distinct tails, {len(entities)} entities",
                )
    return walk


def audit(ds: KGDataset, examples: int = 3) -> list[str]:
    """Problems found in ``ds`` (empty: it passes)."""
    with no_gc():
        return _audit(ds, examples)


def _audit(ds: KGDataset, examples: int) -> list[str]:
    p = _Problems(examples)
    setting = _setting(ds)
    walk = _check_graph(ds.graph, setting, p)
    cfg = ds.config
    expected_splits = set(SPLITS[setting])
    if set(ds.splits) != expected_splits:
        p.add(
            "wrong split names",
            f"have {sorted(ds.splits)}, the {setting} setting needs {sorted(expected_splits)}",
        )

    queries: dict[str, set[tuple[str, ...]]] = {}
    hop_counts: dict[str, Counter[int]] = {}
    for split, records in ds.splits.items():
        seen: set[tuple[str, ...]] = set()
        hops_seen: Counter[int] = Counter()
        for i, rec in enumerate(records):
            where = f"{split}.jsonl:{i + 1}"
            if not _well_formed(rec, split, where, p):
                continue
            key = tuple(rec["input"])
            if key in seen:
                p.add(f"query repeated in {split}", f"{where}: {' '.join(key)}")
            seen.add(key)
            hops_seen[rec["hops"]] += 1
            tags = _walk(rec, walk, where, p)
            if tags is None:
                continue
            if split == "train" and rec["hops"] >= 2 and "ood" in tags:
                p.add("OOD fact inside a training composition", f"{where}: {' '.join(key)}")
            if split in ("test_id", "test") and "ood" in tags:
                p.add(f"{split} chain uses an OOD fact", f"{where}: {' '.join(key)}")
            if split == "test_ood" and "id" in tags:
                p.add("test_ood chain uses an ID fact", f"{where}: {' '.join(key)}")
            if split != "train" and rec["hops"] < 2:
                p.add("test record with fewer than 2 hops", f"{where}: {' '.join(key)}")
        queries[split] = seen
        hop_counts[split] = hops_seen

    train = queries.get("train", set())
    missing = [f"{h} {r}" for (h, r) in walk if (h, r) not in train]
    for m in missing:
        p.add("atomic fact missing from train", m)
    for split, seen in queries.items():
        if split != "train":
            for key in sorted(seen & train):
                p.add(f"{split} chain also in train", " ".join(key))

    if cfg is not None:
        _check_counts(ds, cfg, hop_counts, p)
    return p.lines()


def _well_formed(rec: Any, split: str, where: str, p: _Problems) -> bool:
    if not isinstance(rec, dict) or not {"input", "target", "hops", "split", "bridges"} <= set(rec):
        p.add("record lacks input/target/hops/split/bridges", where)
        return False
    inp, hops, bridges = rec["input"], rec["hops"], rec["bridges"]
    if not (isinstance(inp, list) and len(inp) >= 2 and all(isinstance(x, str) for x in inp)):
        p.add("input is not a list of at least 2 tokens", where)
        return False
    if not isinstance(hops, int) or hops != len(inp) - 1:
        p.add("hops != len(input) - 1", f"{where}: hops {hops!r}, input length {len(inp)}")
        return False
    if not isinstance(bridges, list) or len(bridges) != hops - 1:
        p.add("bridges do not have hops - 1 entries", f"{where}: {bridges!r}")
        return False
    if rec["split"] != split:
        p.add("split field differs from its file", f"{where}: {rec['split']!r}")
    return True


def _walk(rec: dict[str, Any], walk: dict, where: str, p: _Problems) -> list[str] | None:
    """Follow the graph; report a wrong target or bridge; return the id/ood tags of the facts used."""
    node, tags, path = rec["input"][0], [], []
    for r in rec["input"][1:]:
        step = walk.get((node, r))
        if step is None:
            p.add("query leaves the graph", f"{where}: no fact ({node}, {r})")
            return None
        node, tag = step
        tags.append(tag)
        path.append(node)
    if rec["target"] != node:
        p.add("target differs from the graph walk", f"{where}: target {rec['target']}, walk gives {node}")
    if list(rec["bridges"]) != path[:-1]:
        p.add(
            "bridges differ from the graph walk", f"{where}: bridges {rec['bridges']}, walk gives {path[:-1]}"
        )
    return tags


def _check_counts(ds: KGDataset, cfg: Any, hop_counts: dict[str, Counter[int]], p: _Problems) -> None:
    g = ds.graph
    if len(g["entities"]) != cfg.entities or len(g["relations"]) != cfg.relations:
        p.add(
            "graph size differs from config.json",
            f"{len(g['entities'])} entities, {len(g['relations'])} relations",
        )
    if len(g["facts"]) != cfg.n_atomic():
        p.add(
            "fact count differs from config.json", f"{len(g['facts'])} facts, config gives {cfg.n_atomic()}"
        )
    train = hop_counts.get("train", Counter())
    if cfg.setting == "systematic":
        n_ood = sum(1 for f in g["facts"] if isinstance(f, list) and len(f) == 4 and f[3] == "ood")
        if n_ood != cfg.n_ood_facts():
            p.add(
                "OOD fact count differs from config.json",
                f"{n_ood} OOD facts, config gives {cfg.n_ood_facts()}",
            )
        two = sum(n for k, n in train.items() if k >= 2)
        if two != cfg.n_train_two_hop() or set(train) - {1, 2}:
            p.add(
                "training compositions differ from config.json",
                f"{dict(train)} by hops, phi gives {cfg.n_train_two_hop()} 2-hop",
            )
        for split, cap in (("test_id", cfg.n_test_id), ("test_ood", cfg.n_test_ood)):
            n = sum(hop_counts.get(split, Counter()).values())
            if n > cap:
                p.add(f"{split} larger than config.json allows", f"{n} > {cap}")
    else:
        for split, want in (("train", cfg.per_hop), ("test", cfg.test_per_hop)):
            have = hop_counts.get(split, Counter())
            for k in range(2, cfg.max_hops + 1):
                if have.get(k, 0) != want:
                    p.add(
                        f"{split} chains per hop differ from config.json",
                        f"k={k}: {have.get(k, 0)}, want {want}",
                    )
            extra = sorted(k for k in have if k > cfg.max_hops or (k == 1 and split == "test"))
            if extra:
                p.add(f"{split} holds hop counts outside the config", str(extra))
