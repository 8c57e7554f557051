"""Claims B5.2, B5.4–B5.6 judged part by part from made-up numbers: each part can pass, fail, or read
`not judged` naming the arm that never learned; inference iterations are chosen on validation chains."""

import pytest

from symgen.analysis.loop_report import choose_r, depth_at
from symgen.experiments.claims import FAIL, NOT_JUDGED, PASS
from symgen.experiments.kg_inside.claims import check_b52, check_b54, check_b55, check_b56
from symgen.experiments.kg_inside.experiment import first_iteration_bridge


def outcomes(claim) -> list[str]:
    return [p.outcome for p in claim.parts]


def part(claim, starts: str):
    return next(p for p in claim.parts if p.text.startswith(starts))


# ---- B5.2 -----------------------------------------------------------------------------------------


def b52(
    train=500, id_=2000, bridge=0.9, deep_id=0.95, deep_r2=0.02, looped_id=1.0, name="kg-sys-looped", loops=4
):
    looped = {
        "name": name,
        "loops": loops,
        "id": looped_id,
        "phases": {"train": train, "id": id_, "ood": 8000},
        "evals_between": 6,
        "bridge_iteration_1": bridge,
    }
    deep = {"name": "kg-sys-deep", "id": deep_id, "ood_target_r2": deep_r2}
    vanilla = {"name": "kg-sys-vanilla", "id": 0.92, "ood_target_r2": 0.05}
    return check_b52(looped, deep, vanilla, [])


def test_b52_is_reproduced_when_every_part_passes():
    claim = b52()
    assert claim.verdict == "reproduced" and outcomes(claim) == [PASS] * 4
    grok = part(claim, "ID comes much later")
    assert grok.values == {"train_phase": 500, "id_phase": 2000, "gap_steps": 1500, "gap_evaluations": 6}
    lens = part(claim, "the depth-matched vanilla")
    assert lens.measured == "kg-sys-deep up to 0.020 (beside it, one block kg-sys-vanilla 0.050)"
    assert lens.values["kg-sys-vanilla/ood_target_r2"] == 0.05


@pytest.mark.parametrize(
    ("change", "broken"),
    [
        ({"train": 1250, "id_": 1500}, "ID comes much later"),  # one evaluation apart: no grokking
        ({"id_": 9000}, "the three phases"),  # ID after OOD
        ({"bridge": 0.3}, "after grokking"),
        ({"deep_r2": 0.4}, "the depth-matched vanilla"),
    ],
)
def test_b52_a_tampered_part_flips_the_verdict(change: dict, broken: str):
    claim = b52(**change)
    assert part(claim, broken).outcome == FAIL and claim.verdict == "not reproduced"


def test_b52_names_the_looped_run_it_read():
    """With R = 4's run left out, B5.2 reads another looped run: each looped part says which."""
    claim = b52(name="kg-sys-looped-r2", loops=2)
    assert [p.measured.split(": ")[0] for p in claim.parts[:3]] == ["kg-sys-looped-r2 (R = 2)"] * 3
    assert (
        part(b52(), "the three phases").measured
        == "kg-sys-looped (R = 4): train step 500, ID step 2000, OOD step 8000"
    )


def test_b52_without_a_looped_run_judges_only_the_vanilla_part():
    deep = {"name": "kg-sys-deep", "id": 0.95, "ood_target_r2": 0.02}
    claim = check_b52(None, deep, None, [])  # an output whose --runs left out every looped run
    assert outcomes(claim) == [NOT_JUDGED] * 3 + [PASS] and claim.verdict == "partly reproduced"
    assert all("no looped systematic run" in p.measured for p in claim.parts[:3])
    assert [p.text for p in claim.parts] == [p.text for p in b52().parts]  # the same sentence, part by part


