"""Training speed at the sizes the recipes run, against two references, and of stacked seeds.

For each size (a recipe's own task and model) the same pre-drawn batches are stepped by:

- `symgen`: the trainer's own step (`Trainer.train_step`: select readout, clipping, AdamW groups);
- `gpt2-loop`: the paper-B authors' style of model — Hugging Face `GPT2Block`s looped R times,
  learned positions where the recipe has positions, a tied head, full logits, AdamW, clipping
  (needs `transformers`, the `models` extra; left out without it);
- `plain`: `torch.nn.TransformerEncoderLayer` (pre-LN, GELU, causal) looped R times, the same head.

Rounds are interleaved (each round times every side once), so a machine that slows down during the
benchmark slows every side alike; results are the median steps/s over rounds with min and max.
Stacked training (`--stack 1,4,16`) times one step of S seeds as one model and reports per-seed
throughput against one single-seed step.
"""

from __future__ import annotations

import copy
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from symgen.config import ExperimentConfig, resolve
from symgen.errors import UserError
from symgen.models.transformer import ModelConfig
from symgen.tasks.base import IGNORE, Batch, Task
from symgen.tasks.registry import make_task
from symgen.training.build import build_model
from symgen.training.distributed import resolve_device
from symgen.training.stacked import StackedTrainer
from symgen.training.trainer import Trainer


@dataclass
class BenchSize:
    recipe: str
    overrides: tuple[str, ...] = ()
    stacked: bool = True  # time stacked seeds at this size


SIZES: dict[str, BenchSize] = {
    "horn-quick": BenchSize("horn-standard"),
    "kg-quick": BenchSize("kg-depth-curriculum", ("model.n_loops=4",)),
    # R = 8 on chains of 2-5 hops, the curriculum stage its equal-compute quick runs end in: wider batches
    "kg-deep": BenchSize(
        "kg-depth-curriculum", ("model.n_loops=8", "task.curriculum=false", "task.train_hops=5")
    ),
    "d256": BenchSize("horn-standard", ("model.d_model=256", "model.n_heads=8"), stacked=False),
}


class ReplayTask(Task):
    """A task's pre-drawn batches, replayed in a cycle, so every side steps the same data and data
    generation is not timed."""

    def __init__(self, task: Task, batches: list[Batch]) -> None:
        self.inner, self.batches, self.vocab = task, batches, task.vocab

    @property
    def max_seq_len(self) -> int:
        return self.inner.max_seq_len

    @property
    def width(self) -> int:
        """The widest replayed batch (a curriculum's later stages draw longer chains)."""
        return max(b.inputs.shape[1] for b in self.batches)

    def train_batch(self, step: int, batch_size: int) -> Batch:
        return self.batches[step % len(self.batches)]

    def evaluate(self, model: nn.Module, device: torch.device, full: bool = True) -> dict[str, float]:
        return {}


class LoopedReference(nn.Module):
    """Embedding (+ learned positions) → blocks looped R times → LayerNorm → tied head."""

    def __init__(self, cfg: ModelConfig, blocks: nn.ModuleList, call: Callable) -> None:
        super().__init__()
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.pos = nn.Embedding(cfg.max_seq_len, cfg.d_model) if cfg.positions != "none" else None
        self.blocks, self.call, self.n_loops = blocks, call, cfg.n_loops
        self.ln = nn.LayerNorm(cfg.d_model)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids)
        if self.pos is not None:
            x = x + self.pos(torch.arange(ids.shape[1], device=ids.device))
        for _ in range(self.n_loops):
            for block in self.blocks:
                x = self.call(block, x)
        return self.ln(x) @ self.embed.weight.T


def gpt2_reference(cfg: ModelConfig) -> nn.Module | None:
    try:
        from transformers import GPT2Config
        from transformers.models.gpt2.modeling_gpt2 import GPT2Block
    except ImportError:
        return None
    config = GPT2Config(
        n_embd=cfg.d_model,
        n_head=cfg.n_heads,
        n_inner=4 * cfg.d_model,
        n_positions=cfg.max_seq_len,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
    )
    config._attn_implementation = "sdpa"
    blocks = nn.ModuleList(GPT2Block(config, layer_idx=i) for i in range(cfg.n_layers))

    def call(block: nn.Module, x: torch.Tensor) -> torch.Tensor:
        out = block(x)
        return out[0] if isinstance(out, tuple) else out

    return LoopedReference(cfg, blocks, call)


def plain_reference(cfg: ModelConfig) -> nn.Module:
    def layer() -> nn.Module:
        return nn.TransformerEncoderLayer(
            cfg.d_model, cfg.n_heads, 4 * cfg.d_model, dropout=0.0, activation="gelu",
            batch_first=True, norm_first=True,
        )  # fmt: skip

    blocks = nn.ModuleList(layer() for _ in range(cfg.n_layers))

    def call(block: nn.Module, x: torch.Tensor) -> torch.Tensor:
        mask = nn.Transformer.generate_square_subsequent_mask(x.shape[1], device=x.device)
        return block(x, src_mask=mask, is_causal=True)

    return LoopedReference(cfg, blocks, call)


