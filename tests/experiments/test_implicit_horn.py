"""The implicit-Horn claims on one seed's runs: judged part by part, every arm first learns its seen task,
and C1 reads each looped model (fixed R, dynamic R) at the r chosen on the validation set, never on the
test set."""

from pathlib import Path

import pytest

from symgen.analysis.implicit import ImplicitRun, choose_r, reached, validation_accuracy
from symgen.config import resolve
from symgen.experiments.claims import FAIL, NOT_JUDGED, PASS
from symgen.experiments.implicit_horn.claims import (
    DEEP_RUN,
    DYNAMIC_RUN,
    LEARNED_RUN,
    LOOPED_RUN,
    REACH_BAR,
    VANILLA_RUN,
    claim_c1,
    claim_c2,
    claim_c3,
)
from symgen.experiments.implicit_horn.experiment import ImplicitHornExperiment
from symgen.measures.metrics import rank_correlation
from symgen.training.run import train_run


def fake_run(
    name: str,
    by_r: dict[int, list[float]],
    own_r: int,
    unseen: list[float] | None = None,
    halting: list[float] | None = None,
    validation: dict[int, list[float]] | None = None,
) -> ImplicitRun:
    """A run trained on depths 1–3 and tested on 1–6: all_seen accuracy per depth at each r; all_unseen
    the same unless given (at the own R); halting iterations per depth; validation accuracy per r."""
    final = {}
    for r, accs in by_r.items():
        suffix = "" if r == own_r else f"@r{r}"
        for d, a in enumerate(accs, 1):
            final[f"all_seen/depth{d}/accuracy{suffix}"] = a
            final[f"all_unseen/depth{d}/accuracy{suffix}"] = (unseen or accs)[d - 1] if r == own_r else a
    for d, it in enumerate(halting or [], 1):
        final[f"all_seen/depth{d}/halting/iterations"] = it
    return ImplicitRun(
        name=name, dir=Path(name), summary={}, final=final, trained_depth=3, test_depth=6, own_r=own_r,
        grid=sorted(by_r), r_label=str(own_r), looped=own_r > 1,
        validation={r: dict(enumerate(accs, 1)) for r, accs in (validation or {}).items()},
    )  # fmt: skip


EXTRAPOLATES = {4: [1, 1, 0.9, 0.6, 0.5, 0.5], 8: [1, 1, 0.95, 0.9, 0.8, 0.6]}
STUCK = {4: [1, 1, 0.9, 0.6, 0.5, 0.5], 8: [1, 1, 0.9, 0.6, 0.5, 0.5]}
# the dynamic model's own R is its plain read-out at model.n_loops = 8
DYNAMIC_EXTRAPOLATES = {8: [1, 1, 0.9, 0.6, 0.5, 0.5], 12: [1, 1, 0.95, 0.9, 0.8, 0.6]}
LEARNED_ONCE = {1: [1, 0.9, 0.8, 0.5, 0.5, 0.5]}
CHANCE = {1: [0.5] * 6}


def c1_runs(
    looped=EXTRAPOLATES,
    validation=EXTRAPOLATES,
    deep=LEARNED_ONCE,
    vanilla=LEARNED_ONCE,
    dynamic=DYNAMIC_EXTRAPOLATES,
    dynamic_validation=DYNAMIC_EXTRAPOLATES,
) -> dict:
    return {
        LOOPED_RUN: fake_run(LOOPED_RUN, looped, 4, validation=validation),
        DYNAMIC_RUN: fake_run(DYNAMIC_RUN, dynamic, 8, validation=dynamic_validation),
        DEEP_RUN: fake_run(DEEP_RUN, deep, 1),
        VANILLA_RUN: fake_run(VANILLA_RUN, vanilla, 1),
    }


def outcomes(claim) -> list[str]:
    return [p.outcome for p in claim.parts]


def test_c1_passes_when_more_iterations_reach_deeper_and_neither_control_does():
    claim = claim_c1(c1_runs())
    assert outcomes(claim) == [PASS, PASS, PASS, PASS] and claim.verdict == "reproduced"
    values = claim.parts[0].values
    assert values["r_validation"] == 8 and values["test_reach"] == 5 and values["test_reach_at_R"] == 3
    # the dynamic model, judged on the same bar: its own R is its plain read-out (8), its r from its grid
    dynamic = claim.parts[1]
    assert DYNAMIC_RUN in dynamic.text and LOOPED_RUN not in dynamic.text
    assert dynamic.values["r_validation"] == 12 and dynamic.values["test_reach_at_R"] == 3
    assert "at its R = 8" in dynamic.measured
    assert DYNAMIC_RUN in " ".join(claim.evidence) and "reaches 5 at r = 12" in claim.note


