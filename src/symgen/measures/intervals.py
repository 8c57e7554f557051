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

    def crosses(self, bar: float) -> bool:
        """The bar lies inside the interval: which side of it the true accuracy is, n cannot say."""
        lo, hi = self.interval
        return lo <= bar <= hi

    def shown(self) -> str:
        """`0.945 [0.909, 0.967], n = 200`."""
        if math.isnan(self.value) or self.n <= 0:
            return f"{self.value:.3f}"
        lo, hi = self.interval
        return f"{self.value:.3f} [{lo:.3f}, {hi:.3f}], n = {self.n}"

    def as_values(self, name: str) -> dict[str, float | int | list[float]]:
        """The entries a claim's part keeps: the value, its n and its interval."""
        if math.isnan(self.value) or self.n <= 0:
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