def reference_step(model: nn.Module, task: ReplayTask, batch_size: int, device: torch.device) -> Callable:
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1)

    def step(i: int) -> None:
        batch = task.train_batch(i, batch_size).to(device)
        logits = model(batch.inputs)
        loss = F.cross_entropy(logits.flatten(0, 1), batch.targets.flatten(), ignore_index=IGNORE)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return step


def interleaved(sides: dict[str, Callable[[int], None]], rounds: int, steps: int) -> dict[str, dict]:
    """Steps/s of every side: `rounds` rounds, each timing `steps` steps of every side in turn
    (after one untimed warm-up step each)."""
    for fn in sides.values():
        fn(0)
    rates: dict[str, list[float]] = {name: [] for name in sides}
    for r in range(rounds):
        for name, fn in sides.items():
            start = time.perf_counter()
            for i in range(steps):
                fn(1 + r * steps + i)
            rates[name].append(steps / (time.perf_counter() - start))
    return {
        name: {"median": round(statistics.median(v), 3), "min": round(min(v), 3), "max": round(max(v), 3)}
        for name, v in rates.items()
    }


def size_setup(size: BenchSize, n_batches: int) -> tuple[ExperimentConfig, ReplayTask]:
    cfg = resolve(size.recipe, [*size.overrides, "train.threads=1"])
    task = make_task(cfg.task, cfg.seed)
    build_model(cfg, task)  # fills the sizes the task decides
    batches = [task.train_batch(i, cfg.train.batch_size) for i in range(n_batches)]
    return cfg, ReplayTask(task, batches)


def trainer_for(cfg: ExperimentConfig, task: ReplayTask, device: torch.device, seed: int, scratch: Path):
    cfg = copy.deepcopy(cfg)
    cfg.seed = seed
    torch.manual_seed(seed)
    model = build_model(cfg, task).to(device)
    return Trainer(cfg, task, model, scratch / f"seed-{seed}", device, progress=False, hooks=[])


def bench_size(name: str, rounds: int, steps: int, stack: list[int], device: torch.device) -> dict[str, Any]:
    size = SIZES[name]
    cfg, task = size_setup(size, n_batches=8)
    with tempfile.TemporaryDirectory() as scratch:
        symgen = trainer_for(cfg, task, device, 0, Path(scratch))
        sides: dict[str, Callable[[int], None]] = {"symgen": symgen.train_step}
        gpt2 = gpt2_reference(cfg.model)
        if gpt2 is not None:
            sides["gpt2-loop"] = reference_step(gpt2.to(device), task, cfg.train.batch_size, device)
        plain = plain_reference(cfg.model).to(device)
        sides["plain"] = reference_step(plain, task, cfg.train.batch_size, device)
        result: dict[str, Any] = {
            "recipe": " ".join([size.recipe, *size.overrides]),
            "d_model": cfg.model.d_model,
            "layers": cfg.model.n_layers,
            "loops": cfg.model.n_loops,
            "batch": cfg.train.batch_size,
            "width": task.width,
            "parameters": symgen.model.num_parameters(),
            "steps_per_s": interleaved(sides, rounds, steps),
        }
        rates = result["steps_per_s"]
        for ref in ("gpt2-loop", "plain"):
            if ref in rates:
                result[f"symgen_vs_{ref}"] = round(rates["symgen"]["median"] / rates[ref]["median"], 3)
        if size.stacked and stack:
            result["stacked"] = bench_stacked(cfg, task, device, rounds, steps, stack, Path(scratch))
            one = rates["symgen"]["median"]
            for entry in result["stacked"].values():
                entry["per_seed_speedup"] = round(entry["per_seed_steps_per_s"] / one, 3)
    return result


def bench_stacked(
    cfg: ExperimentConfig, task: ReplayTask, device: torch.device, rounds: int, steps: int,
    stack: list[int], scratch: Path,
) -> dict[str, dict]:  # fmt: skip
    sides = {}
    for n in stack:
        lanes = [trainer_for(cfg, task, device, seed, scratch / f"stack-{n}") for seed in range(n)]
        stacked = StackedTrainer(lanes, progress=False)
        sides[str(n)] = lambda i, stacked=stacked: stacked.train_step()
    rates = interleaved(sides, rounds, steps)
    return {
        n: {"steps_per_s": r["median"], "per_seed_steps_per_s": round(int(n) * r["median"], 3)}
        for n, r in rates.items()
    }


def benchmark(
    sizes: list[str], rounds: int = 5, steps: int = 4, stack: list[int] | None = None, device: str = "cpu"
) -> dict[str, Any]:
    unknown = [s for s in sizes if s not in SIZES]
    if unknown:
        raise UserError(f"bench size {unknown[0]!r}: known sizes are {', '.join(SIZES)}")
    if rounds < 1 or steps < 1:
        raise UserError("--rounds and --steps must be >= 1")
    dev = resolve_device(device)
    return {
        "threads": torch.get_num_threads(),
        "device": str(dev),
        "rounds": rounds,
        "steps_per_round": steps,
        "sizes": {name: bench_size(name, rounds, steps, stack or [], dev) for name in sizes},
    }
