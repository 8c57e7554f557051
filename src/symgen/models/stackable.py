"""Layers whose parameters may carry a leading seed dimension.

A model built for one seed holds ordinary parameters (a Linear weight of shape (out, in)). A
*stacked* model (`symgen.models.stacking.stack`) holds S seeds' parameters in one tensor each,
(S, out, in), and runs all S seeds in one forward pass: its batch is S equal groups of rows,
seed-major, group s computed with seed s's parameters through batched matmuls. Attention and every
other parameter-free operation see the S·B rows as one batch. At small sizes a training step is
bound by per-operation overhead, so S seeds cost little more than one. Only the readout of
selected positions (`readout_selected`) goes seed by seed, each seed selecting its own number.

With ordinary parameters every layer is the `torch.nn` one, the same arithmetic bit for bit.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def seeds_of(weight: Tensor, base_dim: int) -> int:
    """The number of stacked seeds of a parameter whose ordinary form has `base_dim` dimensions
    (1: an ordinary parameter)."""
    return weight.shape[0] if weight.dim() > base_dim else 1


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """F.linear, or with weight (S, out, in) and bias (S, out): rows of x in S seed-major groups."""
    if weight.dim() == 2:
        return F.linear(x, weight, bias)
    S = weight.shape[0]
    grouped = x.reshape(S, -1, x.shape[-1])
    out = (
        torch.baddbmm(bias[:, None], grouped, weight.transpose(1, 2))
        if bias is not None
        else torch.bmm(grouped, weight.transpose(1, 2))
    )
    return out.reshape(*x.shape[:-1], weight.shape[1])


def per_row(p: Tensor, rows: int, base_dim: int) -> Tensor:
    """A parameter's value for each of `rows` batch rows, shape (rows or 1, *ordinary shape): seed
    s's value repeated over its rows / S rows, or the ordinary parameter with a leading 1."""
    if p.dim() == base_dim:
        return p[None]
    return p.repeat_interleave(rows // p.shape[0], dim=0)


class Linear(nn.Linear):
    def forward(self, x: Tensor) -> Tensor:
        return linear(x, self.weight, self.bias)


class LayerNorm(nn.LayerNorm):
    def forward(self, x: Tensor) -> Tensor:
        if self.weight.dim() == 1:
            return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        S, D = self.weight.shape
        normed = F.layer_norm(x, self.normalized_shape, None, None, self.eps).reshape(S, -1, D)
        return torch.addcmul(self.bias[:, None], normed, self.weight[:, None]).reshape(x.shape)


class Embedding(nn.Embedding):
    """Ids (S·B, ...) index seed s's table for their group of rows."""

    def forward(self, ids: Tensor) -> Tensor:
        if self.weight.dim() == 2:
            return super().forward(ids)
        S, V, D = self.weight.shape
        offsets = torch.arange(S, device=ids.device).mul_(V).view(S, *[1] * ids.dim())
        shifted = ids.reshape(S, -1, *ids.shape[1:]) + offsets
        return F.embedding(shifted.reshape(ids.shape), self.weight.reshape(S * V, D))


def readout_selected(x: Tensor, select: Tensor, norm: LayerNorm, unembedding: Tensor) -> Tensor:
    """A stacked model's final norm and unembedding of the positions `select` (S·B, T) picks in x
    (S·B, T, D), seed by seed (each seed selects its own number of positions), concatenated in row
    order as `readout(x)[select]`."""
    S = unembedding.shape[0]
    out = []
    for s, (h, keep) in enumerate(zip(x.chunk(S), select.chunk(S), strict=True)):
        normed = F.layer_norm(h[keep], norm.normalized_shape, norm.weight[s], norm.bias[s], norm.eps)
        out.append(F.linear(normed, unembedding[s]))
    return torch.cat(out)
