"""Claims B5.1 and B5.3 of the paper-B experiments are judged part by part from the measured numbers;
an arm that never learned its own task makes its part `not judged`, naming it."""

import json
from pathlib import Path

import pytest
from conftest import plan_overrides, write_kg_systematic_run

from symgen.config import dump, resolve
from symgen.experiments.claims import FAIL, NOT_JUDGED, PASS
from symgen.experiments.kg_depth.claims import EQUAL, STALL, DepthRun, check_b53
from symgen.experiments.kg_depth.experiment import KGDepthExperiment, depth_run, dynamic_loops, planned_run
from symgen.experiments.kg_systematic.claims import check_b51, longest_at_each_r
from symgen.experiments.kg_systematic.experiment import KGSystematicExperiment, final_accuracies, ood_step

PAPER_DYNAMIC_RUN = plan_overrides(KGDepthExperiment(), "paper", "kg-depth-dynamic")


def outcomes(claim) -> list[str]:
    return [p.outcome for p in claim.parts]


def part(claim, starts: str):
    return next(p for p in claim.parts if p.text.startswith(starts))


# ---- B5.1 -----------------------------------------------------------------------------------------


def finals(
    t2: float | None = 7000, t4: float | None = 2000, level: float = 0.78, deep_id: float = 0.95
) -> dict[str, dict]:
    runs = {
        "kg-sys-looped-r2": {"ood": level, "id": 1.0, "loops": 2, "ood_step": t2, "steps": 60000},
        "kg-sys-looped": {"ood": level, "id": 1.0, "loops": 4, "ood_step": t4, "steps": 20000},
        "kg-sys-vanilla": {"ood": 0.01, "id": 0.93, "loops": 1, "ood_step": None, "steps": 20000},
        "kg-sys-deep": {"ood": 0.02, "id": deep_id, "loops": 1, "ood_step": None, "steps": 20000},
    }
    for name, f in runs.items():  # one two-layer block for R = 2 and R = 4, as the paper keeps one block
        f["blocks"] = 2 if f["loops"] > 1 else (4 if name == "kg-sys-deep" else 1)
    return runs


def test_b51_is_reproduced_when_every_part_passes():
    claim = check_b51(finals(), "quick", [])
    assert claim.verdict == "reproduced" and outcomes(claim) == [PASS] * 4
    speed = part(claim, "R = 4 reaches")
    assert speed.measured == "kg-sys-looped step 2000 against kg-sys-looped-r2 step 7000"
    assert speed.values["kg-sys-looped/ood_step"] == 2000
    assert claim.verdict == check_b51(finals(t2=None), "quick", []).verdict  # R = 2 never reaches it


def test_b51_a_vanilla_control_that_never_learned_is_not_judged_and_named():
    claim = check_b51(finals(deep_id=0.6), "quick", [])
    vanilla = part(claim, "vanilla models")
    assert vanilla.outcome == NOT_JUDGED and "kg-sys-deep 0.600 < 0.9" in vanilla.measured
    assert "kg-sys-vanilla" not in vanilla.measured  # the arm that learned is not blamed
    assert claim.verdict == "partly reproduced"


@pytest.mark.parametrize(
    ("change", "broken"),
    [
        ({"t2": 2000, "t4": 7000}, "R = 4 reaches"),  # R = 2 learns first
        ({"t2": 2000, "t4": 2000}, "R = 4 reaches"),  # a tie is not "fewer steps"
        ({"t4": None}, "R = 4 reaches"),  # R = 4 never reaches the bar
        ({"level": 0.6}, "every looped run's OOD"),  # above the quick bar, below the paper's level
        ({"level": 0.45}, "every looped run reaches"),
    ],
)
def test_b51_a_tampered_part_flips_the_verdict(change: dict, broken: str):
    claim = check_b51(finals(**change), "quick", [])
    assert part(claim, broken).outcome == FAIL and claim.verdict != "reproduced"


