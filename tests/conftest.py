import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from symgen.config import dump, resolve

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


def write_kg_systematic_run(
    run: Path, loops: int, ood: list[float], blocks: int = 1, id_acc: float = 0.95
) -> Path:
    """A finished kg-systematic run directory: config, metrics and summary, no weights."""
    run.mkdir(parents=True)
    (run / "config.yaml").write_text(
        dump(resolve("kg-systematic-looped", [f"model.n_loops={loops}", f"model.n_layers={blocks}"]))
    )
    lines = [
        {
            "step": 250 * (i + 1),
            "eval/train/accuracy": 1.0,
            "eval/id/accuracy": id_acc,
            "eval/ood/accuracy": y,
        }
        for i, y in enumerate(ood)
    ]
    (run / "metrics.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    summary = {"name": run.name, "parameters": 1000, "steps": 250 * len(ood), "train_seconds": 1.0}
    (run / "summary.json").write_text(json.dumps(summary))
    return run
