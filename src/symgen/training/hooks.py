"""Hook points of the training loop. Interventions (freeze, active forgetting), curricula and
diagnostics are small objects that override the calls they need; adding one touches one file."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from symgen.training.trainer import Trainer


class Hook:
    name = "hook"

    def on_start(self, trainer: Trainer) -> None:
        """After model, optimizer and any checkpoint are loaded, before the first step."""

    def after_backward(self, trainer: Trainer, step: int) -> None:
        """Gradients are ready, the optimizer has not stepped yet."""

    def on_step_end(self, trainer: Trainer, step: int) -> None:
        """After the optimizer step of `step` (0-based)."""

    def lr_factor(self, trainer: Trainer, step: int) -> float:
        """Multiplies the scheduled learning rate of `step` (a curriculum restarting its warm-up)."""
        return 1.0

    def on_eval(self, trainer: Trainer, step: int, metrics: dict[str, float]) -> None:
        """After an evaluation; may add entries to `metrics` or change the task (curricula)."""

    def stop_reason(self, trainer: Trainer) -> str | None:
        """Checked after every evaluation: a reason to end the run now (a stalled curriculum)."""
        return None

    def summary(self) -> dict[str, Any]:
        """Entries this hook adds to the run's summary.json (a curriculum's learnable depth, say)."""
        return {}

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        pass
