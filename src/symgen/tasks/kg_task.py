"""Knowledge-graph multi-hop queries as a training task (Part B).

A k-hop query is the token sequence ``[head, r1, ..., rk]``; the model reads the answer (the tail
entity) at the last input token, top-1 over the whole vocabulary. Loss and accuracy are on that
one token only. The dataset is generated in memory by :func:`symgen.tasks.kg.generate` from the
config and the run's seed, so it is a pure function of both.

Training batches are pure functions of (seed, step, the hops in training): with
``atomic_fraction > 0`` that share of every batch is drawn from the atomic facts and the rest from
the compositions, each pool walked in a fresh permutation per epoch (so OOD atomic facts, seen only
as single facts, are not under-sampled). The depth curriculum (``curriculum: true``) changes the
hops in training through :meth:`KGTask.set_train_hops`; see :mod:`symgen.training.curriculum`.

Evaluation: ``train/accuracy`` on a fixed sample of the rows in training (per curriculum stage),
then ``id/accuracy`` and ``ood/accuracy`` (systematic; plus ``atomic_ood/accuracy``, the recall
of OOD atomic facts, which caps OOD chains) or ``hop_k/accuracy`` per hop count (depth).
With ``eval_loops_grid`` every pool is also scored at each listed iteration count
(``hop_k/accuracy@r6``) and ``hop_k/accuracy`` is the best of them: a model trained with dynamic R
is read with the inference budget that suits each depth (inference-time scaling), which is what
its depth curriculum then advances on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from symgen.errors import UserError
from symgen.models.transformer import Transformer
from symgen.tasks import kg
from symgen.tasks.base import IGNORE, Batch, CurriculumSettings, Task, generator_config

PAD = 0


@dataclass
class KGTaskConfig:
    name: str = "kg"
    setting: str = "systematic"  # systematic | depth
    entities: int = 50
    relations: int = 40
    out_degree: int = 20  # systematic
    ood_fraction: float = 0.1  # systematic
    phi: float = 18.0  # systematic: 2-hop training chains = phi × |ID atomic facts|
    max_hops: int = 8  # depth: chains of k = 2..max_hops are generated
    per_hop: int = 2000  # depth: training chains per k
    test_per_hop: int = 200  # depth: held-out chains per k
    n_test_id: int = 1000  # systematic: held-out ID 2-hop chains
    n_test_ood: int = 1000  # systematic: OOD 2-hop chains (both facts OOD)
    data_seed: int = 0  # the graph's seed is the run's seed + data_seed
    atomic_fraction: float = 0.0  # share of every batch drawn from atomic facts; 0: uniform over all rows
    train_hops: int = 0  # depth: largest k in training without a curriculum (0: max_hops)
    curriculum: bool = False  # depth: start at 2 hops, add k+1 when held-out k-hop accuracy passes
    curriculum_threshold: float = 0.95
    curriculum_reset_optimizer: bool = False  # rebuild AdamW (and its warm-up) at every new stage
    # deepest hop count the curriculum may add (0: max_hops); deeper test chains are never trained on
    curriculum_max_hops: int = 0
    curriculum_patience: int = 0  # end the run after this many evaluations without a stage passed (0: never)
    n_eval_train: int = 1000  # fixed sample of training rows scored as train/accuracy
    eval_max_hops: int = 0  # depth: hop counts evaluated (0: max_hops)
    eval_loops: int = 0  # iterations at evaluation (0: model.n_loops)
    # also score at each of these iteration counts; a pool's accuracy is then the best of them
    eval_loops_grid: list[int] = field(default_factory=list)
    eval_batch: int = 1024

    def kg_config(self, seed: int) -> kg.KGConfig:
        return generator_config(kg.KGConfig, self, seed=seed + self.data_seed)

    def validate(self) -> None:
        self.kg_config(0).validate()
        if not 0.0 <= self.atomic_fraction < 1.0:
            raise UserError(f"task.atomic_fraction={self.atomic_fraction} must be in [0, 1)")
        if not 0 <= self.train_hops <= self.max_hops:
            raise UserError(f"task.train_hops={self.train_hops} must be in 0..task.max_hops={self.max_hops}")
        if not 0 <= self.eval_max_hops <= self.max_hops:
            raise UserError(f"task.eval_max_hops must be in 0..task.max_hops={self.max_hops}")
        if self.curriculum and self.setting != "depth":
            raise UserError("task.curriculum needs task.setting=depth")
        if self.curriculum and self.max_hops < 2:
            raise UserError("task.curriculum needs task.max_hops >= 2")
        if self.curriculum_max_hops and not 2 <= self.curriculum_max_hops <= self.max_hops:
            raise UserError(
                f"task.curriculum_max_hops={self.curriculum_max_hops} must be in "
                f"2..task.max_hops={self.max_hops} (or 0: max_hops)"
            )
        if self.curriculum_patience < 0:
            raise UserError(
                f"task.curriculum_patience={self.curriculum_patience} must be >= 0 (0: never stop)"
            )
        if not 0.0 < self.curriculum_threshold <= 1.0:
            raise UserError(f"task.curriculum_threshold={self.curriculum_threshold} must be in (0, 1]")
        for key in ("n_eval_train", "eval_loops"):
            if getattr(self, key) < 0:
                raise UserError(f"task.{key} must be >= 0")
        if self.eval_batch <= 0:
            raise UserError("task.eval_batch must be positive")
        if any(r < 1 for r in self.eval_loops_grid):
            raise UserError(f"task.eval_loops_grid={self.eval_loops_grid}: iteration counts must be >= 1")


@dataclass
class Rows:
    """Queries of one pool: right-padded token ids, lengths and answer ids."""

    tokens: np.ndarray  # (N, T) int64, PAD after the query
    lengths: np.ndarray  # (N,) input tokens = hops + 1
    answers: np.ndarray  # (N,)

    def __len__(self) -> int:
        return len(self.answers)

    def take(self, idx: np.ndarray) -> Rows:
        return Rows(self.tokens[idx], self.lengths[idx], self.answers[idx])

    @staticmethod
    def concat(parts: list[Rows], width: int) -> Rows:
        if not parts:
            empty = np.zeros(0, dtype=np.int64)
            return Rows(np.full((0, width), PAD, dtype=np.int64), empty, empty)
        tokens = np.full((sum(len(p) for p in parts), width), PAD, dtype=np.int64)
        at = 0
        for p in parts:
            tokens[at : at + len(p), : p.tokens.shape[1]] = p.tokens
            at += len(p)
        lengths = np.concatenate([p.lengths for p in parts])
        return Rows(tokens, lengths, np.concatenate([p.answers for p in parts]))


def _epoch_rows(n: int, batch_size: int, step: int, seed: int, stream: int) -> np.ndarray:
    """Row indices of one step: a fresh permutation of the n rows every epoch."""
    out: list[int] = []
    start = step * batch_size
    while len(out) < batch_size:
        epoch, offset = divmod(start + len(out), n)
        perm = np.random.default_rng([seed, stream, n, epoch]).permutation(n)
        out.extend(perm[offset : offset + batch_size - len(out)].tolist())
    return np.asarray(out, dtype=np.int64)


class KGTask(Task):
    def __init__(self, cfg: KGTaskConfig, seed: int) -> None:
        cfg.validate()
        self.cfg, self.seed = cfg, seed
        data = kg.generate(cfg.kg_config(seed))
        self.vocab = ["<pad>", *kg.all_tokens(data.graph)]
        self.index = {tok: i for i, tok in enumerate(self.vocab)}
        self.width = cfg.max_hops + 1 if cfg.setting == "depth" else 3
        train = data.splits["train"]
        self.atomic = self._rows([r for r in train if r["hops"] == 1])
        self.by_hop = {k: self._rows([r for r in train if r["hops"] == k]) for k in self._hops(train)}
        self.tests: dict[str, Rows] = {}
        if cfg.setting == "systematic":
            self.tests["id"] = self._rows(data.splits["test_id"])
            self.tests["ood"] = self._rows(data.splits["test_ood"])
            ood = {(f[0], f[1]) for f in data.graph["facts"] if f[3] == "ood"}
            self.tests["atomic_ood"] = self._rows([r for r in train if tuple(r["input"]) in ood])
        else:
            test = data.splits["test"]
            last = cfg.eval_max_hops or cfg.max_hops
            for k in range(2, last + 1):
                self.tests[f"hop_{k}"] = self._rows([r for r in test if r["hops"] == k])
        self.tests = {"train": self.atomic, **self.tests}  # replaced by a sample of the training pool
        self.train_hops = 0
        self.set_train_hops(2 if cfg.curriculum else (cfg.train_hops or max(self.by_hop, default=1)))

    @staticmethod
    def _hops(records: list[dict[str, Any]]) -> list[int]:
        return sorted({r["hops"] for r in records if r["hops"] >= 2})

    def _rows(self, records: list[dict[str, Any]]) -> Rows:
        tokens = np.full((len(records), self.width), PAD, dtype=np.int64)
        lengths = np.empty(len(records), dtype=np.int64)
        answers = np.empty(len(records), dtype=np.int64)
        for i, r in enumerate(records):
            ids = [self.index[t] for t in r["input"]]
            tokens[i, : len(ids)] = ids
            lengths[i], answers[i] = len(ids), self.index[r["target"]]
        return Rows(tokens, lengths, answers)

    # ---------------------------------------------------------------- task state
    def set_train_hops(self, k: int) -> None:
        """Train on atomic facts and compositions of 2..k hops (the curriculum's stage)."""
        k = min(k, max(self.by_hop, default=1))
        if k == self.train_hops:
            return
        self.train_hops = k
        active = [self.by_hop[h] for h in sorted(self.by_hop) if h <= k]
        self.compositions = Rows.concat(active, self.width)
        self.pool = Rows.concat([self.atomic, *active], self.width)
        pick = np.random.default_rng([self.seed, 11, k]).permutation(len(self.pool))[: self.cfg.n_eval_train]
        self.tests["train"] = self.pool.take(np.sort(pick))

    @property
    def max_seq_len(self) -> int:
        return self.width

    def headline_metric(self) -> str:
        return "ood/accuracy" if self.cfg.setting == "systematic" else "hop_2/accuracy"

    def curriculum(self) -> CurriculumSettings | None:
        if not self.cfg.curriculum:
            return None
        return CurriculumSettings(
            max_hops=self.cfg.curriculum_max_hops or max(self.by_hop, default=2),
            threshold=self.cfg.curriculum_threshold,
            reset_optimizer=self.cfg.curriculum_reset_optimizer,
            patience=self.cfg.curriculum_patience,
        )

    # ---------------------------------------------------------------- batches
    @staticmethod
    def batch_of(rows: Rows) -> Batch:
        """Inputs trimmed to the longest query; the target sits at the last real token only."""
        width = int(rows.lengths.max())
        inputs = torch.from_numpy(rows.tokens[:, :width].copy())
        targets = torch.full_like(inputs, IGNORE)
        targets[torch.arange(len(rows)), torch.from_numpy(rows.lengths - 1)] = torch.from_numpy(rows.answers)
        return Batch(inputs, targets)

    def train_rows(self, step: int, batch_size: int) -> Rows:
        c = self.cfg
        n_atomic = round(c.atomic_fraction * batch_size) if len(self.compositions) else 0
        if n_atomic == 0:
            return self.pool.take(_epoch_rows(len(self.pool), batch_size, step, self.seed, 21))
        atomic = self.atomic.take(_epoch_rows(len(self.atomic), n_atomic, step, self.seed, 22))
        rest = batch_size - n_atomic
        comps = self.compositions.take(_epoch_rows(len(self.compositions), rest, step, self.seed, 23))
        return Rows.concat([atomic, comps], self.width)

    def train_batch(self, step: int, batch_size: int) -> Batch:
        return self.batch_of(self.train_rows(step, batch_size))

    # ---------------------------------------------------------------- evaluation
    @torch.no_grad()
    def predict(self, model: Transformer, rows: Rows, device: torch.device, n_loops: int = 0) -> np.ndarray:
        """Top-1 answer at the last input token of every row."""
        out = []
        for start in range(0, len(rows), self.cfg.eval_batch):
            part = rows.take(np.arange(start, min(start + self.cfg.eval_batch, len(rows))))
            batch = self.batch_of(part).to(device)
            logits = model(batch.inputs, n_loops=n_loops or self.cfg.eval_loops or None).logits
            last = torch.from_numpy(part.lengths - 1).to(device)
            out.append(logits[torch.arange(len(part), device=device), last].argmax(-1).cpu().numpy())
        return np.concatenate(out) if out else np.empty(0, dtype=np.int64)

    def accuracy(self, model: Transformer, rows: Rows, device: torch.device, n_loops: int = 0) -> float:
        if len(rows) == 0:
            return float("nan")
        return float((self.predict(model, rows, device, n_loops) == rows.answers).mean())

    def evaluate(self, model: Transformer, device: torch.device, full: bool = True) -> dict[str, float]:
        tests = {name: rows for name, rows in self.tests.items() if len(rows)}
        metrics: dict[str, float] = {f"{name}/n": len(rows) for name, rows in tests.items()}  # for intervals
        if not self.cfg.eval_loops_grid:
            return metrics | {f"{n}/accuracy": self.accuracy(model, r, device) for n, r in tests.items()}
        for name, rows in tests.items():
            by_r = {r: self.accuracy(model, rows, device, r) for r in self.cfg.eval_loops_grid}
            metrics |= {f"{name}/accuracy@r{r}": acc for r, acc in by_r.items()}
            metrics[f"{name}/accuracy"] = max(by_r.values())
        return metrics