def test_b51_vanilla_composing_fails_its_part_and_missing_runs_are_not_judged():
    data = finals()
    data["kg-sys-deep"]["ood"] = 0.3
    claim = check_b51(data, "quick", [])
    assert part(claim, "vanilla models").outcome == FAIL and "kg-sys-deep 0.300" in claim.measured
    del data["kg-sys-looped-r2"]
    speed = part(check_b51(data, "quick", []), "R = 4 reaches")
    assert speed.outcome == NOT_JUDGED and speed.measured == "no looped run at R = 2 in this quick output"
    assert part(check_b51(finals(level=0.84), "paper", []), "every looped run's OOD").outcome == PASS


def test_b51_a_group_with_a_run_left_out_is_not_judged_naming_it():
    # R = 2's extension left out: the shorter R = 2 run present cannot stand for the R the claim reads
    claim = check_b51(finals(), "quick", [], {"kg-sys-looped-r2-long": (2, 2)})
    assert outcomes(claim) == [NOT_JUDGED, PASS, NOT_JUDGED, NOT_JUDGED]
    assert "kg-sys-looped-r2-long" in part(claim, "every looped run reaches").measured
    # a one-layer R = 2 (two layer passes) left out is no arm of the claim: nothing goes unjudged
    assert outcomes(check_b51(finals(), "quick", [], {"kg-sys-looped-r2-one": (2, 1)})) == [PASS] * 4
    present = {n: f for n, f in finals().items() if n != "kg-sys-deep"}
    vanilla_gone = check_b51(present, "quick", [], {"kg-sys-deep": (1, 4)})
    assert outcomes(vanilla_gone) == [PASS, NOT_JUDGED, PASS, PASS]
    assert part(vanilla_gone, "vanilla").values == {"kg-sys-vanilla/ood": 0.01, "kg-sys-vanilla/id": 0.93}
    names = {r.name for r in KGSystematicExperiment().runs("quick")}
    absent = KGSystematicExperiment().absent("quick", names - {"kg-sys-deep"})
    assert {n: c.model.n_loops for n, c in absent.items()} == {"kg-sys-deep": 1}


def test_b51_reads_the_longest_trained_run_of_each_r_and_names_the_shorter():
    data = finals(t2=None, level=0.78)
    data["kg-sys-looped-r2"]["ood"] = 0.08  # R = 2 at its first budget: not yet composing
    claim = check_b51(data, "quick", [])
    assert part(claim, "every looped run reaches").outcome == FAIL and claim.note == ""
    data["kg-sys-looped-r2-long"] = {"ood": 0.7, "id": 1.0, "loops": 2, "blocks": 2, "ood_step": 90000}
    data["kg-sys-looped-r2-long"]["steps"] = 120000
    claim = check_b51(data, "quick", [])
    assert part(claim, "every looped run reaches").outcome == PASS
    assert "kg-sys-looped-r2 0.080" not in part(claim, "every looped run reaches").measured
    assert (
        part(claim, "R = 4 reaches").measured
        == "kg-sys-looped step 2000 against kg-sys-looped-r2-long step 90000"
    )
    assert claim.note.startswith("R = 2 read at kg-sys-looped-r2-long (120000 steps; an extension")
    assert "kg-sys-looped-r2 (60000 steps) reads OOD 0.080, below the bar 0.5 at its own budget" in claim.note
    tie = {n: {"ood": 0.1, "loops": 2, "steps": 100} for n in ("kg-sys-looped-r2", "kg-sys-looped-r2-long")}
    assert list(longest_at_each_r(tie)[0]) == ["kg-sys-looped-r2-long"]  # a tie: the later-listed run
    data["kg-sys-looped-r2-long"]["ood"] = 0.1  # the longer run fails too: the part fails
    assert part(check_b51(data, "quick", []), "every looped run reaches").outcome == FAIL


def test_b51_reads_no_looped_run_of_fewer_than_four_layer_passes_and_names_it():
    data = finals()
    one_layer = {"ood": 0.08, "id": 1.0, "loops": 2, "blocks": 1, "ood_step": None, "steps": 120000}
    data["kg-sys-looped-r2-one-layer"] = one_layer
    claim = check_b51(data, "quick", [])
    assert outcomes(claim) == [PASS] * 4  # the longer one-layer run neither stands for R = 2 nor fails it
    assert "kg-sys-looped-r2-one-layer" not in part(claim, "every looped run reaches").measured
    assert "kg-sys-looped-r2-one-layer (R = 2, 1-layer block: 2 layer passes) reads OOD 0.080" in claim.note
    del data["kg-sys-looped-r2"]  # only the one-layer R = 2 left: no R = 2 arm
    speed = part(check_b51(data, "quick", []), "R = 4 reaches")
    assert speed.outcome == NOT_JUDGED and speed.measured == "no looped run at R = 2 in this quick output"