def test_b52_an_arm_that_never_learned_is_not_judged_and_named():
    deep_unlearned = b52(deep_id=0.5, deep_r2=0.0)
    lens = part(deep_unlearned, "the depth-matched vanilla")
    assert lens.outcome == NOT_JUDGED and lens.measured.startswith("not learned: kg-sys-deep 0.500 < 0.9")
    assert outcomes(b52(looped_id=0.7)) == [NOT_JUDGED, NOT_JUDGED, NOT_JUDGED, PASS]


def test_the_bridge_is_read_in_the_first_iteration_only():
    grid = [[0.1, 0.2], [0.9, 0.95]]  # [iteration][layer]: decodable only in the second iteration
    assert first_iteration_bridge({"checkpoints": {"20": {}, "final": {"id": {"bridge_at_r1": grid}}}}) == 0.2


# ---- B5.4 -----------------------------------------------------------------------------------------


def model(name, r, base, chosen, depth=4, stage=5, base_r=None):
    return {
        "name": name,
        "R": r,
        "r_max": 3 * (r or 8),
        "learnable_depth": depth,
        "curriculum_stage": stage,
        "baseline_r": base_r or r,
        "depth_baseline": base,
        "chosen_r": 3 * (r or 8),
        "depth_chosen_r": chosen,
    }


def b54_models(r2=(3, 3), r4=(5, 5), r8=(6, 8), dynamic=(9, 10), r8_depth=5) -> list[dict]:
    return [
        model("kg-depth-r2", 2, *r2, depth=3, stage=4),
        model("kg-depth-r4", 4, *r4, depth=4, stage=5),
        model("kg-depth-r8", 8, *r8, depth=r8_depth, stage=6),
        model("kg-depth-dynamic", None, *dynamic, depth=7, stage=8, base_r=6),
    ]


def b54(**change):
    return check_b54(b54_models(**change), [])


def test_b54_lists_a_part_for_r2_and_r4_and_is_reproduced_when_every_part_passes():
    claim = b54()
    texts = [p.text.split(" (")[0] for p in claim.parts]
    assert texts == [
        "every fixed-R model with R > 4 gains depth with more inference iterations",
        "the dynamic-R model gains depth with more inference iterations",
        "R = 2 does not gain depth with more inference iterations",
        "R = 4 does not gain depth with more inference iterations",
        "at its training R no fixed-R model passes its training depth",
    ]
    assert claim.verdict == "reproduced"
    assert part(claim, "the dynamic-R").measured == "kg-depth-dynamic: 9 hops at r = 6, 10 hops at r = 24"
    assert part(claim, "at its training R").measured.startswith("kg-depth-r2: 3 hops at R = 2, trained to 4;")
    assert part(b52(), "the three phases").measured.endswith(": train step 500, ID step 2000, OOD step 8000")


@pytest.mark.parametrize(
    ("change", "broken"),
    [
        ({"r8": (6, 6)}, "every fixed-R model with R > 4"),
        ({"dynamic": (10, 10)}, "the dynamic-R model"),
        ({"r4": (5, 6)}, "R = 4 does not gain"),
        ({"r2": (3, 4)}, "R = 2 does not gain"),
        ({"r8": (7, 8)}, "at its training R"),  # 7 hops at R = 8, trained only to 6
    ],
)
def test_b54_a_tampered_part_flips_the_verdict(change: dict, broken: str):
    claim = b54(**change)
    assert part(claim, broken).outcome == FAIL and claim.verdict == "not reproduced"


def test_b54_an_unlearned_model_is_named_and_a_missing_one_not_judged():
    claim = b54(r8_depth=1)
    for starts in ("every fixed-R model with R > 4", "at its training R"):
        unlearned = part(claim, starts)
        assert unlearned.outcome == NOT_JUDGED and "kg-depth-r8 1 < 2" in unlearned.measured
    only_dynamic = check_b54([model("kg-depth-dynamic", None, 9, 10, base_r=6)], [])
    assert outcomes(only_dynamic) == [NOT_JUDGED, PASS, NOT_JUDGED, NOT_JUDGED, NOT_JUDGED]
    assert part(only_dynamic, "R = 2").measured == "no fixed-R model with R = 2 in this output"


