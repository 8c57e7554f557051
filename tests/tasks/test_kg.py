"""Knowledge-graph data: determinism, audit, planted errors, sizes and config errors."""

from __future__ import annotations

import copy
import json
from collections import Counter

import pytest

from symgen.errors import UserError
from symgen.tasks import kg, kg_audit
from symgen.tasks.kg import KGConfig


def small_systematic(seed: int = 0, **kw) -> KGConfig:
    base = dict(
        setting="systematic",
        entities=50,
        relations=20,
        out_degree=10,
        ood_fraction=0.1,
        phi=7.2,
        n_test_id=300,
        n_test_ood=40,
        seed=seed,
    )
    return KGConfig(**{**base, **kw})


def small_depth(seed: int = 0, **kw) -> KGConfig:
    base = dict(
        setting="depth", entities=20, relations=4, max_hops=6, per_hop=200, test_per_hop=50, seed=seed
    )
    return KGConfig(**{**base, **kw})


@pytest.fixture(scope="module")
def sys_ds() -> kg.KGDataset:
    return kg.generate(small_systematic())


@pytest.fixture(scope="module")
def depth_ds() -> kg.KGDataset:
    return kg.generate(small_depth())


def _walk(graph, inp):
    tail = {(h, r): t for h, r, t, _ in graph["facts"]}
    node = inp[0]
    for r in inp[1:]:
        node = tail[(node, r)]
    return node


@pytest.mark.parametrize("make", [small_systematic, small_depth])
def test_deterministic_in_config(make):
    a, b, c = kg.generate(make(seed=1)), kg.generate(make(seed=1)), kg.generate(make(seed=2))
    assert a.graph == b.graph and a.splits == b.splits
    assert a.graph["facts"] != c.graph["facts"]
    assert a.splits != c.splits


def test_tokens_and_records(sys_ds):
    g = sys_ds.graph
    assert g["entities"][:3] == ["e0", "e1", "e2"] and g["relations"][:2] == ["r0", "r1"]
    assert kg.all_tokens(g) == g["entities"] + g["relations"]
    rec = sys_ds.splits["test_ood"][0]
    inp, target = rec["input"], rec["target"]
    assert len(inp) == 3
    assert _walk(g, inp) == target


def test_systematic_counts_and_splits(sys_ds):
    cfg = sys_ds.config
    facts = sys_ds.graph["facts"]
    n_ood = sum(f[3] == "ood" for f in facts)
    assert len(facts) == 50 * 10 and n_ood == round(0.1 * 500)
    # every entity has out_degree distinct relations
    per_head = Counter(f[0] for f in facts)
    assert set(per_head.values()) == {10}
    assert len({(f[0], f[1]) for f in facts}) == len(facts)
    hops = Counter(r["hops"] for r in sys_ds.splits["train"])
    assert hops == {1: 500, 2: round(7.2 * (500 - n_ood))}
    assert len(sys_ds.splits["test_id"]) == cfg.n_test_id
    assert 0 < len(sys_ds.splits["test_ood"]) <= cfg.n_test_ood
    ood = {(f[0], f[1]) for f in facts if f[3] == "ood"}
    for rec in sys_ds.splits["test_ood"]:
        h, r1, r2 = rec["input"]
        assert (h, r1) in ood and (rec["bridges"][0], r2) in ood


def test_depth_counts_and_permutations(depth_ds):
    g = depth_ds.graph
    assert all(f[3] == "id" for f in g["facts"])
    for r in g["relations"]:
        tails = [f[2] for f in g["facts"] if f[1] == r]
        assert sorted(tails) == sorted(g["entities"])
    train = Counter(r["hops"] for r in depth_ds.splits["train"])
    test = Counter(r["hops"] for r in depth_ds.splits["test"])
    assert train == {1: 80, **{k: 200 for k in range(2, 7)}}
    assert test == {k: 50 for k in range(2, 7)}
    rec = depth_ds.splits["test"][-1]
    assert rec["hops"] == 6 and len(rec["bridges"]) == 5 and rec["split"] == "test"


def test_depth_huge_chain_space_uses_rejection_sampling():
    ds = kg.generate(small_depth(entities=10, relations=10, max_hops=20, per_hop=30, test_per_hop=5))
    assert kg_audit.audit(ds) == []
    assert sum(r["hops"] == 20 for r in ds.splits["train"]) == 30


def test_audit_passes_on_generated(sys_ds, depth_ds):
    assert kg_audit.audit(sys_ds) == []
    assert kg_audit.audit(depth_ds) == []


