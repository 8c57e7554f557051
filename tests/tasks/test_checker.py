import json

import pytest

from symgen.errors import UserError
from symgen.tasks import checker

# a -> b ; c -> d ; b -> q ; x y -> q  with facts a, c: q is entailed at level 2
RULES = [
    {"body": ["a"], "head": "b"},
    {"body": ["c"], "head": "d"},
    {"body": ["b"], "head": "q"},
    {"body": ["x", "y"], "head": "q"},
]
FACTS = ["a", "c"]
FC = [
    {"body": ["a"], "head": "b"},
    {"body": ["c"], "head": "d"},
    {"body": ["b"], "head": "q"},
]


def record(**kw):
    rec = {
        "rules": RULES,
        "facts": FACTS,
        "query": "q",
        "label": True,
        "proof": FC,
        "depth": 2,
        "scenario": "all_seen",
    }
    rec.update(kw)
    return rec


def false_record():
    # without fact a nothing reaches q; saturation derives d only; optimistic depth is 1 via x y -> q
    return record(facts=["c"], label=False, proof=[{"body": ["c"], "head": "d"}], depth=1)


def test_entailed_and_depths():
    assert checker.entailed(RULES, FACTS, "q")
    assert not checker.entailed(RULES, ["c"], "q")
    assert checker.entailed(RULES, ["x", "y"], "q")
    assert not checker.entailed(RULES, ["x"], "q")
    assert checker.derivation_depth(RULES, FACTS, "q") == 2
    assert checker.derivation_depth(RULES, ["x", "y"], "q") == 1
    assert checker.derivation_depth(RULES, ["c"], "q") is None
    assert checker.optimistic_depth(RULES, ["c"], "q") == 1


def test_entailed_with_cycle():
    rules = [{"body": ["a"], "head": "b"}, {"body": ["b"], "head": "a"}, {"body": ["a", "b"], "head": "q"}]
    assert not checker.entailed(rules, [], "q")
    assert checker.entailed(rules, ["b"], "q")


def test_forward_chain_order():
    assert checker.forward_chain(RULES, FACTS, "q") == FC
    assert checker.forward_chain(RULES, ["c"], "q") == [{"body": ["c"], "head": "d"}]


def test_check_proof():
    assert checker.check_proof(RULES, FACTS, FC, "q") is None
    # a shorter derivation that skips the distractor step is still valid
    assert checker.check_proof(RULES, FACTS, [FC[0], FC[2]], "q") is None
    assert "not a rule" in checker.check_proof(RULES, FACTS, [{"body": ["a"], "head": "q"}], "q")
    assert "before it is known" in checker.check_proof(RULES, FACTS, [FC[2]], "q")
    assert "already known" in checker.check_proof(RULES, FACTS, [FC[0], FC[0], FC[2]], "q")
    assert "does not derive" in checker.check_proof(RULES, FACTS, FC[:2], "q")
    # a False certificate must reach saturation
    assert checker.check_proof(RULES, ["c"], [FC[1]], "q", answer=False) is None
    assert "still applies" in checker.check_proof(RULES, ["c"], [], "q", answer=False)
    assert "answer is False" in checker.check_proof(RULES, FACTS, FC, "q", answer=False)


def test_check_record_accepts_valid_records():
    assert checker.check_record(record()) is None
    assert checker.check_record(false_record()) is None


@pytest.mark.parametrize(
    "change, expect",
    [
        (dict(label=False), "label"),
        (dict(proof=[FC[1], FC[0], FC[2]]), "forward chaining"),
        (dict(proof=[FC[0], {"body": ["a"], "head": "d"}, FC[2]]), "not a rule"),
        (dict(proof=[FC[0], FC[2]]), "forward chaining"),
        (dict(depth=3), "depth"),
        (dict(facts=["a", "c", "q"]), "given fact"),
        (dict(label="yes"), "label"),
        (dict(rules=[{"body": [], "head": "q"}]), "rule 1"),
    ],
)
def test_check_record_rejects(change, expect):
    err = checker.check_record(record(**change))
    assert err is not None and expect in err


def test_check_record_missing_field():
    rec = record()
    del rec["proof"]
    assert "proof" in checker.check_record(rec)
    assert checker.check_record([1, 2]) is not None


def test_check_record_false_depth_is_optimistic():
    assert "depth" in checker.check_record({**false_record(), "depth": 2})


def test_check_file(tmp_path):
    good = tmp_path / "good.jsonl"
    good.write_text("\n".join(json.dumps(r) for r in [record(), false_record()]) + "\n")
    assert checker.check_file(good) == 2

    flipped = tmp_path / "flipped.jsonl"
    flipped.write_text("\n".join(json.dumps(r) for r in [record(), record(label=False), record()]) + "\n")
    with pytest.raises(UserError, match=r"flipped.jsonl:2: label"):
        checker.check_file(flipped)

    bad_json = tmp_path / "bad.jsonl"
    bad_json.write_text(json.dumps(record()) + "\n{not json\n")
    with pytest.raises(UserError, match=r"bad.jsonl:2: not valid JSON"):
        checker.check_file(bad_json)

    missing = tmp_path / "missing.jsonl"
    missing.write_text(json.dumps({k: v for k, v in record().items() if k != "depth"}) + "\n")
    with pytest.raises(UserError, match=r"missing.jsonl:1: missing field 'depth'"):
        checker.check_file(missing)

    with pytest.raises(UserError, match="cannot read"):
        checker.check_file(tmp_path / "nope.jsonl")


def test_check_file_gives_the_whole_json_error_with_file_and_line(tmp_path):
    control = tmp_path / "control.jsonl"
    control.write_text(json.dumps(record()) + '\n{"rules": "a\tb"}\n')  # a raw tab inside a string
    with pytest.raises(UserError) as caught:
        checker.check_file(control)
    assert str(caught.value) == f"{control}:2: not valid JSON: Invalid control character at: column 13"


def test_check_file_wants_every_record_of_the_scenario_its_file_holds(tmp_path):
    path = tmp_path / "test_all_seen.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [record(), record(scenario="train")]) + "\n")
    assert checker.check_file(path) == 2  # no scenario asked: any
    with pytest.raises(UserError) as caught:
        checker.check_file(path, "all_seen")
    assert str(caught.value) == (
        f"{path}:2: field 'scenario' is 'train', but test_all_seen.jsonl holds 'all_seen' records"
    )