def test_each_looped_model_is_judged_on_its_own():
    # the dynamic model already reaches depth 5 at its own R: more iterations add nothing to it
    deep_at_own_r = {8: [1, 1, 0.95, 0.9, 0.8, 0.6], 12: [1, 1, 0.95, 0.9, 0.8, 0.6]}
    claim = claim_c1(c1_runs(dynamic=deep_at_own_r, dynamic_validation=deep_at_own_r))
    assert outcomes(claim) == [PASS, FAIL, PASS, PASS] and claim.verdict == "not reproduced"
    # a dynamic model that loses its trained depths with more iterations fails its part only
    collapses = {8: [1, 1, 0.9, 0.6, 0.5, 0.5], 12: [0.55, 0.5, 0.5, 0.5, 0.5, 0.5]}
    claim = claim_c1(c1_runs(dynamic=collapses, dynamic_validation=collapses))
    assert outcomes(claim) == [PASS, FAIL, PASS, PASS] and claim.parts[1].values["r_validation"] == 8
    # one that never learned leaves its part not judged, naming it; the fixed-R parts stand
    claim = claim_c1(c1_runs(dynamic={8: [0.5] * 6, 12: [0.5] * 6}))
    assert outcomes(claim) == [PASS, NOT_JUDGED, PASS, PASS] and DYNAMIC_RUN in claim.parts[1].measured
    # without the dynamic run its part says so
    runs = c1_runs()
    del runs[DYNAMIC_RUN]
    assert claim_c1(runs).parts[1].measured == f"no run {DYNAMIC_RUN}"


def test_c1_needs_the_extra_iterations_to_add_depth():
    # the looped model already reaches depth 5 at its own R: more iterations add nothing
    at_own_r = {4: [1, 1, 0.95, 0.9, 0.8, 0.6], 8: [1, 1, 0.95, 0.9, 0.8, 0.6]}
    claim = claim_c1(c1_runs(looped=at_own_r, validation=at_own_r))
    assert claim.parts[0].values["test_reach_at_R"] == 5 and claim.parts[0].outcome == FAIL
    assert claim.parts[1].outcome == PASS  # the dynamic model's part is its own


def test_c1_names_the_compute_matched_deep_model_as_its_control():
    claim = claim_c1(c1_runs())
    deep = next(p for p in claim.parts if DEEP_RUN in p.text)
    assert "compute-matched" in deep.text and claim.parts.index(deep) == 2
    assert VANILLA_RUN in claim.parts[3].text
    # the controls' looped arm is the fixed-R model, not the dynamic one
    assert f"{LOOPED_RUN} 0.90" in deep.measured and DYNAMIC_RUN not in deep.measured
    # a deep model that reaches past its trained depths fails that part, and with it the claim
    goes_deeper = claim_c1(c1_runs(deep={1: [1, 1, 0.9, 0.85, 0.8, 0.5]}))
    assert outcomes(goes_deeper) == [PASS, PASS, FAIL, PASS] and goes_deeper.verdict == "not reproduced"


def test_r_is_chosen_on_the_validation_set_not_on_the_test_set():
    # the test set would pick r = 8 (reach 5); the validation set reaches deepest at r = 4
    validation = {4: [1, 1, 0.9, 0.7, 0.5, 0.5], 8: [1, 0.7, 0.5, 0.5, 0.5, 0.5]}
    claim = claim_c1(c1_runs(validation=validation))
    part = claim.parts[0]
    assert part.values["r_validation"] == 4 and part.values["test_reach"] == 3 and part.outcome == FAIL
    assert "reaches 5 at r = 8" in claim.note and "not evidence" in claim.note
    # ties go to the fewest r; without a validation reading the part cannot be judged
    assert choose_r({8: {1: 0.9}, 4: {1: 0.9}, 2: {1: 0.5}}, REACH_BAR) == (4, 1)
    unread = c1_runs(validation={})
    assert claim_c1(unread).parts[0].outcome == NOT_JUDGED


def test_a_control_that_never_learned_leaves_its_part_not_judged_and_names_it():
    claim = claim_c1(c1_runs(vanilla=CHANCE))
    assert outcomes(claim) == [PASS, PASS, PASS, NOT_JUDGED] and claim.verdict == "partly reproduced"
    assert f"{VANILLA_RUN} 0.500 < 0.75" in claim.parts[3].measured
    # "learned" is every trained depth, not their mean (0.97, 0.95, 0.7: mean 0.87)
    claim = claim_c1(c1_runs(deep={1: [0.97, 0.95, 0.7, 0.5, 0.5, 0.5]}))
    assert claim.parts[2].outcome == NOT_JUDGED and f"{DEEP_RUN} 0.700" in claim.parts[2].measured
    # a fixed-R looped model that never learned leaves its part and both controls' not judged
    claim = claim_c1(c1_runs(looped={4: [0.5] * 6, 8: [0.5] * 6}))
    assert outcomes(claim) == [NOT_JUDGED, PASS, NOT_JUDGED, NOT_JUDGED]
    assert all(LOOPED_RUN in claim.parts[i].measured for i in (0, 2, 3))
    assert claim_c1({}).parts[2].measured.startswith("no run")


