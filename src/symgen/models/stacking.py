"""Several seeds of one model as one stacked model, and each seed's model as a view of it.

`stack` builds a model whose every parameter gains a leading seed dimension; its layers
(`symgen.models.stackable`) then run all seeds in one forward pass over seed-major groups of rows.
`share_seed` turns an ordinary model's parameters into views of one seed of the stacked model, so
that seed is still evaluated, checkpointed and intervened on as any single model.
"""

from __future__ import annotations

import copy

import torch
from torch import nn

from symgen.models.transformer import Transformer


def stack(models: list[Transformer]) -> Transformer:
    """One model holding the parameters of every model (same config) with a leading seed
    dimension: its batch is len(models) seed-major groups of rows (`symgen.models.stackable`)."""
    stacked = Transformer(copy.deepcopy(models[0].cfg)).to(models[0].embed.weight.device)
    for name, _ in list(stacked.named_parameters()):
        owner, _, leaf = name.rpartition(".")
        values = torch.stack([m.get_parameter(name).detach() for m in models])
        setattr(stacked.get_submodule(owner), leaf, nn.Parameter(values))
    stacked.same_symbol_tokens.copy_(models[0].same_symbol_tokens)
    return stacked


@torch.no_grad()
def share_seed(model: Transformer, stacked: Transformer, seed_index: int) -> None:
    """Make `model`'s parameters views of one seed of a stacked model: updates of either are
    updates of both, so the seed can be evaluated, checkpointed and intervened on as any model."""
    for name, p in model.named_parameters():
        p.data = stacked.get_parameter(name).data[seed_index]
    if model.cfg.identity_bias_fade:  # one schedule for every seed: each seed's hook sets the same value
        model.same_symbol_weight = stacked.same_symbol_weight
