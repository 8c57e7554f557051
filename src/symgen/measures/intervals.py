"""Uncertainty of an accuracy: the 95 % Wilson interval of a proportion, Newcombe's interval of a
difference of two, and whether an interval crosses the bar a claim's part sets."""

from __future__ import annotations

import math
from dataclasses import dataclass

Z95 = 1.959964


@dataclass(frozen=True)
class Rate:
    """An accuracy measured on n items, with its 95 % Wilson interval."""

    value: float
    n: int

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.value, self.n)

    @property
    def known(self) -> bool:
        """n was recorded (runs written before evaluations logged it have none)."""
        return self.n > 0 and not math.isnan(self.value)

    def crosses(self, bar: float) -> bool:
        """The bar lies inside the interval: which side of it the true accuracy is, n cannot say. The
        one rule for an unknown n: no interval, so nothing is marked (`shown` says n is not logged)."""
        if not self.known:
            return False
        lo, hi = self.interval
        return lo <= bar <= hi

    def shown(self) -> str:
        """`0.945 [0.909, 0.967], n = 200`; `0.945 (n not logged)` without n."""
        if math.isnan(self.value):
            return f"{self.value:.3f}"
        if not self.known:
            return f"{self.value:.3f} (n not logged)"
        lo, hi = self.interval
        return f"{self.value:.3f} [{lo:.3f}, {hi:.3f}], n = {self.n}"

    def as_values(self, name: str) -> dict[str, float | int | list[float]]:
        """The entries a claim's part keeps: the value, its n and its interval."""
        if not self.known:
            return {name: self.value}
        return {name: self.value, f"{name} n": self.n, f"{name} 95% CI": [round(x, 4) for x in self.interval]}


def wilson(p: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion p observed on n items (n = 0: the whole of [0, 1])."""
    if n <= 0 or math.isnan(p):
        return (0.0, 1.0)
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def difference(a: Rate, b: Rate) -> tuple[float, float]:
    """Newcombe's hybrid score interval of a.value − b.value from the two Wilson intervals."""
    (la, ua), (lb, ub) = a.interval, b.interval
    d = a.value - b.value
    return (d - math.hypot(a.value - la, ub - b.value), d + math.hypot(ua - a.value, b.value - lb))
