"""Fresh (un)embedding rows matched to the statistics of trained ones: how `symgen tokens repair`
and `train.init_repair` re-initialize reserved or never-seen rows."""

from __future__ import annotations

import numpy as np

METHODS = ("random", "mean")


def new_rows(ordinary: np.ndarray, k: int, method: str, rng: np.random.Generator) -> np.ndarray:
    """k fresh rows from ordinary-row statistics.

    random: ordinary mean + Gaussian with the ordinary rows' per-coordinate spread, then rescaled to a
    norm drawn from the ordinary rows' norms: centred like trained rows (what LayerNorm and attention
    downstream are used to) yet as far apart from each other as ordinary rows are.
    mean: ordinary mean + 1% of that spread: a near-collapsed baseline."""
    mu, sd = ordinary.mean(0), ordinary.std(0)
    noise = rng.standard_normal((k, ordinary.shape[1])) * sd
    if method == "mean":
        return mu + 0.01 * noise
    v = mu + noise
    norms = rng.choice(np.linalg.norm(ordinary, axis=1), size=k, replace=True)
    return v / np.linalg.norm(v, axis=1, keepdims=True) * norms[:, None]
