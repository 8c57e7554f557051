"""AdamW with one parameter group per role, and the learning-rate schedule."""

from __future__ import annotations

import math

import torch

from symgen.config.train import TrainConfig
from symgen.models.transformer import Transformer


def group_weight_decay(cfg: TrainConfig) -> dict[str, float]:
    embed = cfg.weight_decay if cfg.embed_weight_decay is None else cfg.embed_weight_decay
    unembed = cfg.weight_decay if cfg.unembed_weight_decay is None else cfg.unembed_weight_decay
    return {"embed": embed, "unembed": unembed, "norm": cfg.norm_weight_decay, "rest": cfg.weight_decay}


def build_optimizer(model: Transformer, cfg: TrainConfig) -> torch.optim.AdamW:
    decay = group_weight_decay(cfg)
    scale = {"embed": cfg.embed_lr_ratio, "unembed": cfg.embed_lr_ratio}
    groups = [
        {
            "params": [p for p in params if p.requires_grad],
            "weight_decay": decay[role],
            "role": role,
            "lr_scale": scale.get(role, 1.0),
        }
        for role, params in model.param_groups().items()
    ]
    groups = [g for g in groups if g["params"]]
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=tuple(cfg.betas), eps=cfg.eps)


def lr_at(step: int, cfg: TrainConfig) -> float:
    """Linear warm-up to cfg.lr, then constant (optionally falling linearly to min_lr_ratio × lr over
    the last decay_steps) or cosine down to min_lr_ratio × lr."""
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    if cfg.schedule == "constant":
        left = cfg.steps - step  # steps still to take, this one included
        span = min(cfg.decay_steps, cfg.steps - cfg.warmup_steps)
        if left > span:
            return cfg.lr
        floor = cfg.min_lr_ratio * cfg.lr
        return floor + (cfg.lr - floor) * left / span
    span = max(1, cfg.steps - cfg.warmup_steps)
    progress = min(1.0, (step - cfg.warmup_steps) / span)
    floor = cfg.min_lr_ratio * cfg.lr
    return floor + (cfg.lr - floor) * 0.5 * (1 + math.cos(math.pi * progress))