def test_a_tampered_part_flips_the_verdict():
    assert claim_c1(c1_runs()).verdict == "reproduced"
    stuck = claim_c1(c1_runs(looped=STUCK, validation=STUCK))
    assert outcomes(stuck) == [FAIL, PASS, PASS, PASS] and stuck.verdict == "not reproduced"
    assert stuck.parts[0].values["test_reach"] == 3


def test_c2_needs_small_gaps_with_frozen_rows_and_chance_with_learned_rows():
    seen = {4: [0.95, 0.9, 0.85, 0.6, 0.5, 0.5]}
    runs = {
        LOOPED_RUN: fake_run(LOOPED_RUN, seen, 4, unseen=[0.93, 0.88, 0.8, 0.5, 0.5, 0.5]),
        LEARNED_RUN: fake_run(LEARNED_RUN, seen, 4, unseen=[0.5, 0.55, 0.5, 0.5, 0.5, 0.5]),
    }
    claim = claim_c2(runs)
    assert outcomes(claim) == [PASS, PASS] and claim.verdict == "reproduced"
    assert claim.parts[0].values["gap_depth3"] == pytest.approx(0.05)
    # a gap of 0.11 at one trained depth fails the first part
    wide = runs | {LOOPED_RUN: fake_run(LOOPED_RUN, seen, 4, unseen=[0.93, 0.88, 0.74, 0.5, 0.5, 0.5])}
    assert outcomes(claim_c2(wide)) == [FAIL, PASS]
    # exactly 10 points passes (0.8 − 0.7 is a hair above 0.1 in floats)
    ten = runs | {LOOPED_RUN: fake_run(LOOPED_RUN, {4: [0.8] * 6}, 4, unseen=[0.7] * 6)}
    assert outcomes(claim_c2(ten))[0] == PASS
    # learned rows that keep unseen symbols above chance fail the second
    kept = runs | {LEARNED_RUN: fake_run(LEARNED_RUN, seen, 4, unseen=[0.8, 0.55, 0.5, 0.5, 0.5, 0.5])}
    assert outcomes(claim_c2(kept)) == [PASS, FAIL]


def test_c2_shows_each_gap_with_its_interval_and_40_problems_a_depth_leave_the_bars_within_noise():
    seen = {4: [0.95, 0.9, 0.85, 0.6, 0.5, 0.5]}
    runs = {
        LOOPED_RUN: fake_run(LOOPED_RUN, seen, 4, unseen=[0.93, 0.88, 0.8, 0.5, 0.5, 0.5]),
        LEARNED_RUN: fake_run(LEARNED_RUN, seen, 4, unseen=[0.5, 0.55, 0.5, 0.5, 0.5, 0.5]),
    }
    assert not any(p.noise for p in claim_c2(runs).parts)  # no n logged: no interval, no noise mark
    for run in runs.values():
        run.final |= {f"{s}/depth{d}/n": 40 for s in ("all_seen", "all_unseen") for d in range(1, 7)}
    frozen, learned = claim_c2(runs).parts
    assert frozen.outcome == PASS and frozen.noise and "(n = 40, 40, 40)" in frozen.measured
    lo, hi = frozen.values["gap_depth3 95% CI"]
    assert lo < -0.1 and hi > 0.1  # 0.85 − 0.80 on 40 problems each: either side of ±0.10
    assert learned.outcome == PASS and learned.noise and "0.500 [0.352, 0.648], n = 40" in learned.measured


def test_c2_control_that_never_learned_the_seen_task_is_not_judged_with_its_numbers():
    never = {4: [0.6, 0.47, 0.42, 0.5, 0.5, 0.5]}
    runs = {
        LOOPED_RUN: fake_run(LOOPED_RUN, {4: [0.95, 0.9, 0.85, 0.6, 0.5, 0.5]}, 4),
        LEARNED_RUN: fake_run(LEARNED_RUN, never, 4, unseen=[0.45] + [0.5] * 5),
    }
    claim = claim_c2(runs)
    part = claim.parts[1]
    assert part.outcome == NOT_JUDGED and claim.verdict == "partly reproduced"
    assert f"{LEARNED_RUN} 0.420 < 0.75" in part.measured and "[0.45, 0.5, 0.5]" in part.measured
    assert part.values["all_unseen_depth1"] == 0.45


