"""A Hugging Face causal language model behind symgen's model interface, so that the one trainer
fine-tunes it: `forward(ids, n_loops=...)` returns an object with `.logits`, and `param_groups()`
sorts the parameters into the optimizer's roles (embed, unembed, norm, rest) as
`Transformer.param_groups` does, so embedding weight decay and the other settings mean the same."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn


class HFCausalLM(nn.Module):
    def __init__(self, hf_model: nn.Module) -> None:
        super().__init__()
        self.hf = hf_model

    @property
    def embed(self) -> nn.Embedding:
        return self.hf.get_input_embeddings()

    @property
    def tied(self) -> bool:
        head = self.hf.get_output_embeddings()
        return head is None or head.weight is self.embed.weight

    def forward(self, ids: torch.Tensor, n_loops: int | None = None, **_: Any) -> Any:
        # right padding only: causal attention never lets a real token see the pads after it
        return self.hf(input_ids=ids, use_cache=False)

    def param_groups(self) -> dict[str, list[nn.Parameter]]:
        embed = self.embed.weight
        head = None if self.tied else self.hf.get_output_embeddings().weight
        groups: dict[str, list[nn.Parameter]] = {
            "embed": [embed],
            "unembed": [head] if head is not None else [],
        }
        groups |= {"norm": [], "rest": []}
        for p in self.hf.parameters():  # parameters() lists a tied tensor once
            if p is embed or p is head:
                continue
            groups["norm" if p.dim() < 2 else "rest"].append(p)  # norms and biases, as Transformer
        return groups
