import math

import pytest

from symgen.measures.intervals import Rate, difference, wilson


def test_wilson_matches_known_values_and_narrows_with_n():
    lo, hi = wilson(0.9, 200)  # 180 of 200
    assert lo == pytest.approx(0.8506, abs=1e-3) and hi == pytest.approx(0.9343, abs=1e-3)
    assert wilson(0.0, 50)[0] == 0.0 and wilson(0.0, 50)[1] > 0.0  # never a zero-width interval
    assert wilson(0.9, 1000)[1] - wilson(0.9, 1000)[0] < hi - lo
    assert wilson(0.5, 0) == (0.0, 1.0)


def test_a_rate_crosses_a_bar_inside_its_interval_and_shows_its_n():
    assert Rate(0.92, 200).crosses(0.9) and not Rate(0.99, 200).crosses(0.9)
    assert Rate(0.92, 200).shown().endswith("n = 200") and "[" in Rate(0.92, 200).shown()
    assert Rate(0.92, 0).shown() == "0.920 (n not logged)"  # no n recorded: no interval claimed
    # one rule for an unknown n, whatever the part: no interval, so no bar is said to be inside it
    assert not Rate(0.92, 0).crosses(0.9) and not Rate(float("nan"), 200).crosses(0.9)
    assert Rate(0.92, 0).as_values("x") == {"x": 0.92}
    values = Rate(0.5, 100).as_values("arm all_seen")
    assert values["arm all_seen n"] == 100 and len(values["arm all_seen 95% CI"]) == 2
    assert Rate(math.nan, 100).as_values("x").keys() == {"x"}  # an unmeasured arm: no interval


def test_the_difference_interval_holds_the_difference_and_shrinks_with_n():
    lo, hi = difference(Rate(0.49, 200), Rate(0.42, 200))
    assert lo < 0.07 < hi and lo < 0.05  # A7.2β (mid)'s 0.49 against 0.42 on n = 200: within noise
    lo2, hi2 = difference(Rate(0.49, 5000), Rate(0.42, 5000))
    assert lo2 > 0.05 and hi2 - lo2 < hi - lo
