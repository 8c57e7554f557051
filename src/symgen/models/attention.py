"""Attention pieces: causal self-attention with a KV cache, rotary positions, the copy head and the
same-symbol term.

The copy head (paper A) reads queries and keys from the residual stream like any head, but its
values are the raw token embeddings of the attended tokens, so it can reproduce the identity of any
context token, seen in training or not, as long as the embedding rows stay distinguishable.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from symgen.models.stackable import Linear, per_row


@dataclass
class KVCache:
    """Keys and values of every attention call, keyed by (iteration, layer, head kind)."""

    entries: dict[tuple[int, int, str], tuple[Tensor, Tensor]] = field(default_factory=dict)

    @property
    def length(self) -> int:
        """Positions cached so far (every entry holds them all): the next tokens come after these."""
        for k, _ in self.entries.values():
            return k.shape[2]
        return 0

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


def _causal_mask(q: Tensor, k: Tensor) -> Tensor:
    """(Tq, Tk) "may attend": causal, the queries being the last Tq of the Tk positions."""
    Tq, Tk = q.shape[2], k.shape[2]
    return torch.ones(Tq, Tk, dtype=torch.bool, device=q.device).tril(Tk - Tq)


def attend(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, dropout: float, bias: Tensor | None = None
) -> Tensor:
    """SDPA; `mask` is a boolean (B, 1, Tq, Tk) "may attend" mask, or None for plain causal; `bias`
    (B, H, Tq, Tk) is added to the attention scores of allowed pairs."""
    if bias is not None:
        if q.device.type == "cpu":  # SDPA with a float mask takes a path twice as slow on CPU
            return F.dropout(attention_probs(q, k, mask, bias), dropout) @ v
        mask = _causal_mask(q, k) if mask is None else mask
        # -inf where attention is not allowed, built on the mask's shape, not the (B, H) scores'
        blocked = torch.zeros(mask.shape, dtype=q.dtype, device=q.device).masked_fill(~mask, float("-inf"))
        bias = bias.to(q.dtype) + blocked
        return F.scaled_dot_product_attention(q, k, v, attn_mask=bias, dropout_p=dropout)
    if mask is None:
        causal = q.shape[2] == k.shape[2] and q.shape[2] > 1
        return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout, is_causal=causal)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout)


def attention_probs(q: Tensor, k: Tensor, mask: Tensor | None, bias: Tensor | None) -> Tensor:
    """The attention weights, made explicit: (B, H, Tq, Tk). `attend` computes with them on CPU when a
    bias is added; `recorded_attention` reads them."""
    scores = (q * q.shape[-1] ** -0.5) @ k.transpose(-1, -2)
    if bias is not None:
        scores = scores + bias.to(q.dtype)
    mask = _causal_mask(q, k) if mask is None else mask
    return scores.masked_fill(~mask, float("-inf")).softmax(-1)


@contextmanager
def recorded_attention(model: nn.Module, detach: bool = True) -> Iterator[list[list[Tensor]]]:
    """While open, every `SelfAttention` of `model` (in module order: block by block) appends the
    attention weights of each call to its list: one list per block, one entry per iteration.
    `detach=False` keeps them in the graph, for a loss on them."""
    modules = [m for m in model.modules() if isinstance(m, SelfAttention)]
    for m in modules:
        m.recorded, m.record_detached = [], detach
    try:
        yield [m.recorded for m in modules]
    finally:
        for m in modules:
            m.recorded = None


def same_symbol_scores(embeddings: Tensor, cache: KVCache | None) -> Tensor:
    """cos(e_i, e_j) between the raw embedding rows of every query token i and key token j:
    (B, 1, Tq, Tk). The keys of earlier decoding steps come from the cache."""
    e = F.normalize(embeddings, dim=-1)[:, None]  # (B, 1, T, D)
    keys = e if cache is None else cache.extend((-1, -1, "symbols"), e, e)[0]
    return e @ keys.transpose(-1, -2)


class SelfAttention(nn.Module):
    """Multi-head causal attention. With `same_symbol_init` set, every head adds β_h · cos(e_i, e_j)
    to its scores (β_h learned, starting there): a direct test of "do positions i and j hold the
    same symbol", which holds for any pair of distinct random rows, seen in training or not."""

    def __init__(
        self, d_model: int, n_heads: int, bias: bool, dropout: float, same_symbol_init: float | None = None
    ) -> None:
        super().__init__()
        self.n_heads, self.head_dim, self.dropout = n_heads, d_model // n_heads, dropout
        self.qkv = Linear(d_model, 3 * d_model, bias=bias)
        self.out = Linear(d_model, d_model, bias=bias)
        self.same_symbol = None
        self.recorded: list[Tensor] | None = None  # `recorded_attention`: the weights of each call
        self.record_detached = True
        if same_symbol_init is not None:
            self.same_symbol = nn.Parameter(torch.full((n_heads,), float(same_symbol_init)))

    def forward(
        self,
        x: Tensor,
        mask: Tensor | None,
        rotary: tuple[Tensor, Tensor] | None,
        cache: KVCache | None,
        cache_key: tuple[int, int, str],
        same_symbol: Tensor | None = None,
    ) -> Tensor:
        """`same_symbol`: (B, 1, Tq, Tk) cosines of the raw embedding rows, when the term is on."""
        B, T, D = x.shape
        qkv = self.qkv(x).view(B, T, 3, self.n_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k = apply_rotary(qkv[:2], rotary)  # queries and keys rotated in one pass
        v = qkv[2]
        if cache is not None:
            k, v = cache.extend(cache_key, k, v)
        bias = None
        if self.same_symbol is not None and same_symbol is not None:
            bias = per_row(self.same_symbol, B, base_dim=1)[:, :, None, None] * same_symbol
        if self.recorded is not None:
            probs = attention_probs(q, k, mask, bias)
            self.recorded.append(probs.detach() if self.record_detached else probs)
        y = attend(q, k, v, mask, self.dropout if self.training else 0.0, bias)
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
        self.qk = Linear(d_model, 2 * head_dim, bias=False)
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
        q, k = apply_rotary(self.qk(x).view(B, T, 2, 1, self.head_dim).permute(2, 0, 3, 1, 4), rotary)
        v = values[:, None]  # (B, 1, T, D), one head
        if cache is not None:
            k, v = cache.extend(cache_key, k, v)
        y = attend(q, k, v.to(q.dtype), mask, 0.0)
        return per_row(self.gate, B, base_dim=0)[:, None, None] * y[:, 0]
