"""Training one run into its run directory (`symgen train`): resumes an interrupted run, skips a
finished one."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import torch

from symgen.config import ExperimentConfig
from symgen.training.build import announce, prepare_trainer, resume_note, was_started
from symgen.training.distributed import init_distributed, resolve_device, shutdown_distributed
from symgen.training.hooks import Hook
from symgen.training.run_dir import check_resumable, extension, finish_run, is_finished, read_summary, reopen


def train_run(
    cfg: ExperimentConfig,
    run_dir: Path,
    resume: bool = False,
    progress: bool = True,
    hooks: list[Hook] | None = None,
    say_fresh: bool = False,
) -> dict[str, Any]:
    """Train `cfg` into `run_dir` (a finished run is skipped). With `resume`, a line on stderr says
    where the run continues from; with `say_fresh` too when there is nothing to resume (`train
    --resume`: a mistyped --out shows there), not when a suite starts a run for the first time."""
    run_dir = Path(run_dir)
    if resume and is_finished(run_dir) and extension(cfg, run_dir):
        print(reopen(cfg, run_dir), file=sys.stderr)
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
        note = resume_note(run_dir, cfg) if resume and (say_fresh or was_started(run_dir)) else ""
        trainer = prepare_trainer(cfg, run_dir, device, dist_info, resume, progress, hooks)
        if dist_info.main:
            if note:  # said once the checkpoint it names has loaded
                print(note, file=sys.stderr)
            announce(cfg, device)
        started = time.time()
        trainer.fit()
        return finish_run(trainer, started)
    finally:
        shutdown_distributed()
