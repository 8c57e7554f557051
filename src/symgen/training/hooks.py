"""Hook points of the training loop. Interventions (freeze, active forgetting), curricula and
diagnostics are small objects that override the calls they need; adding one touches one file."""

from __future__ import annotations

import contextlib
from typing import Any, Protocol

import torch

from symgen.config import ExperimentConfig
from symgen.models.transformer import Transformer
from symgen.tasks.base import Task
from symgen.training.distributed import Dist


class TrainerView(Protocol):
    """What a hook may read and change of the trainer that calls it (`symgen.training.trainer`)."""

    cfg: ExperimentConfig
    task: Task
    model: Transformer
    optimizer: torch.optim.Optimizer
    device: torch.device
    dist: Dist  # rank 0 measures, every rank sees the same metrics
    step: int  # steps completed
    eval_full: bool  # whether the evaluation being taken is a full one (train.light_evals)

    def autocast(self) -> contextlib.AbstractContextManager: ...


class Hook:
    name = "hook"

    def on_start(self, trainer: TrainerView) -> None:
        """After model, optimizer and any checkpoint are loaded, before the first step."""

    def after_backward(self, trainer: TrainerView, step: int) -> None:
        """Gradients are ready, the optimizer has not stepped yet."""

    def on_step_end(self, trainer: TrainerView, step: int) -> None:
        """After the optimizer step of `step` (0-based)."""

    def lr_factor(self, trainer: TrainerView, step: int) -> float:
        """Multiplies the scheduled learning rate of `step` (a curriculum restarting its warm-up)."""
        return 1.0

    def on_eval(self, trainer: TrainerView, step: int, metrics: dict[str, float]) -> None:
        """After an evaluation; may add entries to `metrics` or change the task (curricula)."""

    def stop_reason(self, trainer: TrainerView) -> str | None:
        """Checked after every evaluation: a reason to end the run now (a stalled curriculum)."""
        return None

    def summary(self) -> dict[str, Any]:
        """Entries this hook adds to the run's summary.json (a curriculum's learnable depth, say)."""
        return {}

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        pass