def test_b51_compares_speed_only_between_arms_of_one_block():
    data = finals()
    data["kg-sys-looped"]["blocks"] = 1  # R = 4 one layer (four passes), R = 2 two layers (four passes)
    claim = check_b51(data, "quick", [])
    speed = part(claim, "R = 4 reaches")
    assert speed.outcome == NOT_JUDGED and "differ in their block" in speed.measured
    assert "kg-sys-looped (R = 4, 1-layer block)" in speed.measured
    assert outcomes(claim) == [PASS, PASS, NOT_JUDGED, PASS]  # both still make four passes: both arms


def test_the_ood_bar_counts_from_the_first_evaluation_it_holds_for_two():
    ys = [0.0, 0.55, 0.3, 0.5, 0.6, 0.7]  # a single evaluation at the bar is a blip
    assert ood_step([{"step": 100 * i, "eval/ood/accuracy": y} for i, y in enumerate(ys)]) == 300
    assert ood_step([{"step": 100, "eval/ood/accuracy": 0.9}]) is None


def test_b51_from_run_directories_reads_the_speed_from_the_ood_curves(tmp_path: Path):
    fast, slow = [0.0, 0.6, 0.78, 0.78, 0.78, 0.78], [0.0, 0.0, 0.55, 0.1, 0.7, 0.78]
    runs = {  # R = 2 learns first: the speed part fails (every run of the quick suite present)
        "kg-sys-looped-r2-two-layer-block": write_kg_systematic_run(tmp_path / "r2-two", 2, fast, blocks=2),
        "kg-sys-looped-r2": write_kg_systematic_run(tmp_path / "r2", 2, [0.0] * 6),
        "kg-sys-looped-r2-long": write_kg_systematic_run(tmp_path / "r2-long", 2, [0.0] * 6),
        "kg-sys-looped": write_kg_systematic_run(tmp_path / "r4", 4, slow, blocks=2),  # R = 2's block
        "kg-sys-vanilla": write_kg_systematic_run(tmp_path / "vanilla", 1, [0.0] * 6),
        "kg-sys-deep": write_kg_systematic_run(tmp_path / "deep", 1, [0.01] * 6, blocks=4, id_acc=0.5),
    }
    (tmp_path / "figures").mkdir()
    section = KGSystematicExperiment().analyze("quick", runs, tmp_path / "figures")
    (b51,) = section.claims
    speed = part(b51, "R = 4 reaches")
    assert (
        speed.outcome == FAIL
        and speed.measured == "kg-sys-looped step 1250 against kg-sys-looped-r2-two-layer-block step 500"
    )
    assert part(b51, "vanilla models").outcome == NOT_JUDGED  # the deep model's ID is 0.5
    assert [row[-1] for row in section.tables[0].rows] == ["500", "—", "—", "1250", "—", "—"]
    assert "kg-sys-looped-r2-long (R = 2, 1-layer block: 2 layer passes)" in b51.note


def test_final_accuracy_averages_the_last_evaluations():
    records = [{"step": s, "eval/ood/accuracy": a} for s, a in ((1, 0.0), (2, 0.3), (3, 0.6), (4, 0.9))]
    assert final_accuracies(records) == {"ood": 0.6}


