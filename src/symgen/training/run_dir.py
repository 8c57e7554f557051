"""A run directory: config.yaml (resolved), metrics.jsonl, checkpoints/, final.safetensors,
summary.json. A finished run is a no-op when started again; an interrupted one resumes only under
the config it was started with (`check_resumable`)."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Any

import yaml

from symgen.config import ExperimentConfig, dump
from symgen.errors import UserError
from symgen.training import checkpoint as ckpt
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


def seed_dir(out: Path, seed: int) -> Path:
    return Path(out) / f"seed-{seed}"


def seed_listing(out: Path) -> Path:
    """The seed list of a stacked run (`--seeds`), beside its seed folders."""
    return Path(out) / "seeds.json"


# what makes a folder a run directory: a single run's files, or a stacked run's seed list
RUN_FILES = ("config.yaml", "metrics.jsonl", "checkpoints")


def refuse_foreign_folder(out: Path, stacked: bool) -> None:
    """`train --out OUT` (and `--resume`) writes only into a new or empty folder or a run directory
    of its kind (a single run's config.yaml, metrics.jsonl or checkpoints/; a stacked run's
    seeds.json): a folder of anything else (a `reproduce` output, another run's checkpoints/, notes)
    is refused before a file is written there."""
    out = Path(out)
    if not out.is_dir() or not any(out.iterdir()):
        return
    single = [name for name in RUN_FILES if (out / name).exists()]
    listing = seed_listing(out)
    if stacked and listing.exists() or not stacked and single:
        return
    if stacked and single:
        raise UserError(
            f"--out {out} holds a single run ({single[0]}), not a stacked one: choose a new --out for --seeds"
        )
    if listing.exists():
        shown = ",".join(map(str, json.loads(listing.read_text()).get("seeds", [])))
        raise UserError(
            f"--out {out} holds a stacked run (seeds {shown}): give --seeds {shown}, or a new --out"
        )
    raise UserError(
        f"--out {out} is neither empty nor a run directory (no {', '.join(RUN_FILES)} or "
        f"{listing.name}): choose a new or empty folder"
    )


# settings a finished run may grow under --resume: it then goes on from its last checkpoint
EXTENDABLE = ("train.steps", "train.budget_layer_passes")
STOPPED_BY_LIMIT = ("steps", "budget")  # a run stopped otherwise (a stalled curriculum) would stop again


def extension(cfg: ExperimentConfig, run_dir: Path) -> list[str]:
    """The settings in which `cfg` extends the run stored in `run_dir` (a larger train.steps or
    compute budget, nothing else changed); empty when it is not an extension of that run."""
    config_path = run_dir / "config.yaml"
    if not config_path.exists():
        return []
    changed = config_differences(cfg, config_path)
    if not changed or set(changed) - set(EXTENDABLE):
        return []
    stored = (yaml.safe_load(config_path.read_text()) or {}).get("train", {})
    grown = cfg.train.steps >= stored.get("steps", 0)
    budget, before = cfg.train.budget_layer_passes, stored.get("budget_layer_passes")
    grown = grown and (budget is None or (before is not None and budget >= before))
    return changed if grown else []


def reopen(cfg: ExperimentConfig, run_dir: Path, source: str = "") -> str:
    """Let a finished run go on under `cfg`, a larger step or compute budget (`extension`): the
    config is rewritten, and the run continues from its last checkpoint; a run its curriculum ended
    stays finished (it would end at the same step again). Returns what was done, in words."""
    summary = read_summary(run_dir)
    ckpt.atomic_write_bytes(run_dir / "config.yaml", dump(cfg).encode())
    if summary.get("stopped_by") not in STOPPED_BY_LIMIT:
        summary["extended_from"] = source or "itself"
        ckpt.atomic_write_json(run_dir / "summary.json", summary)
        return f"{run_dir} ended by {summary.get('stopped_by')!r}: already final under the larger budget"
    (run_dir / "summary.json").unlink()
    (run_dir / "final.safetensors").unlink(missing_ok=True)
    return f"{run_dir} goes on from its last checkpoint under the larger budget"


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
