"""Does the model match a symbol to its other occurrences? (The step every proof step needs: a rule's
body atom is known when the same symbol stands among the facts or an earlier conclusion.)

For every prompt position that holds a symbol seen earlier in the same prompt, the share of each
head's attention on the earlier positions holding that symbol; averaged over such positions, the best
head of each block. A head that matches symbols puts most of its weight there; a head that attends
uniformly puts about `uniform`, the share those positions hold of everything it may attend to."""

from __future__ import annotations

import torch
from torch import Tensor

from symgen.models.attention import recorded_attention
from symgen.models.transformer import Transformer


def symbol_mask(vocab_size: int, symbol_ids: list[int]) -> Tensor:
    """(V,) bool: the task's symbol tokens, the ones whose earlier copies a matching head finds."""
    mask = torch.zeros(vocab_size, dtype=torch.bool)
    mask[torch.as_tensor(symbol_ids, dtype=torch.long)] = True
    return mask


def repeated_positions(ids: Tensor, prompt_lengths: list[int], symbols: Tensor) -> Tensor:
    """(B, T, T) bool: [b, p, q] when q < p, both in the prompt, and both hold the same symbol."""
    B, T = ids.shape
    in_prompt = torch.arange(T)[None] < torch.tensor(prompt_lengths)[:, None]
    is_symbol = symbols[ids] & in_prompt
    same = (ids[:, :, None] == ids[:, None, :]) & is_symbol[:, :, None] & is_symbol[:, None, :]
    return same & torch.ones(T, T, dtype=torch.bool).tril(-1)


@torch.no_grad()
def same_symbol_shares(
    model: Transformer, ids: Tensor, prompt_lengths: list[int], symbols: Tensor
) -> dict[str, float]:
    """`match/block{i}`: the best head's mean attention share on earlier copies of a position's symbol
    (its first iteration); `match/best`: the best block's; `match/uniform`: the share under uniform
    attention. `symbols`: (V,) bool, the vocabulary's symbol tokens."""
    pairs = repeated_positions(ids.cpu(), prompt_lengths, symbols.cpu())
    asking = pairs.any(-1)  # (B, T): positions whose symbol occurred before
    if not asking.any():
        return {}
    with recorded_attention(model) as recorded:
        model(ids)
    out: dict[str, float] = {}
    for block, calls in enumerate(recorded):
        probs = calls[0].float().cpu()  # (B, H, T, T)
        share = (probs * pairs[:, None]).sum(-1)  # (B, H, T)
        per_head = share.permute(1, 0, 2)[:, asking].mean(-1)  # (H,)
        out[f"match/block{block}"] = float(per_head.max())
    out["match/best"] = max(out.values())
    visible = torch.arange(1, ids.shape[1] + 1, dtype=torch.float)[None]  # causal: p + 1 positions
    out["match/uniform"] = float((pairs.sum(-1) / visible)[asking].mean())
    return out
