"""The one training loop of every experiment.

Per step: draw the iteration count (fixed or Poisson), take this rank's share of the step's
deterministic batch, forward/backward (bf16 autocast on CUDA), hooks, clip, AdamW. Every
`eval_every` steps rank 0 evaluates and every rank sees the same metrics, so hooks that react to
them (curricula) stay in step. Checkpoints hold everything needed to continue bit for bit.
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn.parallel import DistributedDataParallel
from tqdm import tqdm

from symgen.config import ExperimentConfig
from symgen.models.transformer import Transformer
from symgen.tasks.base import IGNORE, Batch, Task
from symgen.training import checkpoint as ckpt
from symgen.training.curriculum import curriculum_hooks
from symgen.training.distributed import Dist
from symgen.training.hooks import Hook
from symgen.training.match_loss import attention_for_term, match_weight_at, matching_term, task_symbols
from symgen.training.optim import build_optimizer, lr_at


class MetricsLog:
    """metrics.jsonl (and TensorBoard when it is installed), written by rank 0 only."""

    def __init__(self, run_dir: Path, enabled: bool) -> None:
        self.path, self.enabled, self.tb = run_dir / "metrics.jsonl", enabled, None
        if enabled:
            with contextlib.suppress(Exception):  # tensorboard is optional
                from torch.utils.tensorboard import SummaryWriter

                self.tb = SummaryWriter(str(run_dir / "tensorboard"))

    def truncate_after(self, step: int) -> None:
        """Drop lines a killed run wrote after its last checkpoint, so a resumed log matches."""
        if not self.enabled or not self.path.exists():
            return
        kept = [line for line in self.path.read_text().splitlines() if json.loads(line)["step"] <= step]
        ckpt.atomic_write_bytes(self.path, "".join(line + "\n" for line in kept).encode())

    def write(self, record: dict[str, Any]) -> None:
        if not self.enabled:
            return
        with open(self.path, "a") as f:
            f.write(json.dumps(record) + "\n")
        if self.tb is not None:
            for key, value in record.items():
                if key != "step" and isinstance(value, int | float):
                    self.tb.add_scalar(key, value, record["step"])


class Trainer:
    def __init__(
        self,
        cfg: ExperimentConfig,
        task: Task,
        model: Transformer,
        run_dir: Path,
        device: torch.device,
        dist_info: Dist | None = None,
        hooks: list[Hook] | None = None,
        progress: bool = True,
    ) -> None:
        self.cfg, self.task, self.model, self.run_dir, self.device = cfg, task, model, run_dir, device
        self.dist = dist_info or Dist()
        self.hooks = curriculum_hooks(task) + list(hooks or [])
        self.progress = progress and self.dist.main
        self.step = 0  # steps completed
        self.elapsed = 0.0  # training seconds, summed over resumes
        self.window: dict[str, float] = {}  # train metrics summed since the last log line
        self.last_eval: dict[str, float] = {}
        self.eval_full = True  # whether the evaluation being taken is a full one (train.light_evals)
        self.n_loops = cfg.model.n_loops  # iterations of the current step (hooks may read it)
        self.layer_passes = 0  # blocks applied in training so far (n_layers × R per step): compute
        self.stopped_by = ""  # why fit() ended: steps, budget, or a hook's reason
        self.bar_postfix: dict[str, str] = {}  # what the progress bar shows after the last log line
        self.optimizer = build_optimizer(model, cfg.train)
        self.ddp = (
            DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)
            if self.dist.active
            else None
        )
        self.log = MetricsLog(run_dir, self.dist.main)
        self.symbols = task_symbols(cfg.train, task)  # the matching term's symbols (None: term off)

    # ---------------------------------------------------------------- helpers
    @property
    def checkpoint_dir(self) -> Path:
        return self.run_dir / "checkpoints"

    def autocast(self) -> contextlib.AbstractContextManager:
        precision = self.cfg.train.precision
        if precision == "bf16" or (precision == "auto" and self.device.type == "cuda"):
            return torch.autocast(self.device.type, dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def loops_for(self, step: int) -> int:
        t = self.cfg.train
        if t.loops == "fixed":
            return self.cfg.model.n_loops
        draw = np.random.default_rng([self.cfg.seed, 3, step]).poisson(t.loops_lambda)
        return int(np.clip(draw, t.loops_min, t.loops_max))

    # ---------------------------------------------------------------- state
    def state(self) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
        opt_tensors, opt_rest = ckpt.optimizer_to_flat(self.optimizer.state_dict())
        tensors = {f"model.{k}": v for k, v in self.model.state_dict().items()} | opt_tensors
        tensors["rng.torch"] = torch.get_rng_state()
        if self.device.type == "cuda":
            tensors["rng.cuda"] = torch.cuda.get_rng_state(self.device)
        state = {
            "step": self.step,
            "elapsed": self.elapsed,
            "window": self.window,
            "last_eval": self.last_eval,
            "layer_passes": self.layer_passes,
            "optimizer": opt_rest,
            "hooks": {h.name: h.state_dict() for h in self.hooks},
        }
        return tensors, state

    def load(self, step: int) -> None:
        tensors, state = ckpt.load_checkpoint(self.checkpoint_dir, step)
        model_state = {k[len("model.") :]: v for k, v in tensors.items() if k.startswith("model.")}
        self.model.load_state_dict(model_state)
        self.optimizer.load_state_dict(ckpt.optimizer_from_flat(tensors, state["optimizer"]))
        torch.set_rng_state(tensors["rng.torch"])
        if "rng.cuda" in tensors and self.device.type == "cuda":
            torch.cuda.set_rng_state(tensors["rng.cuda"], self.device)
        for hook in self.hooks:
            hook.load_state_dict(state["hooks"].get(hook.name, {}))
        self.step, self.elapsed = state["step"], state["elapsed"]
        self.window, self.last_eval = state["window"], state["last_eval"]
        self.layer_passes = state.get("layer_passes", 0)
        self.log.truncate_after(self.step)

    def save_checkpoint(self) -> None:
        tensors, state = self.state()  # every rank: the optimizer state is identical under DDP
        if self.dist.main:
            ckpt.save_checkpoint(
                self.checkpoint_dir, self.step, tensors, state, self.cfg.train.keep_checkpoints
            )
        self.dist.barrier()

    # ---------------------------------------------------------------- the loop
    def next_batch(self, step: int) -> tuple[Batch, int]:
        """This rank's share of the step's batch on the device, and the number of scored tokens of
        the whole global batch; draws the step's iteration count."""
        self.n_loops = self.loops_for(step)
        global_batch = self.task.train_batch(step, self.cfg.train.batch_size)
        n_scored = max(int((global_batch.targets != IGNORE).sum()), 1)
        return global_batch.shard(self.dist.rank, self.dist.world).to(self.device), n_scored

    def train_step(self, step: int) -> None:
        batch, n_scored = self.next_batch(step)
        net = self.ddp or self.model
        scored = batch.targets != IGNORE
        match_weight = match_weight_at(self.cfg.train, step)
        with (
            self.autocast(),
            attention_for_term(self.model, match_weight) as recorded,
        ):  # logits only where scored
            logits = net(batch.inputs, n_loops=self.n_loops, select=scored).logits
        if logits.dim() == 3:  # a model that cannot select: sliced here
            logits = logits[scored]
        targets = batch.targets[scored]
        loss_sum = F.cross_entropy(
            logits.float(), targets, label_smoothing=self.cfg.train.label_smoothing, reduction="sum"
        )
        # Normalise by the scored tokens of the whole global batch: DDP's gradient average then
        # equals the single-process gradient even when ranks hold different numbers of targets.
        loss = loss_sum * self.dist.world / n_scored
        if match_weight:
            match = matching_term(recorded, self.cfg.train.match_loss_blocks, batch.inputs, self.symbols)
            loss = loss + match_weight * self.note_match(match)
        loss.backward()
        self.apply_update(step)
        self.record(loss_sum, logits, targets, scored)

    def apply_update(self, step: int) -> None:
        """Everything after backward: hooks, gradient clipping, learning rate, the AdamW step."""
        t = self.cfg.train
        for hook in self.hooks:
            hook.after_backward(self, step)
        if t.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), t.grad_clip)
        lr = lr_at(step, t)
        for hook in self.hooks:
            lr *= hook.lr_factor(self, step)
        for group in self.optimizer.param_groups:
            group["lr"] = lr * group.get("lr_scale", 1.0)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        for hook in self.hooks:
            hook.on_step_end(self, step)
        self.window["lr"] = lr

    def note_match(self, match: Tensor) -> Tensor:
        """Adds a step's matching term to the log window; returns it."""
        self.window["match_loss"] = self.window.get("match_loss", 0.0) + float(match.detach())
        return match

    @torch.no_grad()
    def record(self, loss_sum: Tensor, logits: Tensor, targets: Tensor, scored: Tensor) -> None:
        """Adds a step's training loss, token accuracy and exact match to the log window."""
        right = logits.argmax(-1) == targets
        wrong_in_row = torch.zeros(len(scored), device=right.device)
        wrong_in_row.index_add_(0, scored.nonzero()[:, 0], (~right).float())
        w = self.window
        w["loss"] = w.get("loss", 0.0) + float(loss_sum / max(len(targets), 1))
        w["token_accuracy"] = w.get("token_accuracy", 0.0) + float(right.float().mean())
        w["exact_match"] = w.get("exact_match", 0.0) + float((wrong_in_row == 0).float().mean())
        w["n"] = w.get("n", 0.0) + 1

    def evaluate(self, full: bool = True) -> dict[str, float]:
        """The task's held-out metrics, then the hooks' (which may add their own and decide a stop;
        `eval_full` tells them whether this evaluation is a light one)."""
        self.eval_full = full
        metrics = self.measure(full)
        for hook in self.hooks:
            hook.on_eval(self, self.step, metrics)
        self.last_eval = metrics
        return metrics

    def measure(self, full: bool) -> dict[str, float]:
        metrics: dict[str, float] | None = None
        if self.dist.main:
            self.model.eval()
            with self.autocast():
                scores = self.task.evaluate(self.model, self.device, full=full)
                metrics = {f"eval/{k}": v for k, v in scores.items()}
            self.model.train()
        return self.dist.broadcast(metrics)

    def flush_window(self, extra: dict[str, float]) -> dict[str, Any]:
        w, self.window = self.window, {}
        n = max(w.pop("n", 1.0), 1.0)
        record: dict[str, Any] = {"step": self.step}
        if "lr" in w:
            record["lr"] = w.pop("lr")
        record |= {f"train/{k}": v / n for k, v in w.items()}
        record |= extra | {"elapsed_s": round(self.elapsed, 2), "layer_passes": self.layer_passes}
        self.log.write(record)
        return record

    @property
    def running(self) -> bool:
        return self.step < self.cfg.train.steps and not self.stopped_by

    def end_step(self, seconds: float) -> bool:
        """Book a finished step (`seconds` of training), then evaluate, log, checkpoint and decide
        whether to stop, as its step count asks. Returns whether it wrote a log line (and so a new
        `bar_postfix`)."""
        t = self.cfg.train
        self.step += 1
        self.layer_passes += self.cfg.model.n_layers * self.n_loops
        self.elapsed += seconds
        over_budget = t.budget_layer_passes is not None and self.layer_passes >= t.budget_layer_passes
        extra: dict[str, float] = {}
        if self.step % t.eval_every == 0 or self.step == t.steps or over_budget:
            start = time.perf_counter()
            last = self.step >= t.steps or over_budget  # known before evaluating: full at once
            extra = self.evaluate(full=last or not t.light_evals)
            reasons = [r for hook in self.hooks if (r := hook.stop_reason(self))]
            self.stopped_by = "budget" if over_budget else (reasons[0] if reasons else "")
            if t.light_evals and self.stopped_by and not last:
                # a hook ended the run on a light evaluation, and has judged it: the last one is full
                extra = self.last_eval = extra | self.measure(full=True)
            self.elapsed += time.perf_counter() - start
        logged = bool(extra) or self.step % max(1, t.eval_every // 4) == 0
        if logged:
            record = self.flush_window(extra)
            headline = f"eval/{self.task.headline_metric()}"
            self.bar_postfix = {
                "loss": f"{record.get('train/loss', float('nan')):.3f}",
                "acc": f"{record.get('train/token_accuracy', float('nan')):.3f}",
                **({"eval": f"{self.last_eval[headline]:.3f}"} if headline in self.last_eval else {}),
            }
        if self.step % t.checkpoint_every == 0 and self.step < t.steps:
            self.save_checkpoint()
        if not self.running:
            self.stopped_by = self.stopped_by or "steps"
        return logged

    def start(self) -> None:
        for hook in self.hooks:
            hook.on_start(self)
        self.model.train()

    def fit(self) -> dict[str, float]:
        self.start()
        # closed on Ctrl-C too, so that no bar is drawn after the message that ends the command
        with progress_bar(self.cfg.train.steps, self.step, self.progress) as bar:
            while self.running:
                start = time.perf_counter()
                self.train_step(self.step)
                if self.end_step(time.perf_counter() - start):
                    bar.set_postfix(**self.bar_postfix, refresh=False)
                bar.update(1)
        self.stopped_by = self.stopped_by or "steps"
        return self.last_eval


def progress_bar(total: int, initial: int, enabled: bool) -> tqdm:
    return tqdm(total=total, initial=initial, disable=not enabled, mininterval=1.0, dynamic_ncols=True)
