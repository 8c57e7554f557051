"""Knowledge-graph multi-hop data (Part B): the systematic and the depth setting.

Tokens are plain strings: entity ``i`` is ``e{i}`` (``e0``, ``e1``, ...) and relation ``j`` is
``r{j}`` (``r0``, ``r1``, ...). A k-hop query is ``[head, r1, ..., rk]``; the target is the one
tail entity reached by walking the graph, and ``bridges`` lists the k - 1 entities in between.

Record (one JSONL line)::

    {"input": ["e3", "r7", "r1"], "target": "e12", "hops": 2, "split": "train", "bridges": ["e40"]}

Settings:

- ``systematic`` (GrokkedTransformer-style): every entity gets ``out_degree`` distinct relations
  with uniformly random tails; atomic facts are split ID/OOD by fact. Training holds every atomic
  fact plus ``round(phi * |ID atomic|)`` 2-hop chains made of two ID facts. ``test_id`` holds
  held-out ID-ID chains (up to ``n_test_id``), ``test_ood`` chains whose two facts are both OOD
  (up to ``n_test_ood``). Chains mixing an ID and an OOD fact are dropped.
- ``depth``: every relation is a random permutation of the entities. Training holds every atomic
  fact plus ``per_hop`` unique uniformly drawn chains for each k = 2..max_hops; ``test`` holds
  ``test_per_hop`` further unique chains per k.

A dataset is a pure function of its config: all randomness comes from one
``numpy.random.default_rng(seed)``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import json
import math
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from symgen.errors import UserError

SETTINGS = ("systematic", "depth")
SPLITS = {"systematic": ("train", "test_id", "test_ood"), "depth": ("train", "test")}
_INT64_SAFE = 2**62


def entity_token(i: int) -> str:
    return f"e{i}"


def relation_token(j: int) -> str:
    return f"r{j}"


SYSTEMATIC_ONLY = ("out_degree", "ood_fraction", "phi", "n_test_id", "n_test_ood")
DEPTH_ONLY = ("max_hops", "per_hop", "test_per_hop")


@dataclass
class KGConfig:
    """Sizes of one knowledge-graph dataset. Defaults are the paper's systematic setting."""

    setting: str = "systematic"  # "systematic" | "depth"
    entities: int = 2000
    relations: int = 200
    out_degree: int = 20  # systematic: distinct relations per entity
    ood_fraction: float = 0.05  # systematic: share of atomic facts held out of compositions
    phi: float = 7.2  # systematic: 2-hop training facts = phi * |ID atomic facts|
    max_hops: int = 40  # depth: k = 2..max_hops
    per_hop: int = 15000  # depth: training chains per k
    test_per_hop: int = 750  # depth: test chains per k
    n_test_id: int = 3000  # systematic: held-out ID-ID 2-hop chains (or all left, if fewer)
    n_test_ood: int = 2000  # systematic: OOD-OOD 2-hop chains (or all, if fewer)
    seed: int = 0

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> KGConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise UserError(f"kg config: unknown key(s) {unknown}; known keys are {sorted(known)}")
        return cls(**data)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def setting_dict(self) -> dict[str, Any]:
        """The keys that apply to this config's setting (what a dataset's config.json lists)."""
        unused = DEPTH_ONLY if self.setting == "systematic" else SYSTEMATIC_ONLY
        return {k: v for k, v in self.to_dict().items() if k not in unused}

    # Derived sizes (systematic setting unless stated).
    def n_atomic(self) -> int:
        """Number of atomic facts (both settings)."""
        if self.setting == "depth":
            return self.entities * self.relations
        return self.entities * self.out_degree

    def n_ood_facts(self) -> int:
        return 0 if self.setting == "depth" else round(self.ood_fraction * self.n_atomic())

    def n_train_two_hop(self) -> int:
        return round(self.phi * (self.n_atomic() - self.n_ood_facts()))

    def validate(self) -> None:
        """Raise UserError, naming the field to fix, if this config cannot produce a dataset."""
        if self.setting not in SETTINGS:
            raise UserError(f"kg config: unknown setting {self.setting!r}; use one of {list(SETTINGS)}")
        _need_int(self, "entities", 1)
        _need_int(self, "relations", 1)
        _need_int(self, "seed", 0)
        if self.setting == "systematic":
            self._validate_systematic()
        else:
            self._validate_depth()

    def _validate_systematic(self) -> None:
        _need_int(self, "out_degree", 1)
        _need_int(self, "n_test_id", 0)
        _need_int(self, "n_test_ood", 0)
        if self.out_degree > self.relations:
            raise UserError(
                f"kg config: out_degree {self.out_degree} exceeds relations {self.relations}; "
                "lower out_degree or add relations"
            )
        _need_float(self, "ood_fraction")
        if not 0.0 <= self.ood_fraction < 1.0:
            raise UserError(f"kg config: ood_fraction must be in [0, 1), got {self.ood_fraction}")
        n, n_ood = self.n_atomic(), self.n_ood_facts()
        if n_ood >= n:
            raise UserError(
                f"kg config: ood_fraction {self.ood_fraction} makes {n_ood} of {n} atomic facts OOD, "
                "leaving no ID facts; lower ood_fraction"
            )
        _need_float(self, "phi")
        if self.phi < 0:
            raise UserError(f"kg config: phi must be >= 0, got {self.phi}")
        # Each of the n*out_degree 2-hop chains is ID-ID with probability ~ (n_id / n)^2.
        n_id = n - n_ood
        expected = n_id * n_id * self.out_degree / n
        if self.n_train_two_hop() > expected:
            raise UserError(
                f"kg config: phi {self.phi} asks for {self.n_train_two_hop()} 2-hop training facts but "
                f"only about {int(expected)} ID-ID chains exist; lower phi (at most "
                f"{expected / n_id:.2f}) or raise out_degree"
            )

    def _validate_depth(self) -> None:
        _need_int(self, "max_hops", 1)
        _need_int(self, "per_hop", 0)
        _need_int(self, "test_per_hop", 0)
        need = self.per_hop + self.test_per_hop
        for k in range(2, self.max_hops + 1):
            available = self.entities * self.relations**k
            if available >= need:
                if self.relations >= 2:
                    break  # the number of chains only grows with k
                continue
            raise UserError(
                f"kg config: {k}-hop chains number only {available} (entities x relations^{k}) but "
                f"per_hop + test_per_hop = {need}; lower per_hop/test_per_hop or add entities/relations"
            )


