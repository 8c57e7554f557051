"""Training speed of symgen's trainer against a plain PyTorch reference of the same size.

The reference is `torch.nn.TransformerEncoder` (pre-LN, causal mask, GELU) with an embedding and a
tied head, stepped with AdamW in a bare loop: what plain eager PyTorch reaches on this machine.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from symgen.config import ExperimentConfig
from symgen.models.transformer import ModelConfig, Transformer
from symgen.tasks.base import Batch, Task, step_rng
from symgen.training.config import TrainConfig
from symgen.training.distributed import resolve_device
from symgen.training.trainer import Trainer


@dataclass
class RandomTokensTask(Task):
    """Next-token prediction on uniform random tokens: a fixed workload for timing."""

    vocab_size_: int
    seq_len: int

    def __post_init__(self) -> None:
        self.vocab = [f"t{i}" for i in range(self.vocab_size_)]

    @property
    def max_seq_len(self) -> int:
        return self.seq_len

    def train_batch(self, step: int, batch_size: int) -> Batch:
        seq = torch.from_numpy(
            step_rng(0, step).integers(0, self.vocab_size_, (batch_size, self.seq_len + 1))
        )
        return Batch(seq[:, :-1], seq[:, 1:])

    def evaluate(self, model: Transformer, device: torch.device) -> dict[str, float]:
        return {}


def _reference_model(cfg: ModelConfig) -> nn.Module:
    class Reference(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
            self.pos = nn.Embedding(cfg.max_seq_len, cfg.d_model)
            layer = nn.TransformerEncoderLayer(
                cfg.d_model,
                cfg.n_heads,
                4 * cfg.d_model,
                dropout=0.0,
                activation="gelu",
                batch_first=True,
                norm_first=True,
            )
            self.blocks = nn.TransformerEncoder(layer, cfg.n_layers, enable_nested_tensor=False)
            self.ln = nn.LayerNorm(cfg.d_model)

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            T = ids.shape[1]
            x = self.embed(ids) + self.pos(torch.arange(T, device=ids.device))
            mask = nn.Transformer.generate_square_subsequent_mask(T, device=ids.device)
            return self.ln(self.blocks(x, mask=mask, is_causal=True)) @ self.embed.weight.T

    return Reference()


def _time(step_fn, steps: int, warmup: int) -> float:
    for i in range(warmup):
        step_fn(i)
    start = time.perf_counter()
    for i in range(steps):
        step_fn(warmup + i)
    return steps / (time.perf_counter() - start)


def benchmark(
    d_model: int = 128,
    n_layers: int = 4,
    n_heads: int = 4,
    batch_size: int = 64,
    seq_len: int = 64,
    vocab: int = 256,
    steps: int = 30,
    warmup: int = 5,
    device: str = "auto",
) -> dict[str, float]:
    dev = resolve_device(device)
    model_cfg = ModelConfig(
        vocab_size=vocab, d_model=d_model, n_heads=n_heads, n_layers=n_layers, max_seq_len=seq_len
    )
    task = RandomTokensTask(vocab, seq_len)
    cfg = ExperimentConfig(name="bench", task=None, model=model_cfg, train=TrainConfig(batch_size=batch_size))
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as scratch:
        trainer = Trainer(cfg, task, Transformer(model_cfg).to(dev), Path(scratch), dev, progress=False)
        symgen_rate = _time(trainer.train_step, steps, warmup)

    reference = _reference_model(model_cfg).to(dev)
    optimizer = torch.optim.AdamW(reference.parameters(), lr=1e-3)

    def reference_step(step: int) -> None:
        batch = task.train_batch(step, batch_size).to(dev)
        loss = F.cross_entropy(reference(batch.inputs).flatten(0, 1), batch.targets.flatten())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(reference.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    reference_rate = _time(reference_step, steps, warmup)
    tokens = batch_size * seq_len
    return {
        "symgen_steps_per_s": round(symgen_rate, 2),
        "reference_steps_per_s": round(reference_rate, 2),
        "symgen_tokens_per_s": round(symgen_rate * tokens),
        "reference_tokens_per_s": round(reference_rate * tokens),
        "threads": torch.get_num_threads(),
        "device": str(dev),
        "parameters": trainer.model.num_parameters(),
    }
