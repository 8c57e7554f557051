"""Task names → (config dataclass, task class): a plain table. Adding a task touches this file and
its own; the config layer reads the table to know each task's settings."""

from __future__ import annotations

from typing import Any

from symgen.tasks.base import Task
from symgen.tasks.horn_implicit import ImplicitHornTask, ImplicitHornTaskConfig
from symgen.tasks.horn_task import HornTask, HornTaskConfig
from symgen.tasks.kg_task import KGTask, KGTaskConfig
from symgen.tasks.reverse import ReverseConfig, ReverseTask
from symgen.tasks.transfer import TransferConfig, TransferTask

TASKS: dict[str, tuple[type, type[Task]]] = {
    "reverse": (ReverseConfig, ReverseTask),
    "horn": (HornTaskConfig, HornTask),
    "horn-implicit": (ImplicitHornTaskConfig, ImplicitHornTask),
    "kg": (KGTaskConfig, KGTask),
    "transfer": (TransferConfig, TransferTask),
}
TASK_CONFIGS: dict[str, type] = {name: cfg for name, (cfg, _) in TASKS.items()}


def make_task(cfg: Any, seed: int) -> Task:
    return TASKS[cfg.name][1](cfg, seed)