def _need_int(cfg: KGConfig, name: str, lo: int) -> None:
    v = getattr(cfg, name)
    if isinstance(v, bool) or not isinstance(v, int | np.integer):
        raise UserError(f"kg config: {name} must be an integer, got {v!r}")
    if v < lo:
        raise UserError(f"kg config: {name} must be >= {lo}, got {v}")


def _need_float(cfg: KGConfig, name: str) -> None:
    v = getattr(cfg, name)
    if isinstance(v, bool) or not isinstance(v, int | float | np.number) or not math.isfinite(v):
        raise UserError(f"kg config: {name} must be a finite number, got {v!r}")


def paper_systematic(seed: int = 0) -> KGConfig:
    """Paper section 5: |E| = 2000, |R| = 200, out-degree 20, 5 % OOD facts, phi = 7.2."""
    return KGConfig(
        setting="systematic",
        entities=2000,
        relations=200,
        out_degree=20,
        ood_fraction=0.05,
        phi=7.2,
        n_test_id=3000,
        n_test_ood=2000,
        seed=seed,
    )


def paper_depth(seed: int = 42) -> KGConfig:
    """Paper section 6: |E| = 200, |R| = 10 permutations, k = 2..40, 15000 train / 750 test per k.

    Seed 42 is the seed of the authors' generator (the graph itself differs: other RNG)."""
    return KGConfig(
        setting="depth", entities=200, relations=10, max_hops=40, per_hop=15000, test_per_hop=750, seed=seed
    )


@dataclass
class KGDataset:
    """``graph`` has the layout of graph.json; ``splits`` maps split name to its records."""

    graph: dict[str, Any]
    splits: dict[str, list[dict[str, Any]]]
    config: KGConfig | None = None

    def summary(self) -> dict[str, Any]:
        facts = self.graph["facts"]
        return {
            "setting": self.config.setting if self.config else None,
            "entities": len(self.graph["entities"]),
            "relations": len(self.graph["relations"]),
            "facts": len(facts),
            "facts_ood": sum(1 for f in facts if f[3] == "ood"),
            "splits": {
                name: {
                    "records": len(recs),
                    "by_hops": dict(sorted(Counter(r["hops"] for r in recs).items())),
                }
                for name, recs in self.splits.items()
            },
        }


def all_tokens(graph: dict[str, Any]) -> list[str]:
    """Every token of a graph: entities, then relations."""
    return list(graph["entities"]) + list(graph["relations"])