def test_b54_and_b55_are_not_judged_over_a_group_whose_run_was_left_out():
    claim = check_b54([m for m in b54_models() if m["name"] != "kg-depth-r8"], [], {"kg-depth-r8": 8})
    assert outcomes(claim) == [NOT_JUDGED, PASS, PASS, PASS, NOT_JUDGED]
    assert (
        "runs of its group that --runs left out of this analysis: kg-depth-r8"
        in part(claim, "every fixed-R").measured
    )
    # with R = 8 absent, R = 4 would stand in as "the largest R": neither margin part is judged
    margins_claim = b55(fixed_r=4, absent={"kg-depth-r8": 8})
    assert outcomes(margins_claim) == [NOT_JUDGED, NOT_JUDGED] and margins_claim.verdict == "not judged"
    assert all("kg-depth-r8" in p.measured for p in margins_claim.parts)
    # a smaller R absent changes nothing B5.5 reads; an absent dynamic-R run only its own part
    assert outcomes(b55(absent={"kg-depth-r2": 2, "kg-depth-r4": 4})) == [PASS, PASS]
    dynamic_gone = b55(with_dynamic=False, absent={"kg-depth-dynamic": None})
    assert (
        outcomes(dynamic_gone) == [PASS, NOT_JUDGED] and "kg-depth-dynamic" in dynamic_gone.parts[1].measured
    )


def test_r_is_chosen_on_the_validation_chains_not_the_test_chains():
    # r = 1..4; the validation half is best at r = 2, the test half at r = 4
    validation = {"hop_2": [0.9, 1.0, 0.9, 0.8], "hop_3": [0.2, 0.7, 0.5, 0.4], "hop_4": [0.0, 0.1, 0.1, 0.5]}
    test = {"hop_2": [0.9, 1.0, 1.0, 1.0], "hop_3": [0.2, 0.5, 0.6, 0.7], "hop_4": [0.0, 0.1, 0.3, 0.7]}
    r = choose_r(validation, [1, 2, 3, 4])
    assert r == 2 and choose_r(test, [1, 2, 3, 4]) == 4
    assert depth_at(test, r) == 2  # the test half scores the validation's choice, not its own best
    assert depth_at(validation, 4) == 2 and depth_at(validation, 2) == 3
    assert choose_r(validation, [3, 4]) == 4  # a tie in depth goes to the higher mean accuracy
    assert choose_r({"hop_2": [0.7, 0.7]}, [1, 2]) == 1  # then to the smaller r
    assert depth_at({"hop_2": [0.5]}, 1) is None


# ---- B5.5 -----------------------------------------------------------------------------------------


def margins(values: list[float]) -> dict:
    peak = max(values)
    return {"margin": values, "peak_iteration": values.index(peak) + 1, "peak_margin": peak}


def b55(hop3=(1.0, 4.0, 3.0, 2.0), dynamic_depth=5, absent=None, fixed_r=8, with_dynamic=True):
    fixed = {
        "name": f"kg-depth-r{fixed_r}",
        "R": fixed_r,
        "learnable_depth": 3,
        "groups": {
            "hop_2": margins([2.0, 5.0, 4.0, 3.0]),
            "hop_3": margins(list(hop3)),
            "hop_4": margins([0.0, 0.1, 0.2, 0.3]),  # beyond the learnable depth: not read
        },
    }
    dynamic = {
        "name": "kg-depth-dynamic",
        "learnable_depth": dynamic_depth,
        "groups": {g: margins([1.0, 5.0, 4.9, 4.8]) for g in ("hop_2", "hop_3", "hop_4")},
    }
    return check_b55(fixed, dynamic if with_dynamic else None, [], absent)


def test_b55_reads_the_hops_up_to_the_learnable_depth():
    claim = b55()
    assert claim.verdict == "reproduced" and outcomes(claim) == [PASS, PASS]
    assert "hop_4" not in claim.parts[0].measured and "over hops 2..3" in claim.parts[1].measured


