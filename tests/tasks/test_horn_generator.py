import json
from dataclasses import replace

import pytest

from symgen.errors import UserError
from symgen.tasks import checker
from symgen.tasks.horn import HornConfig, symbol_pools
from symgen.tasks.horn_audit import shortcut_audit
from symgen.tasks.horn_generator import canonical_key, generate_splits

CFG = HornConfig(n_train=3000, n_test=600, seed=1)


@pytest.fixture(scope="module")
def splits():
    return generate_splits(CFG)


def atoms_of(rec):
    out = set(rec["facts"]) | {rec["query"]}
    for r in rec["rules"] + rec["proof"]:
        out.update(r["body"])
        out.add(r["head"])
    return out


def test_split_sizes_and_scenarios(splits):
    assert set(splits) == {"train", "test_all_seen", "test_query_unseen", "test_all_unseen"}
    assert len(splits["train"]) == CFG.n_train
    for name, recs in splits.items():
        want = "train" if name == "train" else name.removeprefix("test_")
        assert {r["scenario"] for r in recs} == {want}
        if name != "train":
            assert len(recs) == CFG.n_test


def test_every_record_passes_the_checker(splits):
    for name, recs in splits.items():
        for i, rec in enumerate(recs):
            assert checker.check_record(rec) is None, (name, i, checker.check_record(rec))
            json.dumps(rec)


def test_balance_and_depths(splits):
    for recs in splits.values():
        frac = sum(r["label"] for r in recs) / len(recs)
        assert 0.45 <= frac <= 0.55
        for label in (True, False):
            depths = {r["depth"] for r in recs if r["label"] == label}
            assert depths == set(range(1, CFG.max_depth + 1))


def test_surface_invariants(splits):
    for recs in splits.values():
        for r in recs:
            assert r["query"] not in r["facts"]
            assert any(rule["head"] == r["query"] for rule in r["rules"])
            assert CFG.min_facts <= len(r["facts"]) <= CFG.max_facts
            assert len(r["rules"]) <= CFG.max_rules
            assert all(1 <= len(rule["body"]) <= CFG.max_body for rule in r["rules"])


def test_symbol_pools(splits):
    seen, unseen = symbol_pools(CFG)
    seen, unseen = set(seen), set(unseen)
    assert len(seen) == CFG.n_seen and len(unseen) == CFG.n_unseen and not seen & unseen
    train_atoms = set().union(*(atoms_of(r) for r in splits["train"]))
    assert train_atoms <= seen
    assert len(train_atoms) > 0.9 * CFG.n_seen  # atoms are spread over the whole seen pool
    for r in splits["test_all_seen"]:
        assert atoms_of(r) <= seen
    for r in splits["test_query_unseen"]:
        atoms = atoms_of(r)
        assert r["query"] in unseen
        assert atoms - {r["query"]} <= seen
    for r in splits["test_all_unseen"]:
        assert atoms_of(r) <= unseen


def test_splits_are_disjoint_and_deduplicated(splits):
    keys = {name: [canonical_key(r) for r in recs] for name, recs in splits.items()}
    for name, ks in keys.items():
        assert len(set(ks)) == len(ks), name
    train = set(keys["train"])
    for name in ("test_all_seen", "test_query_unseen", "test_all_unseen"):
        assert not train & set(keys[name])


def test_determinism():
    cfg = HornConfig(n_train=50, n_test=10, seed=3)
    a, b = generate_splits(cfg), generate_splits(cfg)
    assert a == b
    c = generate_splits(HornConfig(n_train=50, n_test=10, seed=4))
    assert a["train"] != c["train"] and a["test_all_unseen"] != c["test_all_unseen"]


def test_shortcut_audit_near_chance(splits):
    acc = shortcut_audit(splits["train"], splits["test_all_seen"])
    assert acc <= 0.60


def test_shortcut_audit_detects_a_planted_shortcut(splits):
    # sanity check of the audit itself: an extra unused fact in True problems only is found at once
    def plant(recs):
        return [dict(r, facts=r["facts"] + ["zz"]) if r["label"] else r for r in recs]

    assert shortcut_audit(plant(splits["train"]), plant(splits["test_all_seen"])) > 0.95


def test_too_few_distinct_problems_fails_fast():
    cfg = HornConfig(
        min_rules=2, max_rules=2, min_facts=1, max_facts=1, max_body=1, max_depth=1, n_seen=6, n_unseen=6
    )
    with pytest.raises(UserError, match="could not generate"):
        generate_splits(replace(cfg, n_train=5000, n_test=0))


def test_small_curriculum_config():
    # one-atom bodies, one fact, 2-3 rules: still balanced and checkable
    cfg = HornConfig(
        min_rules=2, max_rules=3, min_facts=1, max_facts=1, max_body=1, max_depth=2, n_train=200, n_test=20
    )
    s = generate_splits(cfg)
    for recs in s.values():
        assert all(checker.check_record(r) is None for r in recs)
        assert all(len(r["facts"]) == 1 and len(r["rules"]) <= 3 for r in recs)
    assert sum(r["label"] for r in s["train"]) == 100
