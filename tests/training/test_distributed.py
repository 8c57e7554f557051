"""Two processes with gloo: weights stay identical across ranks and match one process."""

import os
from pathlib import Path

import torch
import torch.multiprocessing as mp
from conftest import TINY

from symgen.config import resolve
from symgen.tasks.registry import make_task
from symgen.training.build import build_model
from symgen.training.hooks import Hook
from symgen.training.run import train_run

OVERRIDES = TINY + ["train.steps=30", "train.eval_every=15", "train.checkpoint_every=100"]


class SaveWeights(Hook):
    """Writes this rank's weights after the last step."""

    name = "save_weights"

    def __init__(self, path: Path) -> None:
        self.path = path

    def on_step_end(self, trainer, step: int) -> None:
        if step + 1 == trainer.cfg.train.steps:
            torch.save({k: v.clone() for k, v in trainer.model.state_dict().items()}, self.path)


def _worker(rank: int, world: int, port: int, tmp: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(world))
    os.environ["LOCAL_RANK"] = str(rank)
    torch.set_num_threads(1)
    cfg = resolve("reverse", OVERRIDES)
    train_run(cfg, Path(tmp) / "ddp", progress=False, hooks=[SaveWeights(Path(tmp) / f"rank{rank}.pt")])


def test_two_gloo_ranks_keep_identical_weights_equal_to_one_process(tmp_path: Path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(_worker, args=(2, port, str(tmp_path)), nprocs=2, join=True)
    rank0, rank1 = torch.load(tmp_path / "rank0.pt"), torch.load(tmp_path / "rank1.pt")
    for key in rank0:
        assert torch.equal(rank0[key], rank1[key]), key

    train_run(
        resolve("reverse", OVERRIDES),
        tmp_path / "single",
        progress=False,
        hooks=[SaveWeights(tmp_path / "single.pt")],
    )
    # Same function, not the same bits: Adam turns float noise in gradients that are zero in exact
    # arithmetic (key biases) into lr-sized steps, so compare what the models compute.
    cfg = resolve("reverse", OVERRIDES)
    task = make_task(cfg.task, cfg.seed)
    ddp_model, single_model = build_model(cfg, task), build_model(cfg, task)
    ddp_model.load_state_dict(rank0)
    single_model.load_state_dict(torch.load(tmp_path / "single.pt"))
    inputs = task.train_batch(999, 32).inputs
    assert torch.allclose(ddp_model(inputs).logits, single_model(inputs).logits, atol=1e-3)
    assert (tmp_path / "ddp" / "final.safetensors").exists()