def test_b55_a_tampered_part_flips_and_an_unlearned_dynamic_model_is_named():
    rising = b55(hop3=(1.0, 2.0, 3.0, 4.0))  # peaks at the last iteration: no overthinking
    assert outcomes(rising) == [FAIL, PASS] and rising.verdict == "not reproduced"
    flat = b55(hop3=(1.0, 4.0, 3.9, 3.9))  # falls by 2.5 % of the peak only
    assert outcomes(flat)[0] == FAIL
    unlearned = b55(dynamic_depth=0)
    assert (
        unlearned.parts[1].outcome == NOT_JUDGED and "kg-depth-dynamic 0 < 2" in unlearned.parts[1].measured
    )


# ---- B5.6 -----------------------------------------------------------------------------------------


def halting(eps: float, adaptive=(0.62, 8.0), kl_only=(0.55, 7.5), best_fixed=0.63) -> dict:
    row = lambda acc, it: {"accuracy": acc, "mean_iterations": it}  # noqa: E731
    groups = {f"hop_{k}": [row(0.6, 2.0 + k)] for k in range(2, 7)}
    return {
        "kl_eps": eps,
        "overall": [row(*adaptive), row(*kl_only), row(0.1, 1.0), row(best_fixed, 8.0)],
        "groups": groups,
    }


def test_b56_is_judged_at_both_kl_thresholds_and_reports_the_cost_without_barring_it():
    claim = check_b56({0.01: halting(0.01), 0.001: halting(0.001)}, "kg-depth-dynamic", [])
    assert claim.verdict == "reproduced" and len(claim.parts) == 4
    assert claim.parts[0].text == "KL + entropy halting is more accurate than KL-only (ε = 0.01)"
    assert claim.parts[2].text == "KL + entropy halting is more accurate than KL-only (ε = 0.001)"
    assert (
        claim.parts[0].measured
        == "0.620 against 0.550; cost 8.00 against 7.50 mean iterations (1.07× KL-only's)"
    )
    # the paper's own figure: about 15 iterations against KL-only's 5 on hard hops; a cost is no bar
    costly_halting = halting(0.01, adaptive=(0.62, 15.0), kl_only=(0.55, 5.0))
    costly = check_b56({0.01: costly_halting, 0.001: halting(0.001)}, "d", [])
    assert outcomes(costly)[:2] == [PASS, PASS] and "3.00× KL-only's" in costly.parts[0].measured


def test_b56_a_rule_that_never_differs_fails_and_the_measured_numbers_read_plainly():
    same = halting(0.001, adaptive=(0.601, 10.2), kl_only=(0.601, 10.2))
    claim = check_b56({0.01: halting(0.01), 0.001: same}, "kg-depth-dynamic", [])
    assert outcomes(claim) == [PASS, PASS, FAIL, PASS]
    assert claim.parts[2].measured.startswith("0.601 against 0.601 (the entropy bar never bound); cost")


def test_b56_accuracy_carries_its_n_and_a_difference_within_noise_is_marked():
    h = halting(0.01)
    for row in h["overall"]:
        row["iteration_histogram"] = [50, 50]  # n = 100 items
    claim = check_b56({0.01: h, 0.001: halting(0.001)}, "kg-depth-dynamic", [])
    part = claim.parts[0]
    assert part.outcome == PASS and part.noise  # 0.62 against 0.55 on 100 items: the CI holds 0
    assert "n = 100" in part.measured and "within noise" in part.measured


def test_b56_a_model_that_never_learned_is_not_judged_and_named():
    low = halting(0.01, best_fixed=0.3)
    low["overall"][2]["accuracy"] = 0.1
    claim = check_b56({0.01: low, 0.001: halting(0.001)}, "kg-depth-dynamic", [])
    assert outcomes(claim)[:2] == [NOT_JUDGED] * 2 and outcomes(claim)[2:] == [PASS] * 2
    assert "kg-depth-dynamic 0.300 < 0.5" in claim.parts[0].measured
    assert outcomes(check_b56({}, None, [])) == [NOT_JUDGED] * 4