def test_the_quick_and_smoke_suites_train_r2_and_r4_looped_runs():
    for suite in ("smoke", "quick"):
        configs = {r.name: resolve(r.recipe, r.overrides) for r in KGSystematicExperiment().runs(suite)}
        assert {c.model.n_loops for c in configs.values()} == {1, 2, 4}
        assert configs["kg-sys-deep"].model.n_layers == 4
        two = configs["kg-sys-looped-r2-two-layer-block"]  # B5.1's R = 2: four layer passes
        assert (two.model.n_layers, two.model.n_loops) == (2, 2)
        assert two.train.steps == configs["kg-sys-looped"].train.steps
    quick = KGSystematicExperiment().runs("quick")
    assert quick[0].name == "kg-sys-looped-r2"  # the one-layer row, the longest, first
    r2 = resolve(quick[0].recipe, quick[0].overrides)
    assert (
        r2.train.steps == 3 * resolve("kg-systematic-looped").train.steps and r2.train.keep_checkpoints == 2
    )
    long = next(r for r in quick if r.name == "kg-sys-looped-r2-long")  # goes on from R = 2's last checkpoint
    assert (
        long.extends == "kg-sys-looped-r2"
        and resolve(long.recipe, long.overrides).train.steps == 2 * r2.train.steps
    )


# ---- B5.3 -----------------------------------------------------------------------------------------


def depth_runs(
    protocol: str, depths: dict[int, int], dynamic: int | None, budget: int | None
) -> list[DepthRun]:
    suffix = "-stall" if protocol == STALL else ""
    runs = [
        DepthRun(f"kg-depth-r{r}{suffix}", protocol, r, False, d, budget, "budget") for r, d in depths.items()
    ]
    if dynamic is not None:
        runs.append(DepthRun(f"kg-depth-dynamic{suffix}", protocol, 8, True, dynamic, budget, "budget"))
    return runs


def both(equal: dict[int, int], equal_dyn: int | None, stall: dict[int, int], stall_dyn: int | None):
    runs = depth_runs(EQUAL, equal, equal_dyn, 160000) + depth_runs(STALL, stall, stall_dyn, 480000)
    return check_b53(runs, [])


def test_b53_is_judged_under_both_protocols():
    claim = both({1: 2, 2: 3, 4: 4, 8: 5}, 7, {1: 2, 2: 4, 4: 6, 8: 8}, 9)
    assert claim.verdict == "reproduced" and len(claim.parts) == 4
    assert [p.text.split(":")[0] for p in claim.parts] == [
        "equal compute (160,000 layer passes each)",
        "equal compute (160,000 layer passes each)",
        "until the curriculum stalls (cap 480,000 layer passes)",
        "until the curriculum stalls (cap 480,000 layer passes)",
    ]
    assert "ended by the cap, not a stall" in claim.parts[2].measured  # a capped depth is only a floor
    for part in claim.parts:  # each part states its bar: what learnable depth is, and when a run counts
        assert "curriculum threshold" in part.text and "learnable depth ≥ 2" in part.text
    assert "trains each R until its curriculum stalls" in claim.note


def test_b53_a_tampered_part_flips_the_verdict_and_an_unlearned_arm_is_named():
    decreasing = both({1: 2, 2: 3, 4: 4, 8: 5}, 7, {1: 2, 2: 4, 4: 3, 8: 8}, 9)
    assert outcomes(decreasing) == [PASS, PASS, FAIL, PASS] and decreasing.verdict == "not reproduced"
    slow_dynamic = both({1: 2, 2: 3, 4: 4, 8: 5}, 4, {1: 2, 2: 4, 4: 6, 8: 8}, 9)
    assert outcomes(slow_dynamic) == [PASS, FAIL, PASS, PASS]
    flat = both({1: 2, 2: 2, 4: 2, 8: 2}, 2, {1: 2, 2: 2, 4: 2, 8: 2}, 2)
    assert outcomes(flat) == [FAIL, PASS, FAIL, PASS]
    r1_unlearned = both({1: 0, 2: 3, 4: 4, 8: 5}, 7, {1: 2, 2: 4, 4: 6, 8: 8}, 9)
    grows = r1_unlearned.parts[0]
    assert grows.outcome == NOT_JUDGED and "kg-depth-r1 0 < 2" in grows.measured
    assert "kg-depth-r2" not in grows.measured and r1_unlearned.verdict == "partly reproduced"


