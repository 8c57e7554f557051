"""Batched greedy decoding with a KV cache, for the token-by-token tasks (chain-of-thought Horn)."""

from __future__ import annotations

import torch

from symgen.errors import UserError
from symgen.models.attention import KVCache
from symgen.models.recurrence import HaltingRule
from symgen.models.transformer import Transformer


@torch.no_grad()
def generate(
    model: Transformer,
    prompts: list[list[int]],
    max_new_tokens: int,
    eos_id: int,
    pad_id: int = 0,
    n_loops: int | None = None,
    halting: HaltingRule | None = None,
) -> list[list[int]]:
    """Batched greedy decoding with a KV cache. Prompts are left-padded; returns the new tokens
    of each prompt, up to and including eos (or max_new_tokens). With `halting` every token is
    decoded by a full forward pass (cached keys would mix iterations of halted positions)."""
    if not model.cfg.causal:
        raise UserError("a model with model.causal=false reads whole prompts: it does not generate")
    device = model.embed.weight.device
    width = max(len(p) for p in prompts)
    ids = torch.full((len(prompts), width), pad_id, dtype=torch.long, device=device)
    mask = torch.zeros_like(ids, dtype=torch.bool)
    for i, p in enumerate(prompts):
        ids[i, width - len(p) :] = torch.tensor(p, device=device)
        mask[i, width - len(p) :] = True
    cache = None if halting else KVCache()
    logits = model(ids, mask, n_loops=n_loops, cache=cache, halting=halting).logits[:, -1]
    out = torch.empty(len(prompts), 0, dtype=torch.long, device=device)
    done = torch.zeros(len(prompts), dtype=torch.bool, device=device)
    for _ in range(max_new_tokens):
        nxt = logits.argmax(-1).masked_fill(done, eos_id)
        out = torch.cat([out, nxt[:, None]], dim=1)
        done = done | (nxt == eos_id)
        if bool(done.all()):
            break
        mask = torch.cat([mask, torch.ones_like(mask[:, :1])], dim=1)
        if halting is None:
            logits = model(nxt[:, None], mask, n_loops=n_loops, cache=cache).logits[:, -1]
        else:
            ids = torch.cat([ids, nxt[:, None]], dim=1)
            logits = model(ids, mask, n_loops=n_loops, halting=halting).logits[:, -1]
    result = []
    for row in out.tolist():
        result.append(row[: row.index(eos_id) + 1] if eos_id in row else row)
    return result