@pytest.mark.parametrize("make", [small_systematic, small_depth])
def test_write_load_roundtrip(tmp_path, make):
    cfg = make()
    summary = kg.write_dataset(cfg, tmp_path / "d")
    assert kg_audit.detect(tmp_path / "d") and not kg_audit.detect(tmp_path)
    loaded = kg.load_dataset(tmp_path / "d")
    fresh = kg.generate(cfg)
    assert loaded.config == cfg and loaded.graph == fresh.graph and loaded.splits == fresh.splits
    assert summary["splits"]["train"]["records"] == len(fresh.splits["train"])
    assert kg_audit.audit_dir(tmp_path / "d") == []
    listed = set(json.loads((tmp_path / "d" / "config.json").read_text()))
    unused = kg.DEPTH_ONLY if cfg.setting == "systematic" else kg.SYSTEMATIC_ONLY
    assert listed.isdisjoint(unused) and {"setting", "entities", "relations", "seed"} <= listed


def _has(problems: list[str], text: str) -> bool:
    return any(text in p for p in problems)


def test_audit_catches_wrong_target(sys_ds):
    ds = copy.deepcopy(sys_ds)
    rec = ds.splits["train"][-1]
    rec["target"] = next(e for e in ds.graph["entities"] if e != rec["target"])
    assert _has(kg_audit.audit(ds), "target differs from the graph walk")


def test_audit_catches_ood_fact_in_training_composition(sys_ds):
    ds = copy.deepcopy(sys_ds)
    facts = ds.graph["facts"]
    b, r2, t, _ = next(f for f in facts if f[3] == "ood")
    h, r1, _, _ = next(f for f in facts if f[2] == b and f[3] == "id")
    chain = {"input": [h, r1, r2], "target": t, "hops": 2, "split": "train", "bridges": [b]}
    assert chain["input"] not in [r["input"] for r in ds.splits["train"]]
    ds.splits["train"].append(chain)
    problems = kg_audit.audit(ds)
    assert _has(problems, "OOD fact inside a training composition")
    assert not _has(problems, "target differs")


def test_audit_catches_non_permutation(depth_ds):
    ds = copy.deepcopy(depth_ds)
    facts = ds.graph["facts"]
    first = facts[0]
    other = next(f for f in facts[1:] if f[1] == first[1])
    first[2] = other[2]  # two heads now share one tail under this relation
    assert _has(kg_audit.audit(ds), "relation is not a permutation of the entities")
    assert not _has(kg_audit.audit(depth_ds), "permutation")


def test_audit_catches_test_chain_in_train(sys_ds, tmp_path):
    kg.write_dataset(sys_ds.config, tmp_path)
    train = (tmp_path / "train.jsonl").read_text().splitlines()
    leaked = json.loads(train[-1])
    leaked["split"] = "test_id"
    with (tmp_path / "test_id.jsonl").open("a") as f:
        f.write(json.dumps(leaked) + "\n")
    problems = kg_audit.audit_dir(tmp_path)
    assert _has(problems, "test_id chain also in train")


def test_audit_catches_malformed_record_and_bad_file(depth_ds, tmp_path):
    ds = copy.deepcopy(depth_ds)
    ds.splits["test"][0]["hops"] = 9
    ds.splits["test"][1]["bridges"] = []
    problems = kg_audit.audit(ds)
    assert _has(problems, "hops != len(input) - 1") and _has(problems, "bridges do not have hops - 1 entries")
    kg.write_dataset(depth_ds.config, tmp_path)
    with (tmp_path / "test.jsonl").open("a") as f:
        f.write("{not json\n")
    (problem,) = kg_audit.audit_dir(tmp_path)
    assert "test.jsonl" in problem and "not valid JSON" in problem


@pytest.mark.parametrize(
    ("cfg", "text"),
    [
        (small_systematic(entities=0), "entities"),
        (small_depth(relations=0), "relations"),
        (small_systematic(ood_fraction=1.0), "ood_fraction"),
        (small_systematic(entities=1, out_degree=1, relations=1, ood_fraction=0.9), "ood_fraction"),
        (small_systematic(out_degree=21), "out_degree"),
        (small_systematic(setting="chains"), "unknown setting"),
        (small_systematic(phi=50.0), "phi"),
        (small_depth(per_hop=400), "per_hop"),
        (small_systematic(entities=2.5), "entities"),
    ],
)
def test_config_errors(cfg, text):
    with pytest.raises(UserError, match=text):
        kg.generate(cfg)


def test_depth_ignores_systematic_fields_and_from_dict():
    cfg = small_depth(out_degree=100, ood_fraction=2.0)
    cfg.validate()  # fields of the other setting are not checked
    assert KGConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(UserError, match="unknown key"):
        KGConfig.from_dict({"entitys": 3})


def test_paper_presets_sizes():
    s, d = kg.paper_systematic(), kg.paper_depth()
    s.validate()
    d.validate()
    assert (s.entities, s.relations, s.out_degree, s.n_atomic(), s.n_train_two_hop()) == (
        2000,
        200,
        20,
        40000,
        273600,
    )
    assert (d.entities, d.relations, d.max_hops, d.per_hop, d.test_per_hop, d.n_atomic()) == (
        200,
        10,
        40,
        15000,
        750,
        2000,
    )