def test_b53_a_protocol_the_suite_did_not_train_is_not_judged():
    claim = check_b53(depth_runs(EQUAL, {1: 2, 2: 3}, None, 160000), [])
    assert outcomes(claim) == [PASS, NOT_JUDGED, NOT_JUDGED, NOT_JUDGED]
    assert claim.parts[2].text.startswith("until the curriculum stalls:")


def test_b53_a_part_whose_protocol_lacks_a_run_of_the_suite_is_not_judged_naming_it():
    # with R = 8 left out, R = 1, 2, 4 alone would pass "grows" and the dynamic model would beat R = 4
    present = depth_runs(EQUAL, {1: 2, 2: 3, 4: 4}, 7, 160000) + depth_runs(
        STALL, {1: 2, 2: 3, 4: 4, 8: 8}, 7, 480000
    )
    absent = depth_runs(EQUAL, {8: 0}, None, 160000)
    claim = check_b53(present, [], absent)
    assert outcomes(check_b53(present, [])) == [PASS, PASS, PASS, FAIL]
    assert outcomes(claim) == [NOT_JUDGED, NOT_JUDGED, PASS, FAIL]
    for judged in claim.parts[:2]:
        assert judged.measured == "runs of its group that --runs left out of this analysis: kg-depth-r8"
    # an absent dynamic-R run leaves the fixed-R comparison judged
    no_dynamic = check_b53(
        depth_runs(EQUAL, {1: 2, 2: 3}, None, 160000), [], depth_runs(EQUAL, {}, 0, 160000)
    )
    assert (
        outcomes(no_dynamic)[:2] == [PASS, NOT_JUDGED] and "kg-depth-dynamic" in no_dynamic.parts[1].measured
    )


def test_the_experiment_names_the_suite_runs_an_analysis_lacks_with_their_protocol():
    exp = KGDepthExperiment()
    present = [r.name for r in exp.runs("quick") if r.name not in ("kg-depth-r8", "kg-depth-dynamic-stall")]
    absent = {name: planned_run(name, cfg.to_dict()) for name, cfg in exp.absent("quick", present).items()}
    assert set(absent) == {"kg-depth-r8", "kg-depth-dynamic-stall"}
    r8, dynamic = absent["kg-depth-r8"], absent["kg-depth-dynamic-stall"]
    assert (r8.protocol, r8.loops, r8.dynamic, r8.budget) == (EQUAL, 8, False, 160000)
    assert (dynamic.protocol, dynamic.dynamic, dynamic.stopped_by) == (STALL, True, "not trained")
    assert exp.absent("quick", [r.name for r in exp.runs("quick")]) == {}
    # under --set, an absent run is classified as it would have trained: here without a budget
    exp.invocation_sets = ("train.budget_layer_passes=null",)
    assert planned_run("kg-depth-r8", exp.absent("quick", present)["kg-depth-r8"].to_dict()).protocol == STALL


def write_depth_run(run: Path, overrides: list[str], depth: int) -> Path:
    run.mkdir(parents=True)
    (run / "config.yaml").write_text(dump(resolve("kg-depth-curriculum", overrides)))
    summary = {"learnable_depth": depth, "stopped_by": "budget", "steps": 10, "train_seconds": 1.0}
    (run / "summary.json").write_text(json.dumps(summary))
    return run


def test_a_run_named_stall_or_without_budget_belongs_to_the_stall_protocol(tmp_path: Path):
    base = write_depth_run(tmp_path / "a", ["model.n_loops=8"], 5)
    assert depth_run("kg-depth-r8", base) == DepthRun("kg-depth-r8", EQUAL, 8, False, 5, 160000, "budget")
    stall = write_depth_run(tmp_path / "b", ["model.n_loops=8", "train.budget_layer_passes=480000"], 6)
    assert depth_run("kg-depth-r8-stall", stall).protocol == STALL
    unbudgeted = write_depth_run(tmp_path / "c", ["train.budget_layer_passes=null"], 6)
    assert depth_run("kg-depth-r4", unbudgeted).protocol == STALL


