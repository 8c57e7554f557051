"""The knowledge-graph training task: answer-only loss, deterministic batches, atomic share,
evaluation read at the last real token."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch
from torch import nn

from symgen.config import resolve
from symgen.errors import UserError
from symgen.tasks import kg
from symgen.tasks.base import IGNORE
from symgen.tasks.kg_task import KGTask, KGTaskConfig
from symgen.tasks.registry import make_task


def systematic(**kw) -> KGTaskConfig:
    base = dict(entities=30, relations=12, out_degree=6, ood_fraction=0.2, phi=3.0, n_test_id=100)
    return KGTaskConfig(**{**base, "n_test_ood": 100, "n_eval_train": 200, **kw})


def depth(**kw) -> KGTaskConfig:
    base = dict(setting="depth", entities=20, relations=4, max_hops=5, per_hop=150, test_per_hop=40)
    return KGTaskConfig(**{**base, **kw})


@pytest.fixture(scope="module")
def sys_task() -> KGTask:
    return KGTask(systematic(atomic_fraction=0.3), seed=0)


class Oracle(nn.Module):
    """Puts all mass on the right answer of every query it knows (optionally a wrong one)."""

    def __init__(self, task: KGTask, shift: int = 0) -> None:
        super().__init__()
        data = kg.generate(task.cfg.kg_config(task.seed))
        rows = [r for split in data.splits.values() for r in split]
        self.answer = {tuple(task.index[t] for t in r["input"]): task.index[r["target"]] for r in rows}
        self.vocab, self.shift = task.vocab_size, shift

    def forward(self, ids: torch.Tensor, n_loops: int | None = None):
        logits = torch.zeros(*ids.shape, self.vocab)
        for i, row in enumerate(ids.tolist()):
            for t in range(1, len(row) + 1):
                key = tuple(row[:t])
                if key in self.answer:
                    logits[i, t - 1, (self.answer[key] + self.shift) % self.vocab] = 1.0
        return SimpleNamespace(logits=logits)


def test_loss_only_on_the_answer_at_the_last_real_token(sys_task):
    batch = sys_task.train_batch(3, 64)
    scored = batch.targets != IGNORE
    assert scored.sum(1).tolist() == [1] * 64  # one scored token per row
    lengths = (batch.inputs != 0).sum(1)
    assert scored[torch.arange(64), lengths - 1].all()  # ...at the last real token
    oracle = Oracle(sys_task)
    for row, target in zip(batch.inputs.tolist(), batch.targets.tolist(), strict=True):
        n = sum(t != 0 for t in row)
        assert target[n - 1] == oracle.answer[tuple(row[:n])]  # the graph walk's tail


def test_batches_deterministic_per_step_and_atomic_share(sys_task):
    again = KGTask(systematic(atomic_fraction=0.3), seed=0)
    a, b = sys_task.train_batch(7, 100), again.train_batch(7, 100)
    assert torch.equal(a.inputs, b.inputs) and torch.equal(a.targets, b.targets)
    assert not torch.equal(a.inputs, sys_task.train_batch(8, 100).inputs)
    hops = (a.inputs != 0).sum(1) - 1
    assert (hops == 1).sum() == 30 and (hops == 2).sum() == 70
    uniform = KGTask(systematic(atomic_fraction=0.0), seed=0).train_batch(7, 1000)
    share = float(((uniform.inputs != 0).sum(1) == 2).float().mean())
    assert share < 0.3  # uniform sampling draws atomic facts only by their share of rows


def test_test_queries_never_in_training(sys_task):
    train = {tuple(r) for r in sys_task.pool.tokens.tolist()}
    for name in ("id", "ood"):
        assert not train & {tuple(r) for r in sys_task.tests[name].tokens.tolist()}


def test_evaluate_reads_the_last_real_token(sys_task):
    perfect = sys_task.evaluate(Oracle(sys_task), torch.device("cpu"))
    splits = ("train", "id", "ood", "atomic_ood")
    assert set(perfect) == {f"{s}/accuracy" for s in splits} | {f"{s}/n" for s in splits}
    assert all(perfect[f"{s}/accuracy"] == 1.0 for s in splits)
    assert all(perfect[f"{s}/n"] == len(sys_task.tests[s]) for s in splits)
    wrong = sys_task.evaluate(Oracle(sys_task, shift=1), torch.device("cpu"))
    assert all(wrong[f"{s}/accuracy"] == 0.0 for s in splits)


def test_depth_task_hops_and_stage():
    task = KGTask(depth(), seed=1)
    assert task.train_hops == 5 and set(task.by_hop) == {2, 3, 4, 5}
    metrics = task.evaluate(Oracle(task), torch.device("cpu"))
    tests = {"train"} | {f"hop_{k}" for k in range(2, 6)}
    assert set(metrics) == {f"{t}/accuracy" for t in tests} | {f"{t}/n" for t in tests}
    task.set_train_hops(3)
    hops = set(((task.pool.tokens != 0).sum(1) - 1).tolist())
    assert hops == {1, 2, 3}
    batch = task.train_batch(0, 256)
    assert int((batch.inputs != 0).sum(1).max()) <= 4


class LoopOracle(Oracle):
    """Right only when run for exactly `good` iterations."""

    def __init__(self, task: KGTask, good: int) -> None:
        super().__init__(task)
        self.good = good

    def forward(self, ids: torch.Tensor, n_loops: int | None = None):
        self.shift = 0 if n_loops == self.good else 1
        return super().forward(ids, n_loops)


def test_loops_grid_scores_each_budget_and_keeps_the_best():
    task = KGTask(depth(eval_loops_grid=[2, 4, 6]), seed=1)
    metrics = task.evaluate(LoopOracle(task, good=4), torch.device("cpu"))
    assert metrics["hop_3/accuracy@r4"] == 1.0 and metrics["hop_3/accuracy@r6"] == 0.0
    assert metrics["hop_3/accuracy"] == 1.0  # the best budget
    blind = task.evaluate(LoopOracle(task, good=5), torch.device("cpu"))
    assert blind["hop_3/accuracy"] == 0.0  # a budget outside the grid is never tried
    with pytest.raises(UserError, match="eval_loops_grid"):
        depth(eval_loops_grid=[0]).validate()


def test_config_errors_name_the_key():
    with pytest.raises(UserError, match="atomic_fraction"):
        systematic(atomic_fraction=1.5).validate()
    with pytest.raises(UserError, match="phi"):
        systematic(phi=50.0).validate()
    with pytest.raises(UserError, match="curriculum"):
        systematic(curriculum=True).validate()


def test_recipes_resolve_and_build():
    small = [
        "task.entities=20",
        "task.relations=10",
        "task.out_degree=5",
        "task.phi=2.0",
        "task.n_test_id=50",
    ]
    cfg = resolve("kg-systematic-looped", small)
    task = make_task(cfg.task, cfg.seed)
    assert task.max_seq_len == 3 and task.vocab_size == 1 + 20 + 10
    assert np.all(task.atomic.lengths == 2)


def test_atomic_only_training():
    task = KGTask(systematic(phi=0.0, atomic_fraction=0.3), seed=0)
    batch = task.train_batch(0, 32)
    assert ((batch.inputs != 0).sum(1) == 2).all() and len(task.compositions) == 0
