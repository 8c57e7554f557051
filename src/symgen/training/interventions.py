"""(Un)embedding interventions and diagnostics as trainer hooks (SPEC A3, A4).

The rows an intervention touches are set by `train.intervention_rows`: ``all`` (every row of the
embedding, and of the unembedding when it is untied — the paper's setting), ``symbols`` (the rows of
every seen and unseen symbol: syntax and label rows keep training, so the model can learn what
kind of token each position holds while every symbol stays a random vector) or ``unseen`` (only the
rows of the task's never-seen tokens, `task.unseen_ids()`).

- **Freeze** (`train.freeze_embeddings`): the rows keep their initial values. Their gradients are
  zeroed after backward (so they neither move nor count in gradient clipping), and since AdamW's
  decoupled weight decay would still shrink them, the rows are copied back after every optimizer
  step. The copy is taken in `on_start`, after a checkpoint is loaded, so a resumed run restores
  the same values.
- **Active forgetting** (`train.forget_every = K`): after the update of every step whose 0-based
  index is a positive multiple of K, the rows are re-drawn from the initial distribution
  (`model.init_rows_`, a generator seeded by (seed, step)) and their AdamW moments `exp_avg` and
  `exp_avg_sq` are set to zero. The per-parameter `step` count (AdamW's bias correction) is reset
  to 0 when every row of the parameter is re-drawn, as in Chen et al. (2023); when only some rows
  are (`intervention_rows=unseen`) it is kept, since the count is shared with rows that were not
  reset: their zeroed moments then restart without bias correction, so their first updates are
  ~0.1/sqrt(0.02) ≈ 0.7 lr per coordinate instead of ~1 lr. Resetting after step n·K (and never
  after the last step) means an evaluation at n·K completed steps sees the rows trained since the
  previous reset, never rows drawn an instant before.
- **Temporary active forgetting** (`train.forget_until = N`): the same, only for steps <= N.
- **Ending on a reset** (`train.forget_last`): the rows are also re-drawn after the last step, so
  the final evaluation sees every intervention row as a reset leaves it — the seen symbols' rows as
  much as the unseen ones', no knowledge of which is which. A run stopped early by a hook or a
  compute budget does not end on one.

Diagnostics, when the task has unseen symbols (`unseen_ids()`):

- `CollapseHook` adds `collapse/*` metrics (`symgen.measures.collapse`) at every evaluation;
- `RedrawnEvalHook` (`train.eval_redrawn`) also evaluates a copy of the model whose unseen rows
  are re-drawn from the initial distribution, as a reset would leave them (metrics `redrawn/*`):
  the second view of the evaluation protocol for active forgetting.
"""

from __future__ import annotations

import copy
from typing import Any

import torch
from torch import Tensor, nn

from symgen.config import ExperimentConfig
from symgen.errors import UserError
from symgen.measures.collapse import collapse_stats
from symgen.models.transformer import Transformer
from symgen.tasks.base import Task
from symgen.training.hooks import Hook, TrainerView


def row_parameters(model: Transformer) -> list[nn.Parameter]:
    """The (un)embedding matrices: the embedding, and the unembedding when it is untied."""
    params = [model.embed.weight]
    if model.unembed is not None:
        params.append(model.unembed.weight)
    return params


def select_rows(rows: str, task: Task) -> list[int] | None:
    """Row ids for `train.intervention_rows` (None: every row)."""
    if rows == "all":
        return None
    if not task.unseen_ids():
        raise UserError(f"train.intervention_rows={rows} needs a task with unseen symbols (e.g. horn)")
    if rows == "symbols":
        return sorted(set(task.seen_ids()) | set(task.unseen_ids()))
    return list(task.unseen_ids())


def _index(rows: list[int] | None, device: torch.device) -> Tensor | None:
    return None if rows is None else torch.as_tensor(rows, dtype=torch.long, device=device)


class FreezeHook(Hook):
    """Keep (un)embedding rows at their values when training starts (their initialization)."""

    name = "freeze"

    def __init__(self, rows: list[int] | None) -> None:
        self.rows = rows
        self.saved: list[Tensor] = []

    def on_start(self, trainer: TrainerView) -> None:
        params = row_parameters(trainer.model)
        idx = [_index(self.rows, p.device) for p in params]
        self.saved = [
            (p.detach() if i is None else p.detach()[i]).clone() for p, i in zip(params, idx, strict=True)
        ]

    def after_backward(self, trainer: TrainerView, step: int) -> None:
        for p in row_parameters(trainer.model):
            if p.grad is None:
                continue
            if self.rows is None:
                p.grad.zero_()
            else:
                p.grad[_index(self.rows, p.device)] = 0

    @torch.no_grad()
    def on_step_end(self, trainer: TrainerView, step: int) -> None:
        for p, saved in zip(row_parameters(trainer.model), self.saved, strict=True):
            if self.rows is None:
                p.copy_(saved)
            else:
                p[_index(self.rows, p.device)] = saved


