import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

torch.set_num_threads(1)

TINY = [
    "model.d_model=32",
    "model.n_heads=2",
    "model.n_layers=2",
    "task.n_symbols=20",
    "task.min_len=2",
    "task.max_len=5",
    "task.n_test=32",
    "train.batch_size=16",
    "train.eval_every=20",
    "train.checkpoint_every=20",
    "train.warmup_steps=5",
]


def symgen(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    env = os.environ | {"OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
    return subprocess.run(
        [sys.executable, "-m", "symgen", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=cwd,
    )


@pytest.fixture
def tiny_overrides() -> list[str]:
    return list(TINY)


def plan_overrides(experiment: object, suite: str, run: str) -> list[str]:
    """The overrides an experiment's runs.yaml gives one of its runs in a suite."""
    return next(r.overrides for r in experiment.runs(suite) if r.name == run)
