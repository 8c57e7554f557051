import random

import pytest

from symgen.tasks import checker
from symgen.tasks.horn import SPECIAL_TOKENS, HornConfig, build_vocab, is_rule_label, rule_label
from symgen.tasks.horn_generator import generate_splits
from symgen.tasks.horn_text import encode_prompt, encode_target, parse_output, score_output

CFG = HornConfig(n_train=3000, n_test=600, seed=1)


@pytest.fixture(scope="module")
def splits():
    return generate_splits(CFG)


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
