"""Building one run: its task and model (seeded, or from a run directory's weights), and a trainer
at the run's last checkpoint with the hooks its config asks for."""

from __future__ import annotations

import sys
from pathlib import Path

import torch

from symgen import config as config_mod
from symgen.config import ExperimentConfig
from symgen.errors import UserError, writable_dir
from symgen.models.transformer import Transformer
from symgen.tasks.base import Task
from symgen.tasks.registry import make_task
from symgen.training import checkpoint as ckpt
from symgen.training.checkpoint import load_weights
from symgen.training.distributed import Dist
from symgen.training.hooks import Hook
from symgen.training.init import initialize
from symgen.training.interventions import build_hooks, select_rows
from symgen.training.trainer import Trainer


def build_model(cfg: ExperimentConfig, task: Task) -> Transformer:
    """Fill the model sizes the task decides (vocabulary, sequence length) and build it."""
    if cfg.model.vocab_size == 0:
        cfg.model.vocab_size = task.vocab_size
    if cfg.model.max_seq_len == 0:
        cfg.model.max_seq_len = task.max_seq_len
    if not cfg.model.causal and cfg.model.pad_id < 0:
        pad_id = task.pad_id
        if pad_id is None:
            raise UserError(f"model.causal=false needs a padding token; task {cfg.task.name} has none")
        cfg.model.pad_id = pad_id
    if cfg.model.vocab_size < task.vocab_size:
        raise UserError(
            f"model.vocab_size={cfg.model.vocab_size} is smaller than the task's {task.vocab_size}"
        )
    torch.manual_seed(cfg.seed)
    model = Transformer(cfg.model)
    if cfg.model.identity_bias is not None and cfg.model.identity_bias_scope == "symbols":
        model.restrict_same_symbol(select_rows("symbols", task))
    return model


def load_run(run_dir: Path, weights: str = "final") -> tuple[ExperimentConfig, Task, Transformer]:
    """Config, task and model of a run, with its final weights (or a checkpoint step)."""
    run_dir = Path(run_dir)
    if not (run_dir / "config.yaml").exists():
        raise UserError(f"{run_dir} is not a run directory (no config.yaml)")
    cfg = config_mod.resolve(run_dir / "config.yaml")
    task = make_task(cfg.task, cfg.seed)
    return cfg, task, load_weights(build_model(cfg, task), run_dir, weights)


def prepare_trainer(
    cfg: ExperimentConfig,
    run_dir: Path,
    device: torch.device,
    dist_info: Dist,
    resume: bool,
    progress: bool,
    hooks: list[Hook] | None = None,
) -> Trainer:
    """Task, model (initialized, or at the run's last checkpoint) and trainer of one run."""
    task = make_task(cfg.task, cfg.seed)
    model = build_model(cfg, task).to(device)
    resolved = config_mod.dump(cfg)
    steps = ckpt.list_checkpoints(run_dir / "checkpoints")
    if (steps or (run_dir / "metrics.jsonl").exists()) and not resume:
        raise UserError(
            f"{run_dir} holds an unfinished run: pass --resume to continue it, or choose a new --out"
        )
    if dist_info.main:
        writable_dir(run_dir)
        ckpt.atomic_write_bytes(run_dir / "config.yaml", resolved.encode())
    dist_info.barrier()
    if not steps:
        initialize(model, cfg, task)
    hooks = list(hooks or []) + build_hooks(cfg, task)
    trainer = Trainer(cfg, task, model, run_dir, device, dist_info, hooks, progress)
    if steps:
        trainer.load(steps[-1])
    elif resume and dist_info.main:
        trainer.log.truncate_after(0)
    return trainer


def was_started(run_dir: Path) -> bool:
    """Whether a run was ever started in `run_dir` (preparing a run writes its config first)."""
    return (run_dir / "config.yaml").exists() or (run_dir / "metrics.jsonl").exists()


def resume_note(run_dir: Path, cfg: ExperimentConfig, existed: bool = True) -> str:
    """What `--resume` does with `run_dir`, in one line: the step it continues from, or why it starts
    at step 0. Read before the run directory is prepared (`existed`: whether its folder was there)."""
    steps = ckpt.list_checkpoints(run_dir / "checkpoints")
    if steps:
        return f"--resume: {run_dir} continues from step {steps[-1]} (its last checkpoint)"
    if was_started(run_dir):
        every = cfg.train.checkpoint_every
        why = f"no checkpoint yet, the run stopped before step {every} (train.checkpoint_every)"
    else:
        why = "no run there" if existed and run_dir.exists() else "no run there, the folder does not exist"
    return f"--resume: nothing to resume in {run_dir}: {why}; starting from step 0"


def announce(cfg: ExperimentConfig, device: torch.device, what: str = "") -> None:
    threads = torch.get_num_threads()
    print(f"{cfg.name}{what}: training on {device}, {threads} CPU thread(s) (train.threads)", file=sys.stderr)
