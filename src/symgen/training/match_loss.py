"""A supervised matching head: the training term that teaches one head to attend from each symbol to
its earlier copies (`train.match_loss`).

Paper A's copy arms never form such a head at quick scale, and without it a Horn proof cannot tell
which rule fires (docs/results/unseen-recipe). The term changes the training signal only: the model
keeps the recipe's architecture, and after `train.match_loss_until` it trains on the task alone.
"""

from __future__ import annotations

import torch
from torch import Tensor

from symgen.config.train import TrainConfig
from symgen.tasks.horn_matching import repeated_positions


def match_weight_at(cfg: TrainConfig, step: int) -> float:
    """The term's weight at `step`: `match_loss` until `match_loss_until` (0: always), then 0."""
    if cfg.match_loss <= 0 or (cfg.match_loss_until and step >= cfg.match_loss_until):
        return 0.0
    return cfg.match_loss


def symbol_mask(vocab_size: int, symbol_ids: list[int]) -> Tensor:
    """(V,) bool: the task's symbol tokens, the ones whose copies the head is taught to find."""
    mask = torch.zeros(vocab_size, dtype=torch.bool)
    mask[torch.as_tensor(symbol_ids, dtype=torch.long)] = True
    return mask


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
