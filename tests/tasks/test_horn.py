import json

import pytest

from symgen.errors import UserError
from symgen.tasks.horn import SPECIAL_TOKENS, HornConfig, build_vocab, vocab_groups
from symgen.tasks.horn_generator import generate_splits
from symgen.tasks.vocab import Vocab


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