class SameSymbolFadeHook(Hook):
    """The same-symbol term as a scaffold (`model.identity_bias_fade`): before every step, set the
    term's weight for that step, so that after the fade the model trains and is evaluated without it.
    β stays at its initial value (its gradient is dropped): a learned β would grow to make up for the
    fading weight, and the model would lean on the term until the step it vanished."""

    name = "same_symbol_fade"

    def after_backward(self, trainer: TrainerView, step: int) -> None:
        for block in trainer.model.blocks:
            if block.attn.same_symbol is not None:
                block.attn.same_symbol.grad = None

    def on_start(self, trainer: TrainerView) -> None:
        self._set(trainer, trainer.step)

    def on_step_end(self, trainer: TrainerView, step: int) -> None:
        self._set(trainer, step + 1)

    @staticmethod
    def _set(trainer: TrainerView, step: int) -> None:
        with torch.no_grad():
            trainer.model.same_symbol_weight.fill_(trainer.model.cfg.same_symbol_weight_at(step))


class ForgetHook(Hook):
    """Active forgetting: re-draw rows every `every` steps (until step `until`, 0: always) and
    reset their AdamW moments."""

    name = "forget"

    def __init__(self, rows: list[int] | None, every: int, until: int, seed: int, last: bool = False) -> None:
        self.rows, self.every, self.until, self.seed, self.last = rows, every, until, seed, last
        self.resets: list[int] = []  # 0-based steps after whose update a reset happened

    def due(self, step: int, total_steps: int) -> bool:
        if self.last and step == total_steps - 1:
            return True
        if step <= 0 or step % self.every or step >= total_steps - 1:
            return False
        return self.until <= 0 or step <= self.until

    def on_step_end(self, trainer: TrainerView, step: int) -> None:
        if self.due(step, trainer.cfg.train.steps):
            reset_rows(trainer.model, trainer.optimizer, self.rows, self.seed, step)
            self.resets.append(step)

    def summary(self) -> dict[str, Any]:
        return {
            "forget_resets": len(self.resets),
            "forget_last_reset": self.resets[-1] if self.resets else None,
        }

    def state_dict(self) -> dict[str, Any]:
        return {"resets": list(self.resets)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.resets = list(state.get("resets", []))


def reset_generator(seed: int, step: int, device: torch.device) -> torch.Generator:
    gen = torch.Generator(device=device)
    gen.manual_seed(int(seed) * 1_000_003 + int(step) + 17)
    return gen


@torch.no_grad()
def reset_rows(
    model: Transformer,
    optimizer: torch.optim.Optimizer | None,
    rows: list[int] | None,
    seed: int,
    step: int,
) -> None:
    """Re-draw `rows` (None: all) of every (un)embedding matrix and zero their AdamW moments."""
    for k, p in enumerate(row_parameters(model)):
        idx = _index(rows, p.device)
        model.init_rows_(p, idx, reset_generator(seed + k, step, p.device))
        state = optimizer.state.get(p) if optimizer is not None else None
        if not state:
            continue
        for key in ("exp_avg", "exp_avg_sq"):
            if key in state:
                if idx is None:
                    state[key].zero_()
                else:
                    state[key][idx] = 0
        if idx is None and "step" in state:
            state["step"] = torch.zeros_like(state["step"]) if torch.is_tensor(state["step"]) else 0


class CollapseHook(Hook):
    """Adds `collapse/*` statistics of the unseen rows to every evaluation."""

    name = "collapse"

    def __init__(self, unseen: list[int], seen: list[int]) -> None:
        self.unseen, self.seen = unseen, seen

    def on_eval(self, trainer: TrainerView, step: int, metrics: dict[str, float]) -> None:
        model = trainer.model
        stats = collapse_stats(model.embed.weight, model.unembedding, self.unseen, self.seen)
        metrics.update({f"collapse/{k}": v for k, v in stats.items()})


class RedrawnEvalHook(Hook):
    """Evaluates a copy of the model whose unseen rows are re-drawn from the initialization."""

    name = "redrawn_eval"

    def __init__(self, unseen: list[int], seed: int) -> None:
        self.unseen, self.seed = unseen, seed

    def on_eval(self, trainer: TrainerView, step: int, metrics: dict[str, float]) -> None:
        extra: dict[str, float] | None = None
        if trainer.dist.main:
            extra = redrawn_metrics(trainer, self.unseen, self.seed, step, full=trainer.eval_full)
        metrics.update(trainer.dist.broadcast(extra))


def redrawn_metrics(
    trainer: TrainerView, unseen: list[int], seed: int, step: int, full: bool = True
) -> dict[str, float]:
    clone = copy.deepcopy(trainer.model)
    reset_rows(clone, None, unseen, seed + 7919, step)
    clone.eval()
    with trainer.autocast():
        scores = trainer.task.evaluate(clone, trainer.device, full=full)
    return {f"redrawn/{k}": v for k, v in scores.items()}


def build_hooks(cfg: ExperimentConfig, task: Task) -> list[Hook]:
    """The intervention and diagnostic hooks a config asks for."""
    t = cfg.train
    hooks: list[Hook] = [SameSymbolFadeHook()] if cfg.model.identity_bias_fade else []
    if t.freeze_embeddings or t.forget_every > 0:
        rows = select_rows(t.intervention_rows, task)
        if t.freeze_embeddings:
            hooks.append(FreezeHook(rows))
        if t.forget_every > 0:
            hooks.append(ForgetHook(rows, t.forget_every, t.forget_until, cfg.seed, t.forget_last))
    if task.unseen_ids():
        unseen, seen = list(task.unseen_ids()), list(task.seen_ids())
        hooks.append(CollapseHook(unseen, seen))
        if t.eval_redrawn:
            hooks.append(RedrawnEvalHook(unseen, cfg.seed))
    elif t.eval_redrawn:
        raise UserError("train.eval_redrawn needs a task with unseen symbols (e.g. horn)")
    return hooks
