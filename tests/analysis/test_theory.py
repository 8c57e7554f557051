import copy
import json

import pytest
import torch

from symgen.analysis import theory
from symgen.errors import UserError

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    return theory.run_theory(tmp_path_factory.mktemp("theory"), "quick")


def test_features_have_norm_exactly_r():
    x = torch.randn(50, 8, dtype=torch.float64)
    w = torch.randn(8, 6, dtype=torch.float64)
    h = theory.features(x, w, 2.5)
    assert torch.allclose(h.norm(dim=-1), torch.full((50,), 2.5, dtype=torch.float64), atol=1e-12)
    assert torch.allclose(h.mean(-1), torch.zeros(50, dtype=torch.float64), atol=1e-12)  # LayerNorm'd


def test_quick_run_writes_report_and_figure(report, tmp_path_factory):
    out = tmp_path_factory.getbasetemp()
    written = json.loads(next(out.rglob("theory.json")).read_text())
    assert written["claim"] == report["claim"]
    assert next(out.rglob("theory.png")).stat().st_size > 10_000
    assert report["claim"]["evidence"] == ["theory.png"]
    assert report["seconds"] < 30


def test_measured_contraction_stays_within_bound(report):
    for name in ("gd", "sgd", "sign_flip", "diverge"):
        case = report["cases"][name]
        assert case["max_excess_over_bound"] <= theory.TOL, name
        assert case["max_shortfall_below_lower"] <= theory.TOL, name  # two-sided: softmax term <= eta r^2 p
        assert case["measured_fraction"] > 0.5, name


def test_gd_rate_follows_prediction_and_rows_collapse(report):
    gd = report["cases"]["gd"]
    assert gd["r2p_below_lambda_all_steps"]
    assert gd["median_rate_measured"] <= gd["median_rate_predicted"] + theory.TOL
    assert abs(gd["median_rate_measured"] - gd["median_rate_predicted"]) < 0.01
    assert gd["delta_final_over_initial"] < 1e-4
    assert gd["initial_mean_cosine"] < 0.2 < 0.99 < gd["final_mean_cosine"]


def test_sign_flip_and_divergence(report):
    flip, div = report["cases"]["sign_flip"], report["cases"]["diverge"]
    assert flip["sign_flip_fraction"] > 0.99
    assert abs(flip["median_signed_rate"] - (1 - flip["eta_lambda"])) < 0.05  # about -0.5
    assert flip["delta_final_over_initial"] < 1e-6
    assert div["delta_final_over_initial"] > 1e3
    # the softmax term adds to the overshoot when eta*lambda > 1 (so the p term of the bound is
    # needed) and pulls unseen rows together when eta*lambda < 1
    assert flip["median_rate_measured"] > abs(1 - flip["eta_lambda"]) and flip["softmax_share_median"] > 0
    assert report["cases"]["gd"]["softmax_share_median"] < 0
    assert report["cases"]["gd"]["sign_flip_fraction"] == 0.0


def test_adamw_collapses_empirically(report):
    assert report["cases"]["adamw"]["final_mean_cosine"] > 0.9
    assert "max_excess_over_bound" not in report["cases"]["adamw"]


def outcomes(claim: dict) -> list[bool]:
    return [p["ok"] for p in claim["parts"]]


def test_claim_parts_are_computed(report):
    claim = report["claim"]
    assert claim["id"] == "A7.7" and len(claim["parts"]) == 4
    bound, rate, flip, grows = outcomes(claim)
    assert bound and flip and grows
    broken = copy.deepcopy(report["cases"])
    broken["sgd"]["max_excess_over_bound"] = 1e-3
    assert outcomes(theory._claim(broken, "f.png"))[0] is False
    broken = copy.deepcopy(report["cases"])
    broken["sign_flip"]["sign_flip_fraction"] = 0.1
    assert outcomes(theory._claim(broken, "f.png"))[2] is False


def test_the_gd_rate_is_judged_against_the_lemma_as_an_upper_bound(report):
    gd = report["cases"]["gd"]
    assert outcomes(report["claim"])[1] is (gd["median_rate_measured"] <= gd["median_rate_predicted"] + 1e-9)
    below = copy.deepcopy(report["cases"])  # faster than the bound (plain decay's rate): agrees with it
    below["gd"]["median_rate_measured"] = below["gd"]["rate_decay_only"]
    assert outcomes(theory._claim(below, "f.png"))[1] is True
    above = copy.deepcopy(report["cases"])  # slower than the bound allows: the lemma is contradicted
    above["gd"]["median_rate_measured"] = above["gd"]["median_rate_predicted"] + 1e-3
    assert outcomes(theory._claim(above, "f.png"))[1] is False
    unmet = copy.deepcopy(report["cases"])  # r²p ≥ λ at some step: the lemma's premise fails
    unmet["gd"]["r2p_below_lambda_all_steps"] = False
    assert outcomes(theory._claim(unmet, "f.png"))[1] is False


def test_bad_scale_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="scale"):
        theory.run_theory(tmp_path, "huge")
