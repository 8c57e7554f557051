"""Multi-query associative recall: the first check that a model learns to use its context.

    <bos> k1 v1 k2 v2 … kn vn <sep> q1 a1 q2 a2 … qm am

Keys are distinct symbols, values any symbols; each query is one of the keys and its answer the
value paired with it. Loss and accuracy are on the answers only. A sequence is an exact match when
every answer is right. Held-out sequences are drawn from their own stream and never trained on.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from symgen.errors import UserError
from symgen.models.transformer import Transformer
from symgen.tasks.base import IGNORE, Batch, Task, step_rng

SPECIALS = ["<pad>", "<bos>", "<sep>"]


@dataclass
class RecallConfig:
    name: str = "recall"
    n_symbols: int = 200
    n_pairs: int = 8
    n_queries: int = 4
    n_test: int = 1000

    def validate(self) -> None:
        if self.n_symbols < 2 or self.n_pairs < 1 or self.n_queries < 1 or self.n_test < 1:
            raise UserError("task: n_symbols >= 2, n_pairs, n_queries and n_test >= 1 are needed")
        if self.n_pairs > self.n_symbols:
            raise UserError(f"task.n_pairs={self.n_pairs} needs at least that many symbols (n_symbols)")
        if self.n_queries > self.n_pairs:
            raise UserError(f"task.n_queries={self.n_queries} must be <= task.n_pairs={self.n_pairs}")


class RecallTask(Task):
    def __init__(self, cfg: RecallConfig, seed: int) -> None:
        self.cfg, self.seed = cfg, seed
        self.vocab = SPECIALS + [f"x{i}" for i in range(cfg.n_symbols)]
        self.test = self._sample(np.random.default_rng([seed, 99]), cfg.n_test)
        self._test_keys = {row.tobytes() for row in self.test}

    @property
    def max_seq_len(self) -> int:
        return 2 + 2 * self.cfg.n_pairs + 2 * self.cfg.n_queries

    def _sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        c, offset = self.cfg, len(SPECIALS)
        keys = np.argsort(rng.random((n, c.n_symbols)), axis=1)[:, : c.n_pairs]
        values = rng.integers(0, c.n_symbols, (n, c.n_pairs))
        pick = np.argsort(rng.random((n, c.n_pairs)), axis=1)[:, : c.n_queries]
        rows = np.arange(n)[:, None]
        seq = np.empty((n, self.max_seq_len), dtype=np.int64)
        seq[:, 0], seq[:, 1 + 2 * c.n_pairs] = 1, 2
        seq[:, 1 : 1 + 2 * c.n_pairs : 2] = keys + offset
        seq[:, 2 : 2 + 2 * c.n_pairs : 2] = values + offset
        start = 2 + 2 * c.n_pairs
        seq[:, start::2] = keys[rows, pick] + offset
        seq[:, start + 1 :: 2] = values[rows, pick] + offset
        return seq

    def _batch(self, seq: np.ndarray) -> Batch:
        seq_t = torch.from_numpy(seq)
        targets = seq_t[:, 1:].clone()
        answer_at = torch.zeros_like(targets, dtype=torch.bool)
        answer_at[:, 2 + 2 * self.cfg.n_pairs :: 2] = True  # predicting a_i from the query q_i
        return Batch(seq_t[:, :-1], targets.masked_fill(~answer_at, IGNORE))

    def train_batch(self, step: int, batch_size: int) -> Batch:
        seq = self._sample(step_rng(self.seed, step), batch_size)
        held_out = np.array([row.tobytes() in self._test_keys for row in seq])
        if held_out.any():  # astronomically rare; keep the guarantee anyway
            seq = seq[~held_out]
        return self._batch(seq)

    @torch.no_grad()
    def evaluate(self, model: Transformer, device: torch.device) -> dict[str, float]:
        correct_tokens, exact = 0, 0
        for start in range(0, len(self.test), 256):
            batch = self._batch(self.test[start : start + 256]).to(device)
            pred = model(batch.inputs).logits.argmax(-1)
            scored = batch.targets != IGNORE
            right = (pred == batch.targets) | ~scored
            correct_tokens += int((right & scored).sum())
            exact += int(right.all(dim=1).sum())
        n = len(self.test)
        return {"exact_match": exact / n, "answer_accuracy": correct_tokens / (n * self.cfg.n_queries)}