@pytest.mark.parametrize(
    ("overrides", "label", "mean"),
    [
        ([], "clip(Poisson(4), 2, 8)", 4.08),
        (["train.loops_lambda=5.0", "train.loops_min=3"], "clip(Poisson(5), 3, 8)", 5.05),
        (PAPER_DYNAMIC_RUN, "clip(Poisson(4), 2, 8)", 4.08),
    ],
)
def test_dynamic_runs_are_labelled_from_their_own_config(tmp_path: Path, overrides, label, mean):
    (tmp_path / "config.yaml").write_text(dump(resolve("kg-depth-dynamic", overrides)))
    got_label, got_mean = dynamic_loops(tmp_path)
    assert got_label == label and got_mean == pytest.approx(mean, abs=0.03)


def test_quick_depth_runs_share_one_budget_per_protocol_and_test_beyond_the_curriculum():
    specs = KGDepthExperiment().runs("quick")
    configs = {r.name: resolve(r.recipe, r.overrides) for r in specs}
    equal = {n: c for n, c in configs.items() if not n.endswith("-stall")}
    budget = {c.train.budget_layer_passes for c in equal.values()}
    assert len(budget) == 1 and budget.pop() == 160000
    assert all(c.model.n_layers >= 2 and c.task.curriculum_reset_optimizer for c in configs.values())
    assert all(c.task.max_hops >= 2 * c.task.curriculum_max_hops > 0 for c in configs.values())
    assert len({c.model.n_loops for c in equal.values() if c.train.loops == "fixed"}) >= 4
    # every equal-compute run goes on until its curriculum stalls, under a cap of 3x the budget
    stalls = {r.extends: r for r in specs if r.name.endswith("-stall")}
    assert set(stalls) == set(equal)
    for name, spec in stalls.items():
        cfg = configs[spec.name]
        assert spec.name == f"{name}-stall" and cfg.train.budget_layer_passes == 320000
        assert cfg.model.n_loops == equal[name].model.n_loops and cfg.train.loops == equal[name].train.loops
        layers_per_step = cfg.model.n_layers * cfg.model.n_loops
        assert cfg.train.loops == "poisson" or cfg.train.steps * layers_per_step >= 320000  # the cap binds


def test_the_depth_table_gives_each_hop_count_its_own_column(tmp_path: Path):
    runs = {}
    for r, accuracies in ((1, {2: 0.86, 3: 0.24}), (2, {2: 0.9, 3: 0.5, 4: 0.1})):
        run = write_depth_run(tmp_path / f"kg-depth-r{r}", [f"model.n_loops={r}"], 2)
        summary = json.loads((run / "summary.json").read_text())
        summary["final"] = {f"eval/hop_{k}/accuracy": a for k, a in accuracies.items()}
        summary["final"]["eval/hop_2/accuracy@r4"] = 1.0  # a grid entry, not a hop count of its own
        (run / "summary.json").write_text(json.dumps(summary))
        line = {"step": 10, "eval/curriculum/learnable_depth": 2, "layer_passes": 20}
        (run / "metrics.jsonl").write_text(json.dumps(line) + "\n")
        runs[run.name] = run
    _, per_hop = KGDepthExperiment().analyze("quick", runs, tmp_path / "figures").tables
    assert per_hop.headers == ["run", "hop 2", "hop 3", "hop 4"]
    assert per_hop.rows == [["kg-depth-r1", 0.86, 0.24, "—"], ["kg-depth-r2", 0.9, 0.5, 0.1]]


def test_b51_shows_each_ood_with_its_interval_and_marks_a_bar_inside_it_as_noise():
    data = finals()
    for f in data.values():
        f["ood_n"] = 100
    claim = check_b51(data, "quick", [])
    looped = part(claim, "every looped run")
    assert "0.780 [0.689, 0.850], n = 100" in looped.measured and not looped.noise
    assert looped.values["kg-sys-looped/ood n"] == 100
    assert looped.values["kg-sys-looped/ood 95% CI"] == [0.6893, 0.85]
    data["kg-sys-looped"]["ood"] = 0.55  # 0.5 lies inside [0.452, 0.644]: which side, n cannot say
    near = part(check_b51(data, "quick", []), "every looped run")
    assert near.outcome == PASS and near.noise and "within noise" in near.measured
    assert "n = " not in part(check_b51(finals(), "quick", []), "every looped run").measured  # no n logged
