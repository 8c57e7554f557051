"""Attention pieces: causal self-attention with a KV cache, rotary positions, and the copy head.

The copy head (paper A) reads queries and keys from the residual stream like any head, but its
values are the raw token embeddings of the attended tokens, so it can reproduce the identity of any
context token, seen in training or not, as long as the embedding rows stay distinguishable.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import Tensor, nn


@dataclass
class KVCache:
    """Keys and values of every attention call, keyed by (iteration, layer, head kind)."""

    entries: dict[tuple[int, int, str], tuple[Tensor, Tensor]] = field(default_factory=dict)

    def extend(self, key: tuple[int, int, str], k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if key in self.entries:
            old_k, old_v = self.entries[key]
            k, v = torch.cat([old_k, k], dim=2), torch.cat([old_v, v], dim=2)
        self.entries[key] = (k, v)
        return k, v


def rotary_tables(
    positions: Tensor, dim: int, fraction: float = 1.0, base: float = 10000.0
) -> tuple[Tensor, Tensor]:
    """cos/sin tables of shape (B, 1, T, dim) for integer positions of shape (B, T).

    `fraction` < 1 rotates only the highest frequencies (p-RoPE): the lowest ones are set to zero,
    so their dimension pairs compare content alone, at any distance."""
    inv_freq = 1.0 / base ** (torch.arange(0, dim, 2, device=positions.device).float() / dim)
    inv_freq[round(fraction * len(inv_freq)) :] = 0.0
    angles = positions.float()[..., None] * inv_freq  # (B, T, dim/2)
    angles = torch.cat([angles, angles], dim=-1)[:, None]
    return angles.cos(), angles.sin()


def apply_rotary(x: Tensor, rotary: tuple[Tensor, Tensor] | None) -> Tensor:
    if rotary is None:
        return x
    cos, sin = rotary
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos.to(x.dtype) + rotated * sin.to(x.dtype)


def attend(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, dropout: float) -> Tensor:
    """SDPA; `mask` is a boolean (B, 1, Tq, Tk) "may attend" mask, or None for plain causal."""
    if mask is None:
        causal = q.shape[2] == k.shape[2] and q.shape[2] > 1
        return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout, is_causal=causal)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout)


class SelfAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, bias: bool, dropout: float) -> None:
        super().__init__()
        self.n_heads, self.head_dim, self.dropout = n_heads, d_model // n_heads, dropout
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=bias)
        self.out = nn.Linear(d_model, d_model, bias=bias)

    def forward(
        self,
        x: Tensor,
        mask: Tensor | None,
        rotary: tuple[Tensor, Tensor] | None,
        cache: KVCache | None,
        cache_key: tuple[int, int, str],
    ) -> Tensor:
        B, T, D = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.n_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k = apply_rotary(q, rotary), apply_rotary(k, rotary)
        if cache is not None:
            k, v = cache.extend(cache_key, k, v)
        y = attend(q, k, v, mask, self.dropout if self.training else 0.0)
        return self.out(y.transpose(1, 2).reshape(B, T, D))


class CopyAttention(nn.Module):
    """One head: q, k from the (normed) residual stream; values given by the caller.

    With values = the raw embeddings x_j W_E this is paper A's copy attention; with values = the
    residual stream itself it is the attention-modulated skip of Boix-Adsera et al. (an identity
    value/output map). The output enters the residual stream through a learned scalar gate, so no
    projection can mix token identities away.
    """

    def __init__(self, d_model: int, head_dim: int, gate_init: float) -> None:
        super().__init__()
        self.head_dim = head_dim
        self.qk = nn.Linear(d_model, 2 * head_dim, bias=False)
        self.gate = nn.Parameter(torch.tensor(float(gate_init)))

    def forward(
        self,
        x: Tensor,
        values: Tensor,
        mask: Tensor | None,
        rotary: tuple[Tensor, Tensor] | None,
        cache: KVCache | None,
        cache_key: tuple[int, int, str],
    ) -> Tensor:
        B, T, _ = x.shape
        q, k = self.qk(x).view(B, T, 2, 1, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k = apply_rotary(q, rotary), apply_rotary(k, rotary)
        v = values[:, None]  # (B, 1, T, D), one head
        if cache is not None:
            k, v = cache.extend(cache_key, k, v)
        y = attend(q, k, v.to(q.dtype), mask, 0.0)
        return self.gate * y[:, 0]