@contextlib.contextmanager
def no_gc():
    """Pause the cyclic garbage collector while building many small containers (2-3x faster)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _record(tokens: list[str], target: str, bridges: list[str], split: str) -> dict[str, Any]:
    return {"input": tokens, "target": target, "hops": len(tokens) - 1, "split": split, "bridges": bridges}


def generate(cfg: KGConfig, progress: bool = False) -> KGDataset:
    """Build the dataset described by ``cfg`` (deterministic in ``cfg``); `progress` shows a bar
    over the hop counts of the depth setting (the slow part)."""
    cfg.validate()
    rng = np.random.default_rng(cfg.seed)
    ent = [entity_token(i) for i in range(cfg.entities)]
    rel = [relation_token(j) for j in range(cfg.relations)]
    with no_gc():
        if cfg.setting == "systematic":
            facts, splits = _systematic(cfg, rng, ent, rel)
        else:
            facts, splits = _depth(cfg, rng, ent, rel, progress)
    return KGDataset(graph={"entities": ent, "relations": rel, "facts": facts}, splits=splits, config=cfg)


def _systematic(cfg: KGConfig, rng: np.random.Generator, ent: list[str], rel: list[str]):
    n_e, n_r, d = cfg.entities, cfg.relations, cfg.out_degree
    # Fact i = (heads[i], rels[i], tails[i]); entity h owns facts h*d .. h*d + d - 1.
    rels = np.sort(np.argsort(rng.random((n_e, n_r)), axis=1)[:, :d], axis=1).reshape(-1)
    tails = rng.integers(0, n_e, size=n_e * d)
    heads = np.repeat(np.arange(n_e), d)
    n = n_e * d
    is_ood = np.zeros(n, dtype=bool)
    is_ood[rng.choice(n, size=cfg.n_ood_facts(), replace=False)] = True
    facts = [
        [ent[h], rel[r], ent[t], "ood" if o else "id"]
        for h, r, t, o in zip(heads.tolist(), rels.tolist(), tails.tolist(), is_ood.tolist(), strict=True)
    ]

    # 2-hop universe: chain c = first fact c // d, then slot c % d among the bridge's facts.
    ood_first = np.repeat(is_ood, d)
    ood_second = is_ood[(tails * d)[:, None] + np.arange(d)].reshape(-1)
    id_chains = np.flatnonzero(~ood_first & ~ood_second)
    ood_chains = np.flatnonzero(ood_first & ood_second)
    n_train = cfg.n_train_two_hop()
    if n_train > len(id_chains):
        raise UserError(
            f"kg config: phi {cfg.phi} asks for {n_train} 2-hop training facts but this graph has only "
            f"{len(id_chains)} ID-ID chains; lower phi or change seed"
        )
    take = min(len(id_chains), n_train + cfg.n_test_id)
    picked = id_chains[rng.choice(len(id_chains), size=take, replace=False)]
    ood_picked = ood_chains[
        rng.choice(len(ood_chains), size=min(cfg.n_test_ood, len(ood_chains)), replace=False)
    ]

    def chains(idx: np.ndarray, split: str) -> list[dict[str, Any]]:
        first = idx // d
        second = tails[first] * d + idx % d
        cols = (heads[first], rels[first], tails[first], rels[second], tails[second])
        return [
            _record([ent[h], rel[r1], rel[r2]], ent[t], [ent[b]], split)
            for h, r1, b, r2, t in zip(*(c.tolist() for c in cols), strict=True)
        ]

    atomic = [_record([f[0], f[1]], f[2], [], "train") for f in facts]
    splits = {
        "train": atomic + chains(picked[:n_train], "train"),
        "test_id": chains(picked[n_train:], "test_id"),
        "test_ood": chains(ood_picked, "test_ood"),
    }
    return facts, splits


def _unique_chains(rng: np.random.Generator, n_e: int, n_r: int, k: int, size: int) -> np.ndarray:
    """``size`` distinct uniformly drawn k-hop queries, as rows ``[head, r1, ..., rk]``."""
    total = n_e * n_r**k
    if total <= _INT64_SAFE:
        x = rng.choice(total, size=size, replace=False)
        out = np.empty((size, k + 1), dtype=np.int64)
        for j in range(k, 0, -1):
            out[:, j] = x % n_r
            x = x // n_r
        out[:, 0] = x
        return out
    # Huge space: draw with replacement and drop repeats, keeping draw order (still uniform).
    out = np.empty((0, k + 1), dtype=np.int64)
    while len(out) < size:
        m = size - len(out) + 16
        draw = np.concatenate([rng.integers(0, n_e, (m, 1)), rng.integers(0, n_r, (m, k))], axis=1)
        both = np.concatenate([out, draw])
        _, first = np.unique(both, axis=0, return_index=True)
        out = both[np.sort(first)]
    return out[:size]


def _depth(cfg: KGConfig, rng: np.random.Generator, ent: list[str], rel: list[str], progress: bool = False):
    n_e, n_r = cfg.entities, cfg.relations
    perm = np.stack([rng.permutation(n_e) for _ in range(n_r)])  # perm[r, h] = tail
    facts = [[ent[h], rel[r], ent[int(perm[r, h])], "id"] for h in range(n_e) for r in range(n_r)]
    train = [_record([f[0], f[1]], f[2], [], "train") for f in facts]
    test: list[dict[str, Any]] = []
    ent_a, rel_a = np.array(ent, dtype=object), np.array(rel, dtype=object)
    hops = range(2, cfg.max_hops + 1)
    for k in tqdm(hops, desc="chains per hop count", disable=not progress, file=sys.stderr, leave=False):
        q = _unique_chains(rng, n_e, n_r, k, cfg.per_hop + cfg.test_per_hop)
        walk = [q[:, 0]]
        for j in range(1, k + 1):
            walk.append(perm[q[:, j], walk[-1]])
        w = np.stack(walk, axis=1)
        tokens = np.concatenate([ent_a[q[:, :1]], rel_a[q[:, 1:]]], axis=1).tolist()
        targets = ent_a[w[:, -1]].tolist()
        bridges = ent_a[w[:, 1:-1]].tolist()
        recs = [_record(*x, "train") for x in zip(tokens, targets, bridges, strict=True)]
        for rec in recs[cfg.per_hop :]:
            rec["split"] = "test"
        train += recs[: cfg.per_hop]
        test += recs[cfg.per_hop :]
    return facts, {"train": train, "test": test}


def _write_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    with path.open("w") as f:
        f.writelines(json.dumps(r) + "\n" for r in records)


def write_dataset(cfg: KGConfig, out_dir: str | Path, progress: bool = False) -> dict[str, Any]:
    """Generate and write graph.json, config.json and one JSONL file per split; return a summary."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise UserError(f"{out} is a file; give a directory to write the dataset into")
    if progress:
        print(f"generating the {cfg.setting} knowledge graph and its chains...", file=sys.stderr)
    ds = generate(cfg, progress)
    out.mkdir(parents=True, exist_ok=True)
    g = ds.graph
    with (out / "graph.json").open("w") as f:
        f.write('{"entities": ' + json.dumps(g["entities"]) + ',\n"relations": ' + json.dumps(g["relations"]))
        f.write(',\n"facts": [\n' + ",\n".join(json.dumps(x) for x in g["facts"]) + "\n]}\n")
    (out / "config.json").write_text(json.dumps(cfg.setting_dict(), indent=2) + "\n")
    for name, recs in tqdm(ds.splits.items(), desc="writing splits", disable=not progress, file=sys.stderr):
        _write_jsonl(out / f"{name}.jsonl", recs)
    return {"out_dir": str(out), **ds.summary()}


