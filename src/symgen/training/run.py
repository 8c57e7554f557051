"""A run directory: config.yaml (resolved), metrics.jsonl, checkpoints/, final.safetensors,
summary.json. A finished run is a no-op when started again; an interrupted one resumes exactly."""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import torch
import yaml

from symgen import config as config_mod
from symgen.config import ExperimentConfig
from symgen.errors import UserError, writable_dir
from symgen.models.transformer import Transformer
from symgen.tasks.base import Task
from symgen.tasks.registry import make_task
from symgen.training import checkpoint as ckpt
from symgen.training.distributed import Dist, init_distributed, resolve_device, shutdown_distributed
from symgen.training.hooks import Hook
from symgen.training.init import initialize
from symgen.training.interventions import build_hooks, select_rows
from symgen.training.trainer import Trainer

# settings that change how a run is executed or what it keeps on disk, not what it computes
EXECUTION_KEYS = (("train", "threads"), ("train", "keep_checkpoints"), ("device",))


# model settings build_model takes from the task when the config leaves them at these values
TASK_FILLED = {"vocab_size": 0, "max_seq_len": 0, "pad_id": -1}


def config_differences(cfg: ExperimentConfig, config_path: Path) -> list[str]:
    """The dotted settings in which `cfg` and the run stored in `config_path` differ (sizes the
    task filled in, thread count and device aside; a setting added to symgen after the run was
    stored counts as the same when `cfg` leaves it at its default)."""
    stored = yaml.safe_load(config_path.read_text()) or {}
    mine = cfg.to_dict()
    for section, part in (("task", cfg.task), ("model", cfg.model), ("train", cfg.train)):
        defaults = dataclasses.asdict(type(part)())
        kept = stored.get(section)
        if isinstance(kept, dict):
            for key, value in mine[section].items():
                if key not in kept and value == defaults.get(key):
                    kept[key] = value
    for key, from_task in TASK_FILLED.items():
        if mine["model"][key] == from_task:
            mine["model"][key] = stored.get("model", {}).get(key, from_task)
    for path in EXECUTION_KEYS:
        for d in (mine, stored):
            node = d
            for part in path[:-1]:
                node = node.get(part, {})
            node.pop(path[-1], None)
    return _differences(mine, stored)


def _differences(mine: Any, stored: Any, prefix: str = "") -> list[str]:
    if not (isinstance(mine, dict) and isinstance(stored, dict)):
        return [] if mine == stored else [prefix or "config"]
    keys = list(mine) + [k for k in stored if k not in mine]
    out: list[str] = []
    for key in keys:
        out += _differences(mine.get(key), stored.get(key), f"{prefix}.{key}" if prefix else key)
    return out


def is_finished(run_dir: Path) -> bool:
    return (run_dir / "summary.json").exists()


def read_summary(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "summary.json").read_text())


def build_model(cfg: ExperimentConfig, task: Task) -> Transformer:
    """Fill the model sizes the task decides (vocabulary, sequence length) and build it."""
    if cfg.model.vocab_size == 0:
        cfg.model.vocab_size = task.vocab_size
    if cfg.model.max_seq_len == 0:
        cfg.model.max_seq_len = task.max_seq_len
    if not cfg.model.causal and cfg.model.pad_id < 0:
        pad_id = getattr(task, "pad_id", None)
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


def load_weights(model: Transformer, run_dir: Path, weights: str = "final") -> Transformer:
    """Load a run's final weights, or those of the checkpoint at step `weights`, into `model`."""
    path = Path(run_dir) / "final.safetensors"
    if weights != "final":
        path = ckpt.checkpoint_paths(Path(run_dir) / "checkpoints", int(weights))[0]
    if not path.exists():
        raise UserError(f"{path} does not exist: the run has not finished or kept that checkpoint")
    tensors = ckpt.load_tensors(path)
    model.load_state_dict({k.removeprefix("model."): v for k, v in tensors.items() if k.startswith("model.")})
    return model.eval()


def load_run(run_dir: Path, weights: str = "final") -> tuple[ExperimentConfig, Task, Transformer]:
    """Config, task and model of a run, with its final weights (or a checkpoint step)."""
    run_dir = Path(run_dir)
    if not (run_dir / "config.yaml").exists():
        raise UserError(f"{run_dir} is not a run directory (no config.yaml)")
    cfg = config_mod.resolve(run_dir / "config.yaml")
    task = make_task(cfg.task, cfg.seed)
    return cfg, task, load_weights(build_model(cfg, task), run_dir, weights)


def check_resumable(cfg: ExperimentConfig, run_dir: Path) -> None:
    """A run directory may take this config: empty, or holding the same run (same thread count)."""
    config_path = run_dir / "config.yaml"
    changed = config_differences(cfg, config_path) if config_path.exists() else []
    if changed:
        raise UserError(
            f"{run_dir} holds a run with another config ({', '.join(changed[:3])}); choose a new --out, "
            "or remove that directory to retrain it"
        )
    if config_path.exists() and not is_finished(run_dir):
        stored = (yaml.safe_load(config_path.read_text()) or {}).get("train", {}).get("threads")
        if stored is not None and stored != cfg.train.threads:
            raise UserError(
                f"{run_dir} was trained with train.threads={stored}; resume with the same count "
                "(another count changes the arithmetic, so the run would not continue bit for bit)"
            )


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


