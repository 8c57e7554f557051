import json
import random
from dataclasses import replace

import pytest

from symgen.errors import UserError
from symgen.tasks import checker
from symgen.tasks.horn import (
    SPECIAL_TOKENS,
    HornConfig,
    build_vocab,
    canonical_key,
    encode_prompt,
    encode_target,
    generate_splits,
    is_rule_label,
    parse_output,
    rule_label,
    score_output,
    symbol_pools,
    vocab_groups,
    write_dataset,
)
from symgen.tasks.horn_audit import shortcut_audit
from symgen.tasks.vocab import Vocab

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


def test_encoding_round_trip(splits):
    vocab = build_vocab(CFG)
    for rec in splits["train"][:300] + splits["test_all_unseen"][:100]:
        prompt, target = encode_prompt(rec), encode_target(rec)
        assert prompt[0] == "<bos>" and prompt[-1] == "<cot>" and target[-1] == "<eos>"
        vocab.ids(prompt + target)  # every token is in the vocabulary
        for toks in (target, prompt + target, target + ["<pad>", "<pad>"]):
            parsed = parse_output(toks)
            assert parsed.answer == rec["label"]
            assert parsed.proof == rec["proof"]
        s = score_output(rec, prompt + target)
        assert s == {"answer_correct": True, "exact_match": True, "proof_valid": True}


def test_labelled_encoding_names_the_rule_each_step_fires(splits):
    vocab = build_vocab(CFG, labels=True)
    assert vocab.group("special")[-1] == rule_label(CFG.max_rules - 1)
    for rec in splits["train"][:300]:
        prompt, target = encode_prompt(rec, labels=True), encode_target(rec, labels=True)
        vocab.ids(prompt + target)
        assert [t for t in prompt if not is_rule_label(t)] == encode_prompt(rec)
        assert [t for t in target if not is_rule_label(t)] == encode_target(rec)
        starts = [i for i, t in enumerate(target) if is_rule_label(t)]
        assert len(starts) == len(rec["proof"])
        for start, step in zip(starts, rec["proof"], strict=True):
            # the step after its label is the span after that label in the prompt
            n = len(step["body"]) + 3
            at = prompt.index(target[start])
            assert prompt[at + 1 : at + 1 + n] == target[start + 1 : start + 1 + n]
            assert prompt[at + 1 : at + 1 + n] == step["body"] + ["->", step["head"], "."]
        assert parse_output(target).proof == rec["proof"]
        assert score_output(rec, target, labels=True) == dict.fromkeys(
            ("answer_correct", "exact_match", "proof_valid"), True
        )
        if rec["proof"]:
            wrong = [rule_label(CFG.max_rules) if is_rule_label(t) else t for t in target]
            assert score_output(rec, wrong, labels=True) == {
                "answer_correct": True,
                "exact_match": False,
                "proof_valid": True,
            }
            assert not score_output(rec, target)["exact_match"]  # the unlabelled reference differs


def test_parse_output_survives_garbage():
    rng = random.Random(0)
    alphabet = SPECIAL_TOKENS + ["v1", "v2", "v3"]
    for _ in range(500):
        toks = [rng.choice(alphabet) for _ in range(rng.randint(0, 30))]
        parsed = parse_output(toks)
        assert parsed.answer in (None, True, False)
    assert parse_output([]) == (None, None)
    assert parse_output(["v1", "->"]) == (None, None)
    assert parse_output(["v1", "->", "v2", ".", "<ans>", "Maybe", "<eos>"]).answer is None
    bad = parse_output(["v1", "v2", ".", "<ans>", "True", "<eos>"])
    assert bad.proof is None and bad.answer is True
    assert parse_output(["<ans>", "False", "<eos>", "v9"]) == ([], False)


def test_score_output_valid_but_different_proof():
    rec = {
        "rules": [{"body": ["a"], "head": "b"}, {"body": ["c"], "head": "d"}, {"body": ["b"], "head": "q"}],
        "facts": ["a", "c"],
        "query": "q",
        "label": True,
        "proof": [
            {"body": ["a"], "head": "b"},
            {"body": ["c"], "head": "d"},
            {"body": ["b"], "head": "q"},
        ],
        "depth": 2,
        "scenario": "all_seen",
    }
    assert checker.check_record(rec) is None
    short = "a -> b . b -> q . <ans> True <eos>".split()
    assert score_output(rec, short) == {"answer_correct": True, "exact_match": False, "proof_valid": True}
    wrong_answer = "a -> b . b -> q . <ans> False <eos>".split()
    assert score_output(rec, wrong_answer) == {
        "answer_correct": False,
        "exact_match": False,
        "proof_valid": False,
    }
    invented = "a -> q . <ans> True <eos>".split()
    assert score_output(rec, invented) == {"answer_correct": True, "exact_match": False, "proof_valid": False}
    assert score_output(rec, encode_target(rec) + ["junk"])["exact_match"]