def _read_json(path: Path) -> Any:
    if not path.is_file():
        raise UserError(f"{path} is missing; regenerate the dataset")
    try:
        return json.loads(path.read_text())
    except UnicodeDecodeError:
        raise UserError(f"{path}: not a text file; regenerate the dataset") from None
    except json.JSONDecodeError as e:
        raise UserError(f"{path}: not valid JSON ({e}); regenerate the dataset") from None


def load_dataset(data_dir: str | Path) -> KGDataset:
    """Read a directory written by :func:`write_dataset`."""
    d = Path(data_dir)
    if not d.is_dir():
        raise UserError(f"{d} is not a directory; give the folder holding graph.json")
    cfg_data = _read_json(d / "config.json")
    if not isinstance(cfg_data, dict):
        raise UserError(f"{d / 'config.json'}: expected a JSON object; regenerate the dataset")
    cfg = KGConfig.from_dict(cfg_data)
    if cfg.setting not in SETTINGS:
        raise UserError(f"{d / 'config.json'}: unknown setting {cfg.setting!r}; use one of {list(SETTINGS)}")
    graph = _read_json(d / "graph.json")
    if not isinstance(graph, dict) or not all(
        isinstance(graph.get(k), list) for k in ("entities", "relations", "facts")
    ):
        raise UserError(f"{d / 'graph.json'}: needs lists 'entities', 'relations' and 'facts'")
    splits: dict[str, list[dict[str, Any]]] = {}
    for name in SPLITS[cfg.setting]:
        path = d / f"{name}.jsonl"
        if not path.is_file():
            raise UserError(f"{path} is missing; regenerate the dataset")
        recs = []
        with path.open(errors="replace") as f, no_gc():
            for lineno, line in enumerate(f, 1):
                try:
                    recs.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise UserError(
                        f"{path}:{lineno}: not valid JSON ({e.msg}); regenerate the dataset"
                    ) from None
        splits[name] = recs
    return KGDataset(graph=graph, splits=splits, config=cfg)


def detect(data_dir: str | Path) -> bool:
    """True when ``data_dir`` looks like a KG dataset (it holds graph.json)."""
    return (Path(data_dir) / "graph.json").is_file()