def finish_run(trainer: Trainer, started: float, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Write a trained run's final weights and summary.json; return the summary."""
    summary = {
        "name": trainer.cfg.name,
        "steps": trainer.step,
        "train_seconds": round(trainer.elapsed, 2),
        "steps_per_second": round(trainer.step / max(trainer.elapsed, 1e-9), 2),
        "stopped_by": trainer.stopped_by,
        "layer_passes": trainer.layer_passes,
        "wall_seconds_this_process": round(time.time() - started, 2),
        "parameters": trainer.model.num_parameters(),
        "world_size": trainer.dist.world,
        **(extra or {}),
        "final": trainer.last_eval,
    }
    for hook in trainer.hooks:
        summary |= hook.summary()
    if trainer.dist.main:
        tensors = {f"model.{k}": v for k, v in trainer.model.state_dict().items()}
        ckpt.atomic_save_tensors(trainer.run_dir / "final.safetensors", tensors)
        ckpt.atomic_write_json(trainer.run_dir / "summary.json", summary)
    trainer.dist.barrier()
    return summary


def announce(cfg: ExperimentConfig, device: torch.device, what: str = "") -> None:
    threads = torch.get_num_threads()
    print(f"{cfg.name}{what}: training on {device}, {threads} CPU thread(s) (train.threads)", file=sys.stderr)


def train_run(
    cfg: ExperimentConfig,
    run_dir: Path,
    resume: bool = False,
    progress: bool = True,
    hooks: list[Hook] | None = None,
) -> dict[str, Any]:
    run_dir = Path(run_dir)
    check_resumable(cfg, run_dir)
    if is_finished(run_dir):
        return read_summary(run_dir) | {"skipped": True}
    device = resolve_device(cfg.device)
    dist_info = init_distributed(device)
    if device.type == "cuda":
        device = resolve_device(cfg.device, dist_info.local_rank)
    if cfg.train.threads > 0:
        torch.set_num_threads(cfg.train.threads)
    try:
        trainer = prepare_trainer(cfg, run_dir, device, dist_info, resume, progress, hooks)
        if dist_info.main:
            announce(cfg, device)
        started = time.time()
        trainer.fit()
        return finish_run(trainer, started)
    finally:
        shutdown_distributed()


def parse_seeds(text: str) -> list[int]:
    """`--seeds 0,1,2`: distinct non-negative integers."""
    try:
        seeds = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UserError(f"--seeds {text!r}: give comma-separated integers, e.g. --seeds 0,1,2") from None
    if not seeds:
        raise UserError("--seeds is empty: give at least one seed, e.g. --seeds 0,1")
    if any(s < 0 for s in seeds):
        raise UserError(f"--seeds {text!r}: seeds must be >= 0")
    if len(set(seeds)) != len(seeds):
        raise UserError(f"--seeds {text!r}: a seed is repeated")
    return seeds


def seed_dir(out: Path, seed: int) -> Path:
    return Path(out) / f"seed-{seed}"


def train_seeds(
    cfg: ExperimentConfig, seeds: list[int], out: Path, resume: bool = False, progress: bool = True
) -> list[dict[str, Any]]:
    """Train `seeds` of one config as one stacked model (`symgen.training.stacked`): one ordinary
    run directory per seed, OUT/seed-N, loadable and resumable like any run. OUT/seeds.json keeps
    the seed list, and a stacked run resumes only with the same list."""
    from symgen.training.stacked import StackedTrainer

    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        raise UserError("--seeds trains every seed in one process; run it without torchrun")
    out = Path(out)
    listing = out / "seeds.json"
    if listing.exists() and json.loads(listing.read_text())["seeds"] != seeds:
        stored = ",".join(map(str, json.loads(listing.read_text())["seeds"]))
        raise UserError(f"{out} holds a stacked run of seeds {stored}; resume it with --seeds {stored}")
    configs = {seed: copy.deepcopy(dataclasses.replace(cfg, seed=seed)) for seed in seeds}
    for seed in seeds:
        check_resumable(configs[seed], seed_dir(out, seed))
    device = resolve_device(cfg.device)
    if cfg.train.threads > 0:
        torch.set_num_threads(cfg.train.threads)
    writable_dir(out)
    ckpt.atomic_write_json(listing, {"seeds": seeds})
    todo = [seed for seed in seeds if not is_finished(seed_dir(out, seed))]
    single = Dist()
    lanes = [
        prepare_trainer(configs[seed], seed_dir(out, seed), device, single, resume, progress=False)
        for seed in todo
    ]
    summaries = {s: read_summary(seed_dir(out, s)) | {"skipped": True} for s in seeds if s not in todo}
    if lanes:
        announce(cfg, device, f" (seeds {','.join(map(str, todo))}, stacked)")
        started = time.time()
        StackedTrainer(lanes, progress).fit()
        for seed, lane in zip(todo, lanes, strict=True):
            summaries[seed] = finish_run(lane, started, {"stacked_seeds": len(lanes)})
    return [summaries[seed] for seed in seeds]