def test_c3_reads_halting_iterations_against_depth_per_looped_model():
    learned = [1, 1, 0.9, 0.6, 0.5, 0.5]
    grows = [2, 2, 3, 4, 4, 5]
    runs = {
        LOOPED_RUN: fake_run(LOOPED_RUN, {4: learned}, 4, halting=grows),
        DYNAMIC_RUN: fake_run(DYNAMIC_RUN, {8: learned}, 8, halting=grows),
    }
    claim = claim_c3(runs)
    assert outcomes(claim) == [PASS, PASS] and claim.verdict == "reproduced"
    assert LOOPED_RUN in claim.parts[0].text and DYNAMIC_RUN in claim.parts[1].text
    flat = runs | {DYNAMIC_RUN: fake_run(DYNAMIC_RUN, {8: learned}, 8, halting=[3] * 6)}
    assert outcomes(claim_c3(flat)) == [PASS, FAIL]
    # rank correlation alone is not enough: the deepest depth must also spend more than the shallowest
    back = runs | {LOOPED_RUN: fake_run(LOOPED_RUN, {4: learned}, 4, halting=[5, 3, 4, 6, 7, 5])}
    assert rank_correlation(list(range(6)), [5, 3, 4, 6, 7, 5]) > 0.5 and outcomes(claim_c3(back))[0] == FAIL
    unlearned = runs | {DYNAMIC_RUN: fake_run(DYNAMIC_RUN, {8: [0.5] * 6}, 8, halting=grows)}
    claim = claim_c3(unlearned)
    assert outcomes(claim) == [PASS, NOT_JUDGED] and DYNAMIC_RUN in claim.parts[1].measured


def test_each_claim_names_as_evidence_the_runs_its_parts_read():
    runs = c1_runs() | {LEARNED_RUN: fake_run(LEARNED_RUN, EXTRAPOLATES, 4)}
    evidence = {c.id: set(c.evidence) for c in (claim_c1(runs), claim_c2(runs), claim_c3(runs))}
    assert evidence == {
        "C1": {LOOPED_RUN, DYNAMIC_RUN, DEEP_RUN, VANILLA_RUN},
        "C2": {LOOPED_RUN, LEARNED_RUN},
        "C3": {LOOPED_RUN, DYNAMIC_RUN},
    }


def test_reached_is_the_deepest_depth_with_every_shallower_one_above_the_bar():
    assert reached({1: 1, 2: 0.9, 3: 0.7, 4: 0.9}, 0.75) == 2
    assert reached({1: 0.7, 2: 0.9}, 0.75) == 0
    assert reached({1: 0.9, 3: 0.9}, 0.75) == 1  # a missing depth is not reached


def test_tiny_looped_runs_are_read_on_the_validation_set_and_analysed(tmp_path):
    overrides = ["model.d_model=16", "task.n_seen=30", "task.n_unseen=20", "task.n_test=12",
                 "task.eval_loops=[1,2]", "train.steps=2", "train.eval_every=2", "train.warmup_steps=1",
                 "train.threads=1", "train.freeze_embeddings=true"]  # fmt: skip
    train_run(resolve("horn-implicit-looped", overrides), tmp_path / LOOPED_RUN, progress=False)
    train_run(resolve("horn-implicit-dynamic", overrides), tmp_path / DYNAMIC_RUN, progress=False)
    validation = validation_accuracy(tmp_path / LOOPED_RUN)
    assert sorted(validation) == [1, 2, 4]
    assert all(sorted(acc) == list(range(1, 7)) for acc in validation.values())
    run_dirs = {name: tmp_path / name for name in (LOOPED_RUN, DYNAMIC_RUN)}
    section = ImplicitHornExperiment().analyze("smoke", run_dirs, tmp_path / "fig")
    assert [c.id for c in section.claims] == ["C1", "C2", "C3"]
    assert section.tables[0].rows[0][0] == LOOPED_RUN and all(p.exists() for p in section.figures)
    # the controls are missing here: their parts are not judged, saying so
    parts = section.claims[0].parts
    assert [p.outcome for p in parts[2:]] == [NOT_JUDGED] * 2
    assert all(p.measured.startswith("no run") for p in parts[2:])
    # both looped models: an all_seen heatmap each, side by side, and a figure of their iterations
    names = [p.name for p in section.figures]
    assert names[:4] == [
        f"{n}_{s}.png" for s in ("all_seen", "all_unseen") for n in (LOOPED_RUN, DYNAMIC_RUN)
    ]
    assert {f"{LOOPED_RUN}_iterations.png", f"{DYNAMIC_RUN}_iterations.png"} <= set(names)
    past_r = {row[0]: row for row in section.tables[1].rows}
    assert past_r[LOOPED_RUN][1:3] == ["4", 12] and past_r[DYNAMIC_RUN][1:3] == ["dynamic", 24]
    assert len(past_r[LOOPED_RUN]) == len(section.tables[1].headers)
