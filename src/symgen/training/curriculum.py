"""The depth curriculum (paper B, §6) as a trainer hook.

Training starts with atomic facts and 2-hop chains. After every evaluation, when the held-out
accuracy on the current deepest hop count k (``eval/hop_k/accuracy``) reaches the threshold,
(k + 1)-hop chains join the training data (earlier hops stay). The largest k that passed is the
model's *learnable depth*; it goes to summary.json. Optionally AdamW is rebuilt at every new stage
and its warm-up restarts, as in the authors' code. With `patience`, the run ends once that many
evaluations pass without a stage passing (the authors train until the curriculum stalls); it also
ends when the deepest hop count has passed.

The stage is the task state that decides the batches; it is checkpointed through
:meth:`state_dict`, so a resumed run sees exactly the batches an uninterrupted one would.
"""

from __future__ import annotations

from typing import Any

from symgen.tasks.base import CurriculumSettings, Task
from symgen.training.hooks import Hook, TrainerView
from symgen.training.optim import build_optimizer


class DepthCurriculum(Hook):
    name = "curriculum"

    def __init__(self, task: Task, settings: CurriculumSettings) -> None:
        self.task, self.threshold, self.metric = task, settings.threshold, settings.metric
        self.reset_optimizer, self.patience = settings.reset_optimizer, settings.patience
        self.evals_in_stage = 0  # evaluations since the current stage began
        self.max_hops = settings.max_hops
        self.stage = settings.start  # deepest hop count in training
        self.learnable_depth = 0  # largest k whose held-out accuracy passed the threshold
        self.stage_started = 0  # step at which the current stage (and its warm-up) began
        self.history: list[dict[str, Any]] = []  # one entry per passed stage
        self.task.set_train_hops(self.stage)

    def on_start(self, trainer: TrainerView) -> None:
        self.task.set_train_hops(self.stage)

    def lr_factor(self, trainer: TrainerView, step: int) -> float:
        warmup = trainer.cfg.train.warmup_steps
        if not self.reset_optimizer or self.stage_started == 0 or warmup == 0:
            return 1.0
        return min(1.0, (step - self.stage_started + 1) / warmup)

    def on_eval(self, trainer: TrainerView, step: int, metrics: dict[str, float]) -> None:
        accuracy = metrics.get(self.metric.format(k=self.stage))
        self.evals_in_stage += 1
        if accuracy is not None and accuracy >= self.threshold:
            self.evals_in_stage = 0
            self.learnable_depth = max(self.learnable_depth, self.stage)
            self.history.append({"hops": self.stage, "step": step, "accuracy": accuracy})
            if self.stage < self.max_hops:
                self.stage += 1
                self.task.set_train_hops(self.stage)
                self.stage_started = step
                if self.reset_optimizer:
                    trainer.optimizer = build_optimizer(trainer.model, trainer.cfg.train)
        metrics["eval/curriculum/stage"] = float(self.stage)
        metrics["eval/curriculum/learnable_depth"] = float(self.learnable_depth)

    def stop_reason(self, trainer: TrainerView) -> str | None:
        if self.learnable_depth >= self.max_hops:
            return "curriculum complete"
        if self.patience and self.evals_in_stage >= self.patience:
            return f"curriculum stalled ({self.patience} evaluations without a stage passed)"
        return None

    def summary(self) -> dict[str, Any]:
        return {
            "learnable_depth": self.learnable_depth,
            "curriculum_stage": self.stage,
            "curriculum_history": self.history,
        }

    def state_dict(self) -> dict[str, Any]:
        return {
            "stage": self.stage,
            "learnable_depth": self.learnable_depth,
            "stage_started": self.stage_started,
            "evals_in_stage": self.evals_in_stage,
            "history": self.history,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if not state:
            return
        self.stage, self.learnable_depth = state["stage"], state["learnable_depth"]
        self.stage_started, self.history = state["stage_started"], list(state["history"])
        self.evals_in_stage = state.get("evals_in_stage", 0)
        self.task.set_train_hops(self.stage)


def curriculum_hooks(task: Task) -> list[Hook]:
    """The curriculum hook the task asks for, if any (it goes before every other hook)."""
    settings = task.curriculum()
    return [] if settings is None else [DepthCurriculum(task, settings)]