@pytest.mark.parametrize(
    "kw, expect",
    [
        (dict(min_rules=6, max_rules=5), "max_rules"),
        (dict(min_facts=5, max_facts=4), "max_facts"),
        (dict(max_rules=3, min_rules=2, max_depth=3), "max_rules"),
        (dict(n_seen=5), "n_seen"),
        (dict(n_unseen=3), "n_unseen"),
        (dict(max_body=0), "max_body"),
        (dict(max_depth=0), "max_depth"),
        (dict(p_decoy=1.5), "p_decoy"),
    ],
)
def test_impossible_config(kw, expect):
    with pytest.raises(UserError, match=expect):
        HornConfig(**kw).validate()
    with pytest.raises(UserError):
        generate_splits(HornConfig(n_train=2, n_test=2, **kw))


def test_config_from_dict():
    assert HornConfig.from_dict({"max_depth": 2, "seed": 5}) == HornConfig(max_depth=2, seed=5)
    with pytest.raises(UserError, match="unknown"):
        HornConfig.from_dict({"max_detph": 2})
    with pytest.raises(UserError, match="integer"):
        HornConfig.from_dict({"n_seen": "many"})
    assert HornConfig.paper().max_depth == 6 and HornConfig.quick().max_depth == 3
    HornConfig.paper().validate()


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


def test_vocab():
    cfg = HornConfig(n_seen=30, n_unseen=20)
    vocab = build_vocab(cfg)
    groups = vocab_groups(cfg)
    assert len(vocab) == len(SPECIAL_TOKENS) + 50
    assert vocab.group("unseen") == groups["unseen"]
    assert vocab.id("<pad>") == 0
    assert vocab.tokens(vocab.ids(groups["seen"])) == groups["seen"]
    assert sorted(vocab.ids(vocab.group("seen") + vocab.group("unseen"))) == list(range(11, 61))
    with pytest.raises(UserError, match="unknown token"):
        vocab.id("zzz")
    with pytest.raises(UserError):
        vocab.tokens([999])
    with pytest.raises(UserError, match="twice"):
        Vocab(["a", "a"])
    assert Vocab.from_json(vocab.to_json()) == vocab
    assert Vocab.from_json(json.dumps(groups)) == vocab
    # the seen/unseen split depends on the seed, and names give no hint of it
    other = vocab_groups(HornConfig(n_seen=30, n_unseen=20, seed=1))
    assert other["seen"] != groups["seen"]
    assert set(other["seen"]) | set(other["unseen"]) == set(groups["seen"]) | set(groups["unseen"])


def test_write_dataset(tmp_path):
    cfg = HornConfig(n_train=200, n_test=40, seed=2)
    summary = write_dataset(cfg, tmp_path / "data")
    files = sorted(p.name for p in (tmp_path / "data").iterdir())
    assert files == sorted(
        [
            "train.jsonl",
            "test_all_seen.jsonl",
            "test_query_unseen.jsonl",
            "test_all_unseen.jsonl",
            "vocab.json",
        ]
    )
    for name in ("train", "test_all_seen", "test_query_unseen", "test_all_unseen"):
        assert checker.check_file(tmp_path / "data" / f"{name}.jsonl") == summary["splits"][name]["n"]
    assert summary["splits"]["train"]["n"] == 200
    assert summary["splits"]["train"]["frac_true"] == 0.5
    assert set(summary["splits"]["train"]["depth_hist"]["false"]) == {1, 2, 3}
    assert 0.0 <= summary["audit_accuracy"] <= 1.0
    vocab = Vocab.load(tmp_path / "data" / "vocab.json")
    assert vocab == build_vocab(cfg)
    assert list(json.loads((tmp_path / "data" / "vocab.json").read_text())) == ["special", "seen", "unseen"]
