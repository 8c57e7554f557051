"""A7.6 part by part: a missing model package leaves the real-model part not judged, and fine-tuning
from collapsed rows is judged only against ordinary rows that reached the target."""

from symgen.experiments.claims import merge_seeds
from symgen.experiments.transfer.experiment import _claim

BUDGET = {"transfer-ft-reserved": 2000, "transfer-ft-ordinary": 2000, "transfer-ft-repaired": 2000}
SCAN = {"reserved": {"mean_cosine": 0.85}, "ordinary": {"mean_cosine": 0.2}}


def outcomes(claim) -> list[str]:
    return [p.outcome for p in claim.parts]


def test_a_missing_package_is_not_judged_not_a_failure():
    steps = {"transfer-ft-reserved": 1500, "transfer-ft-ordinary": 300, "transfer-ft-repaired": 250}
    claim = _claim(steps, BUDGET, None)
    assert outcomes(claim) == ["not judged", "pass"] and "not installed" in claim.parts[0].measured
    assert merge_seeds({0: claim}).verdict == "partly reproduced"
    assert outcomes(_claim(steps, BUDGET, SCAN)) == ["pass", "pass"]


def test_slow_fine_tuning_needs_ordinary_rows_that_learned():
    never = {"transfer-ft-reserved": None, "transfer-ft-ordinary": None, "transfer-ft-repaired": 400}
    claim = _claim(never, BUDGET, SCAN)
    assert (
        outcomes(claim) == ["pass", "not judged"] and "ordinary rows never reached" in claim.parts[1].measured
    )
    close = {"transfer-ft-reserved": 500, "transfer-ft-ordinary": 300, "transfer-ft-repaired": 250}
    assert outcomes(_claim(close, BUDGET, SCAN))[1] == "fail"  # 1.7x is not several times slower
