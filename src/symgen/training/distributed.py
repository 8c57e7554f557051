"""Data parallelism through PyTorch's own launcher: under `torchrun` the same command trains with
DistributedDataParallel (gloo on CPU, NCCL on GPU); logging, evaluation and checkpoints on rank 0."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist


@dataclass
class Dist:
    rank: int = 0
    world: int = 1
    local_rank: int = 0

    @property
    def main(self) -> bool:
        return self.rank == 0

    @property
    def active(self) -> bool:
        return self.world > 1

    def barrier(self) -> None:
        if self.active:
            dist.barrier()

    def broadcast(self, obj: Any) -> Any:
        """Rank 0's `obj` on every rank."""
        if not self.active:
            return obj
        box = [obj]
        dist.broadcast_object_list(box, src=0)
        return box[0]


def resolve_device(name: str, local_rank: int = 0) -> torch.device:
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda":
        name = f"cuda:{local_rank}"
    return torch.device(name)


def init_distributed(device: torch.device) -> Dist:
    """Join the process group when launched by torchrun (WORLD_SIZE > 1); otherwise one process."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return Dist()
    if not dist.is_initialized():
        dist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo")
    return Dist(dist.get_rank(), dist.get_world_size(), int(os.environ.get("LOCAL_RANK", "0")))


def shutdown_distributed() -> None:
    if dist.is_initialized():
        dist.destroy_process_group()
