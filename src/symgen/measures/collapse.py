"""Collapse statistics of the rows of never-seen tokens (SPEC A4).

For a set U of token ids (the unseen symbols) and a reference set S (the seen symbols):

- ``mean_cos``: mean pairwise cosine similarity of the rows of U (i != j); ~0 for random rows in
  high dimension, 1 when they have collapsed onto one direction. ``cos_p05/p50/p95`` summarize the
  distribution of the pairwise cosines.
- ``cos_to_mean``: mean cosine of each row of U to the mean row of U.
- ``norm_ratio``: mean row norm over U divided by the mean row norm over S.
- ``spread``: root-mean-square distance of the rows of U to their mean row, and ``mean_row_norm``:
  the norm of that mean row. A high cosine has two causes these tell apart: the rows' differences
  contracting (spread falls: what weight decay does, SPEC A5) or a common vector added to every row
  growing past them (mean_row_norm rises while spread holds).
- ``self_nn``: the fraction of i in U whose best-scoring row among U, by the dot product a
  readout computes (<x_i, u_j> with x the input rows and u the output rows), is its own row. It
  asks whether the model can tell the unseen tokens apart through the unembedding. Random rows
  give ~1; rows collapsed onto a common vector give ~1/|U| (every i picks the same j, the row
  with the largest component along the common direction).

All statistics are computed in float64 on the CPU.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

QUANTILES = (0.05, 0.5, 0.95)
MAX_REFERENCE_ROWS = 1000  # seen rows used as the reference (the first ones given)


def pairwise_cosines(rows: Tensor) -> Tensor:
    """Cosines of every unordered pair i < j of rows (a flat tensor)."""
    x = rows.detach().double().cpu()
    unit = x / x.norm(dim=1, keepdim=True).clamp(min=1e-12)
    gram = unit @ unit.T
    i, j = torch.triu_indices(len(x), len(x), offset=1)
    return gram[i, j]


def row_stats(rows: Tensor, reference: Tensor | None = None) -> dict[str, float]:
    """Collapse statistics of one matrix of rows (see the module docstring)."""
    x = rows.detach().double().cpu()
    out: dict[str, float] = {}
    if len(x) >= 2:
        cos = pairwise_cosines(x)
        out["mean_cos"] = float(cos.mean())
        for q, v in zip(
            QUANTILES, torch.quantile(cos, torch.tensor(QUANTILES, dtype=cos.dtype)), strict=True
        ):
            out[f"cos_p{round(q * 100):02d}"] = float(v)
    mean = x.mean(0, keepdim=True)
    unit = x / x.norm(dim=1, keepdim=True).clamp(min=1e-12)
    out["cos_to_mean"] = float((unit @ (mean / mean.norm().clamp(min=1e-12)).T).mean())
    out["norm"] = float(x.norm(dim=1).mean())
    out["spread"] = spread(x)
    out["mean_row_norm"] = float(mean.norm())
    if reference is not None and len(reference):
        ref_norm = float(reference.detach().double().cpu().norm(dim=1).mean())
        out["norm_ratio"] = out["norm"] / max(ref_norm, 1e-12)
    return out


def spread(rows: Tensor) -> float:
    """Root-mean-square distance of the rows to their mean row (random rows of std σ in d dimensions:
    about σ·√d)."""
    x = rows.detach().double().cpu()
    return float((x - x.mean(0)).pow(2).sum(1).mean().sqrt())


def self_nearest(inputs: Tensor, outputs: Tensor) -> float:
    """Fraction of rows i whose largest dot product <inputs_i, outputs_j> over j is j = i."""
    x, u = inputs.detach().double().cpu(), outputs.detach().double().cpu()
    best = (x @ u.T).argmax(dim=1)
    return float((best == torch.arange(len(x))).double().mean())


def collapse_stats(
    embedding: Tensor, unembedding: Tensor, unseen: Sequence[int], seen: Sequence[int] | None = None
) -> dict[str, float]:
    """Statistics of the unseen rows on the input side (``unseen_in_*``) and the output side
    (``unseen_out_*``; the same rows when the embedding is tied), seen-row references
    (``seen_in_mean_cos``, ``seen_out_mean_cos``) and ``unseen_self_nn``."""
    unseen_t = torch.as_tensor(list(unseen), dtype=torch.long)
    seen_t = torch.as_tensor(list(seen or []), dtype=torch.long)[:MAX_REFERENCE_ROWS]
    metrics: dict[str, float] = {}
    for side, w in (("in", embedding), ("out", unembedding)):
        w = w.detach()
        ref = w[seen_t] if len(seen_t) else None
        for key, value in row_stats(w[unseen_t], ref).items():
            metrics[f"unseen_{side}_{key}"] = value
        if ref is not None and len(ref) >= 2:
            metrics[f"seen_{side}_mean_cos"] = float(pairwise_cosines(ref).mean())
    metrics["unseen_self_nn"] = self_nearest(embedding[unseen_t], unembedding[unseen_t])
    return metrics
