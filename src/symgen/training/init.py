"""The weights a run starts from: its seeded initialization, or another run's final weights
(`train.init_from`), with the task's unseen rows optionally re-initialized (`train.init_repair`,
the repair `symgen tokens repair` applies to pretrained checkpoints)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from symgen.config import ExperimentConfig
from symgen.errors import UserError
from symgen.measures.rows import new_rows
from symgen.models.transformer import Transformer
from symgen.tasks.base import Task
from symgen.training.checkpoint import load_weights
from symgen.training.run_dir import seed_dir, seed_listing


def source_run(init_from: Path, seed: int) -> Path:
    """The run a run starts from: `init_from` itself, or, where it holds several stacked seeds
    (`--seeds`: seeds.json and one folder per seed), the same seed's run, so that each seed of a
    fine-tune starts from its own seed's pretraining."""
    if seed_listing(init_from).exists() and not (init_from / "final.safetensors").exists():
        return seed_dir(init_from, seed)
    return init_from


@torch.no_grad()
def initialize(model: Transformer, cfg: ExperimentConfig, task: Task) -> None:
    t = cfg.train
    if t.init_from:
        source = source_run(Path(t.init_from), cfg.seed)
        if not (source / "final.safetensors").exists():
            raise UserError(
                f"train.init_from={t.init_from}: no finished run at {source} (no final.safetensors)"
            )
        load_weights(model, source)
        model.train()
    if t.init_repair:
        if not task.unseen_ids():
            raise UserError("train.init_repair needs a task with unseen (reserved) symbols")
        unseen = np.asarray(task.unseen_ids())
        seen = (
            np.asarray(task.seen_ids())
            if task.seen_ids()
            else np.setdiff1d(np.arange(model.cfg.vocab_size), unseen)
        )
        rng = np.random.default_rng([cfg.seed, 41])
        matrices = [model.embed.weight] + ([model.unembed.weight] if model.unembed is not None else [])
        for weight in matrices:
            ordinary = weight[torch.from_numpy(seen)].double().cpu().numpy()
            fresh = new_rows(ordinary, len(unseen), t.init_repair, rng)
            weight[torch.from_numpy(unseen)] = torch.from_numpy(fresh).to(weight.dtype).to(weight.device)
