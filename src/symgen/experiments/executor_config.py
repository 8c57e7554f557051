"""`reproduce --executor-config FILE`: what each run's cluster job asks for, as one small YAML file.

    partition: gpu          # empty or absent: the cluster's default partition
    gpus: 1                 # GPUs per run (default 0: the job sees none)
    cpus: 4                 # CPU cores per run
    mem_gb: 16              # memory per run (default 0: the partition's default)
    time_min: 240           # time limit per job; a run that outlives it is requeued and resumes
    sbatch: {account: my-project, qos: normal}   # any other #SBATCH option, by its long name

submitit-local reads `time_min` and `gpus` only. A run trains at its recipe's `train.threads`
whatever `cpus` says (`--set train.threads=N` uses more). Unknown keys and bad values are refused in
one line naming the key, as recipes are.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from symgen.config import build, yaml_error
from symgen.errors import UserError

# #SBATCH options symgen sets itself: from a key of this file, or as the job's logs and signal need
MANAGED = {
    "partition": "the partition key",
    "time": "time_min",
    "gpus-per-node": "gpus",
    "cpus-per-task": "cpus",
    "mem": "mem_gb",
    "job-name": "symgen (the run's name)",
    "output": "symgen (the logs go to OUT/runs/NAME.jobs)",
    "error": "symgen (the logs go to OUT/runs/NAME.jobs)",
    "open-mode": "symgen (the logs go to OUT/runs/NAME.jobs)",
    "signal": "symgen (the warning before a time limit that requeues the job)",
}


@dataclass
class ExecutorConfig:
    """The resources of one run's job."""

    partition: str = ""
    gpus: int = 0
    cpus: int = 1
    mem_gb: float = 0.0
    time_min: int = 60
    sbatch: dict[str, str | int | float | bool] = field(default_factory=dict)

    def validate(self) -> None:
        for key, least in (("gpus", 0), ("cpus", 1), ("mem_gb", 0), ("time_min", 1)):
            if getattr(self, key) < least:
                raise UserError(f"{key}={getattr(self, key)} must be >= {least}")
        for key, value in self.sbatch.items():
            if not isinstance(key, str) or not key.strip():
                raise UserError(f"sbatch: option names must be text, got {key!r}")
            if not isinstance(value, str | int | float | bool):
                raise UserError(f"sbatch.{key}: expected text, a number or true, got {value!r}")
            name = key.replace("_", "-")
            if name in MANAGED:
                raise UserError(f"sbatch.{key}: set by {MANAGED[name]}, not by sbatch")


def load_executor_config(path: Path) -> ExecutorConfig:
    """The config in `path`, refused in one line (naming the file) when a key or value is wrong."""
    where = f"--executor-config {path}"
    if not path.is_file():
        raise UserError(f"{where}: no such file")
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as e:
        raise UserError(f"{where} is not valid YAML: {yaml_error(e)}") from None
    if not isinstance(data, dict):
        raise UserError(f"{where} must be a YAML mapping, e.g. `partition: gpu`")
    if not isinstance(data.get("sbatch", {}), dict):
        raise UserError(f"{where}: sbatch must be a mapping of #SBATCH options, e.g. {{account: my-project}}")
    try:
        config = build(ExecutorConfig, data)
        config.validate()
    except UserError as e:
        raise UserError(f"{where}: {e}") from None
    return config
