"""A supervised matching head: the training term that teaches one head to attend from each symbol to
its earlier copies (`train.match_loss`).

Paper A's copy arms never form such a head at quick scale, and without it a Horn proof cannot tell
which rule fires (docs/results/unseen-recipe). The term changes the training signal only: the model
keeps the recipe's architecture, and after `train.match_loss_until` it trains on the task alone.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch
from torch import Tensor, nn

from symgen.config.train import TrainConfig
from symgen.models.attention import recorded_attention
from symgen.tasks.base import Task
from symgen.tasks.horn_matching import repeated_positions, symbol_mask


def match_weight_at(cfg: TrainConfig, step: int) -> float:
    """The term's weight at `step`: `match_loss` until `match_loss_until` (0: always), then 0."""
    if cfg.match_loss <= 0 or (cfg.match_loss_until and step >= cfg.match_loss_until):
        return 0.0
    return cfg.match_loss


def task_symbols(cfg: TrainConfig, task: Task) -> Tensor | None:
    """The task's symbol mask when the term is on (None otherwise: nothing to build)."""
    return symbol_mask(task.vocab_size, task.seen_ids() + task.unseen_ids()) if cfg.match_loss > 0 else None


@contextlib.contextmanager
def attention_for_term(model: nn.Module, weight: float) -> Iterator[list[list[Tensor]] | None]:
    """The attention weights of the forward pass inside, kept in the graph, when the term is on."""
    if not weight:
        yield None
        return
    with recorded_attention(model, detach=False) as recorded:
        yield recorded


def matching_loss(probs: Tensor, ids: Tensor, symbols: Tensor) -> Tensor:
    """−log of head 0's attention share on the earlier copies of each position's symbol, averaged
    over the positions whose symbol occurred before. `probs`: (B, H, T, T) attention weights of one
    block; `ids`: (B, T) tokens; `symbols`: (V,) bool. 0 when no symbol repeats."""
    pairs = repeated_positions(ids.cpu(), [ids.shape[1]] * ids.shape[0], symbols.cpu()).to(probs.device)
    asking = pairs.any(-1)
    if not asking.any():
        return probs.sum() * 0.0
    share = (probs[:, 0] * pairs).sum(-1)[asking]
    return -torch.log(share.clamp_min(1e-6)).mean()


def matching_term(
    recorded: list[list[Tensor]], blocks: list[int], ids: Tensor, symbols: Tensor, rows: slice = slice(None)
) -> Tensor:
    """`matching_loss` of the batch rows `rows`, averaged over the taught blocks (first iteration)."""
    terms = [matching_loss(recorded[b][0][rows].float(), ids[rows], symbols) for b in blocks]
    return sum(terms) / len(blocks)
