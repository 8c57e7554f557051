"""Claims judged part by part: the verdict follows from the parts at every seed."""

import json

import pytest

from symgen.experiments.claims import (
    ClaimResult,
    Part,
    Statement,
    judge,
    merge_seeds,
    not_judged,
    unlearned,
    verdict_of_parts,
)

CLAIM = Statement("X1", "A does this and B does not.", "paper value")


def check(*outcomes: str):
    parts = [Part(f"part {i}", o, f"measured {i}", {"x": float(i)}) for i, o in enumerate(outcomes)]
    return CLAIM.check(parts, ["runs/a"])


@pytest.mark.parametrize(
    ("seeds", "verdict"),
    [
        ([["pass", "pass"], ["pass", "pass"]], "reproduced"),
        ([["pass", "pass"], ["pass", "fail"]], "partly reproduced"),  # one part fails on one seed
        ([["pass", "fail"], ["fail", "pass"]], "partly reproduced"),  # each part passes on some seed
        # a part failing on every seed that judged it: the sentence is not reproduced, whatever else passes
        ([["pass", "fail"], ["pass", "fail"]], "not reproduced"),
        ([["pass", "fail"], ["pass", "not judged"]], "not reproduced"),
        ([["pass", "not judged"], ["pass", "not judged"]], "partly reproduced"),  # half the sentence untested
        ([["fail", "fail"], ["fail", "not judged"]], "not reproduced"),
        ([["not judged", "not judged"], ["not judged", "not judged"]], "not judged"),
    ],
)
def test_the_verdict_follows_from_every_part_at_every_seed(seeds, verdict):
    result = merge_seeds({s: check(*outcomes) for s, outcomes in enumerate(seeds)})
    assert result.verdict == verdict
    assert result.verdict == verdict_of_parts([list(p.outcomes.values()) for p in result.parts])


def test_a_tampered_part_flips_the_verdict():
    honest = merge_seeds({0: check("pass", "pass"), 1: check("pass", "pass")})
    tampered = merge_seeds({0: check("pass", "pass"), 1: check("pass", "fail")})
    assert honest.verdict == "reproduced" and tampered.verdict == "partly reproduced"
    assert [p.outcome for p in tampered.parts] == ["pass", "mixed"]


def test_a_control_that_never_learned_leaves_its_part_not_judged():
    why = unlearned({"treatment": 0.95, "control": 0.42}, 0.9, "all_seen exact match")
    assert "control 0.420 < 0.9" in why and "treatment" not in why
    assert unlearned({"treatment": 0.95, "control": 0.91}, 0.9, "all_seen") == ""
    assert unlearned({"nan arm": float("nan")}, 0.9, "x") != ""  # an unmeasured arm did not learn
    claim = CLAIM.check([judge("A does this", True, "0.95"), not_judged("B does not", why)])
    result = merge_seeds({0: claim})
    assert result.verdict == "partly reproduced" and result.parts[1].outcome == "not judged"
    assert "control" in result.parts[1].measured["0"]


def test_parts_keep_each_seed_and_their_spread():
    result = merge_seeds({0: check("pass"), 3: check("fail")})
    part = result.parts[0]
    assert result.seeds == [0, 3] and part.outcomes == {"0": "pass", "3": "fail"}
    assert set(part.values) == {"0", "3"} and part.summary["x"] == {"mean": 0.0, "min": 0.0, "max": 0.0}
    missing = merge_seeds({0: check("pass", "pass"), 1: check("pass")})  # seed 1 lacks part 1
    assert missing.parts[1].outcomes == {"0": "pass", "1": "not judged"}


def test_a_result_survives_json():
    result = merge_seeds({0: check("pass", "fail"), 1: check("pass", "pass")})
    data = json.loads(json.dumps(result.to_dict()))
    back = ClaimResult.from_dict(data)
    assert back.verdict == result.verdict and back.parts == result.parts and "measured" in data
    assert data["parts"][0]["values"] == {"0": {"x": 0.0}, "1": {"x": 0.0}}
    with pytest.raises(ValueError):
        Part("t", "yes")


def test_a_claim_read_back_takes_the_verdict_its_parts_give_under_todays_rule():
    stored = merge_seeds({0: check("pass", "fail"), 1: check("pass", "fail")}).to_dict()
    stored["verdict"] = "partly reproduced"  # as an earlier, laxer rule wrote it
    assert ClaimResult.from_dict(stored).verdict == "not reproduced"
