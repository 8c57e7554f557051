"""Claim verdicts of the paper-B experiments are computed from the measured numbers."""

from pathlib import Path

import pytest

from symgen.config import dump, resolve
from symgen.experiments.kg_depth import PAPER, PAPER_DYNAMIC, KGDepthExperiment, dynamic_loops
from symgen.experiments.kg_systematic import KGSystematicExperiment, final_accuracies


def test_b53_needs_depth_growing_with_r():
    assert KGDepthExperiment.claim({1: 0, 2: 2, 4: 4}, 5, {}).verdict == "reproduced"
    assert KGDepthExperiment.claim({1: 0, 2: 2, 4: 1}, None, {}).verdict == "not reproduced"
    assert KGDepthExperiment.claim({2: 2, 4: 2}, None, {}).verdict == "not reproduced"
    assert KGDepthExperiment.claim({1: 0, 2: 2, 4: 4}, 2, {}).verdict == "not reproduced"  # dynamic < best R


@pytest.mark.parametrize(
    ("overrides", "label", "mean"),
    [
        ([], "clip(Poisson(4), 2, 8)", 4.08),
        (["train.loops_lambda=5.0", "train.loops_min=3"], "clip(Poisson(5), 3, 8)", 5.05),
        (PAPER + PAPER_DYNAMIC, "clip(Poisson(4), 2, 8)", 4.08),
    ],
)
def test_dynamic_runs_are_labelled_from_their_own_config(tmp_path: Path, overrides, label, mean):
    (tmp_path / "config.yaml").write_text(dump(resolve("kg-depth-dynamic", overrides)))
    got_label, got_mean = dynamic_loops(tmp_path)
    assert got_label == label and got_mean == pytest.approx(mean, abs=0.03)


def test_b51_needs_looped_high_and_every_vanilla_low():
    finals = {"kg-sys-looped": {"ood": 0.7}, "kg-sys-vanilla": {"ood": 0.05}, "kg-sys-deep": {"ood": 0.08}}
    assert KGSystematicExperiment.claim_b51(finals, {}).verdict == "reproduced"
    finals["kg-sys-deep"]["ood"] = 0.3
    assert KGSystematicExperiment.claim_b51(finals, {}).verdict == "not reproduced"


def test_final_accuracy_averages_the_last_evaluations():
    records = [{"step": s, "eval/ood/accuracy": a} for s, a in ((1, 0.0), (2, 0.3), (3, 0.6), (4, 0.9))]
    assert final_accuracies(records) == {"ood": 0.6}


def test_depth_under_halting_is_the_deepest_hop_at_06():
    from symgen.experiments.kg_inside import _depth_under_halting

    def rows(accuracy: float) -> list[dict]:  # KL + entropy first, then KL-only
        return [{"accuracy": accuracy}, {"accuracy": 0.0}]

    result = {"groups": {"hop_2": rows(0.9), "hop_3": rows(0.61), "hop_4": rows(0.2), "hop_5": rows(0.65)}}
    assert _depth_under_halting(result) == 5
    assert _depth_under_halting({"groups": {"hop_2": rows(0.5)}}) is None


def test_quick_depth_runs_share_one_compute_budget_and_test_beyond_the_curriculum():
    specs = KGDepthExperiment().runs("quick")
    configs = [resolve(r.recipe, r.overrides) for r in specs]
    assert len({c.train.budget_layer_passes for c in configs}) == 1 and configs[0].train.budget_layer_passes
    assert all(c.model.n_layers >= 2 and c.task.curriculum_reset_optimizer for c in configs)
    assert all(c.task.max_hops >= 2 * c.task.curriculum_max_hops > 0 for c in configs)
    assert len({c.model.n_loops for c in configs if c.train.loops == "fixed"}) >= 4
