"""The trainer's settings: optimizer, schedule, iterations, evaluation and checkpoints."""

from __future__ import annotations

from dataclasses import dataclass, field

from symgen.errors import UserError

SCHEDULES = ("constant", "cosine")
PRECISIONS = ("auto", "fp32", "bf16")
LOOP_MODES = ("fixed", "poisson")
INTERVENTION_ROWS = ("all", "symbols", "unseen")


@dataclass
class TrainConfig:
    steps: int = 1000
    batch_size: int = 64
    lr: float = 1e-3
    betas: list[float] = field(default_factory=lambda: [0.9, 0.98])
    eps: float = 1e-8
    weight_decay: float = 0.1  # the "rest" group: matrices of attention and MLP
    embed_weight_decay: float | None = None  # None: same as weight_decay
    unembed_weight_decay: float | None = None  # None: same as weight_decay (untied models only)
    embed_lr_ratio: float = 1.0  # the (un)embedding rows train at this multiple of the learning rate
    norm_weight_decay: float = 0.0  # LayerNorm weights, biases, gates
    warmup_steps: int = 100
    schedule: str = "constant"  # constant | cosine (to min_lr_ratio × lr at the last step)
    min_lr_ratio: float = 0.1
    decay_steps: int = 0  # constant schedule: the last steps (at most all after warm-up) fall to min_lr_ratio
    grad_clip: float = 1.0  # 0: off
    label_smoothing: float = 0.0
    # a supervised matching head (symgen.training.match_loss): this weight times the cross-entropy of
    # one head's attention against the earlier copies of each position's symbol; the model stays the
    # recipe's, only its training gains the term, off after `match_loss_until` (0: the whole run)
    match_loss: float = 0.0
    match_loss_until: int = 0
    match_loss_blocks: list[int] = field(default_factory=lambda: [0])  # the blocks whose head 0 learns it
    precision: str = "auto"  # auto: bf16 autocast on CUDA, fp32 on CPU
    loops: str = "fixed"  # fixed: model.n_loops; poisson: R = clip(Poisson(loops_lambda), min, max) per batch
    loops_lambda: float = 4.0
    loops_min: int = 2
    loops_max: int = 8
    eval_every: int = 200
    light_evals: bool = False  # evaluations before the last ask the task for its cheaper subset
    checkpoint_every: int = 500
    keep_checkpoints: int = 2  # newest checkpoints kept (0: all)
    # compute budget: stop once the blocks have been applied this many times in all (n_layers × R per
    # step, summed), so runs of different R compare at equal compute; None: no budget, only `steps`
    budget_layer_passes: int | None = None
    threads: int = 1  # torch CPU threads (small models run fastest on one); 0: torch's default
    # (un)embedding interventions (symgen.training.interventions)
    freeze_embeddings: bool = False  # keep the rows at their initialization
    forget_every: int = 0  # active forgetting: re-draw the rows and reset their moments every K steps
    forget_until: int = 0  # temporary active forgetting: no resets after this step (0: never stop)
    # the schedule ends on a reset: the rows are re-drawn after the last step too, so the model is
    # tested on rows as a reset leaves them (every intervention row, seen and unseen alike)
    forget_last: bool = False
    intervention_rows: str = "all"  # all | symbols | unseen: rows freezing and forgetting touch
    eval_redrawn: bool = False  # also evaluate with the unseen rows re-drawn from the initialization
    init_from: str = ""  # start from this run directory's final weights (fine-tuning)
    init_repair: str = ""  # "" | random | mean: re-initialize the task's unseen rows before step 0

    def validate(self) -> None:
        positive = {"steps": self.steps, "batch_size": self.batch_size, "eval_every": self.eval_every}
        positive |= {"checkpoint_every": self.checkpoint_every}
        if self.budget_layer_passes is not None and self.budget_layer_passes <= 0:
            raise UserError(
                f"train.budget_layer_passes={self.budget_layer_passes} must be positive (or null: no budget)"
            )
        if self.threads < 0:
            raise UserError(f"train.threads={self.threads} must be >= 0 (0: torch's default)")
        for key, value in positive.items():
            if value <= 0:
                raise UserError(f"train.{key}={value} must be positive")
        if self.lr <= 0:
            raise UserError(f"train.lr={self.lr} must be positive")
        if len(self.betas) != 2 or not all(0 <= b < 1 for b in self.betas):
            raise UserError(f"train.betas={self.betas} must be two numbers in [0, 1)")
        if self.decay_steps < 0:
            raise UserError(f"train.decay_steps={self.decay_steps} must be >= 0")
        if self.warmup_steps < 0:
            raise UserError(f"train.warmup_steps={self.warmup_steps} must be >= 0")
        if self.schedule not in SCHEDULES:
            raise UserError(f"train.schedule={self.schedule!r}: allowed are {', '.join(SCHEDULES)}")
        if self.precision not in PRECISIONS:
            raise UserError(f"train.precision={self.precision!r}: allowed are {', '.join(PRECISIONS)}")
        if self.loops not in LOOP_MODES:
            raise UserError(f"train.loops={self.loops!r}: allowed are {', '.join(LOOP_MODES)}")
        if self.loops == "poisson" and not 1 <= self.loops_min <= self.loops_max:
            raise UserError(f"train.loops_min={self.loops_min} must be in 1..loops_max={self.loops_max}")
        if not 0 <= self.label_smoothing < 1:
            raise UserError(f"train.label_smoothing={self.label_smoothing} must be in [0, 1)")
        for key in ("weight_decay", "embed_weight_decay", "unembed_weight_decay", "norm_weight_decay"):
            value = getattr(self, key)
            if value is not None and value < 0:
                raise UserError(f"train.{key}={value} must be >= 0")
        if self.init_repair not in ("", "random", "mean"):
            raise UserError(f"train.init_repair={self.init_repair!r}: allowed are random, mean (or empty)")
        if self.forget_every < 0 or self.forget_until < 0:
            raise UserError("train.forget_every and train.forget_until must be >= 0")
        if self.freeze_embeddings and self.forget_every > 0:
            raise UserError("train.freeze_embeddings and train.forget_every exclude each other: choose one")
        if self.forget_until > 0 and self.forget_every == 0:
            raise UserError("train.forget_until needs train.forget_every > 0")
        if self.forget_last and (self.forget_every == 0 or self.forget_until > 0):
            raise UserError("train.forget_last needs train.forget_every > 0 and no train.forget_until")
        if self.match_loss < 0 or self.match_loss_until < 0 or min(self.match_loss_blocks, default=0) < 0:
            raise UserError("train.match_loss, match_loss_until and match_loss_blocks must be >= 0")
        if not self.embed_lr_ratio > 0:
            raise UserError(f"train.embed_lr_ratio={self.embed_lr_ratio} must be positive")
        if self.intervention_rows not in INTERVENTION_ROWS:
            allowed = ", ".join(INTERVENTION_ROWS)
            raise UserError(f"train.intervention_rows={self.intervention_rows!r}: allowed are {allowed}")
