"""Sequence reversal: `<bos> x1 … xn <sep> xn … x1 <eos>`, n drawn from [min_len, max_len].

Every output token is copied from a context position that depends on the sequence's length, so
the model has to find the separator and count back. Loss and accuracy are on the output (after
`<sep>`, including `<eos>`); a sequence is an exact match when all of it is right, which under
teacher forcing equals greedy decoding being right.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from symgen.errors import UserError
from symgen.models.transformer import Transformer
from symgen.tasks.base import IGNORE, Batch, Task, step_rng, teacher_forced_scores

SPECIALS = ["<pad>", "<bos>", "<sep>", "<eos>"]
PAD, BOS, SEP, EOS = range(4)


@dataclass
class ReverseConfig:
    name: str = "reverse"
    n_symbols: int = 200
    min_len: int = 4
    max_len: int = 12
    n_test: int = 1000

    def validate(self) -> None:
        if self.n_symbols < 2 or self.n_test < 1:
            raise UserError("task.n_symbols must be >= 2 and task.n_test >= 1")
        if not 1 <= self.min_len <= self.max_len:
            raise UserError(f"task.min_len={self.min_len} must be in 1..task.max_len={self.max_len}")


class ReverseTask(Task):
    """`vocab` and `symbol_ids` let another task reverse sequences of its own tokens (the vocabulary
    must start with SPECIALS); by default the symbols are x0..x{n_symbols-1}."""

    def __init__(
        self,
        cfg: ReverseConfig,
        seed: int,
        vocab: list[str] | None = None,
        symbol_ids: np.ndarray | None = None,
    ) -> None:
        self.cfg, self.seed = cfg, seed
        self.vocab = vocab or SPECIALS + [f"x{i}" for i in range(cfg.n_symbols)]
        if self.vocab[: len(SPECIALS)] != SPECIALS:
            raise ValueError(f"the vocabulary must start with {SPECIALS}")
        self.symbol_ids = np.arange(len(SPECIALS), len(self.vocab)) if symbol_ids is None else symbol_ids
        self.test = self._sample(np.random.default_rng([seed, 99]), cfg.n_test)
        self._test_keys = {row.tobytes() for row in self.test}

    @property
    def max_seq_len(self) -> int:
        return 2 * self.cfg.max_len + 2

    def _sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """Rows of length 2 * max_len + 3, right-padded with PAD."""
        c = self.cfg
        lengths = rng.integers(c.min_len, c.max_len + 1, n)
        symbols = self.symbol_ids[rng.integers(0, len(self.symbol_ids), (n, c.max_len))]
        seq = np.full((n, 2 * c.max_len + 3), PAD, dtype=np.int64)
        seq[:, 0] = BOS
        for i, (length, row) in enumerate(zip(lengths, symbols, strict=True)):
            x = row[:length]
            seq[i, 1 : length + 1] = x
            seq[i, length + 1] = SEP
            seq[i, length + 2 : 2 * length + 2] = x[::-1]
            seq[i, 2 * length + 2] = EOS
        return seq

    def _batch(self, seq: np.ndarray) -> Batch:
        seq_t = torch.from_numpy(seq)
        inputs, targets = seq_t[:, :-1], seq_t[:, 1:].clone()
        after_sep = (inputs == SEP).long().cumsum(1) > 0  # predicting the output and <eos>
        return Batch(inputs, targets.masked_fill(~after_sep | (targets == PAD), IGNORE))

    def train_batch(self, step: int, batch_size: int) -> Batch:
        seq = self._sample(step_rng(self.seed, step), batch_size)
        return self._batch(seq[[row.tobytes() not in self._test_keys for row in seq]])

    def evaluate(self, model: Transformer, device: torch.device, full: bool = True) -> dict[str, float]:
        chunks = (self._batch(self.test[i : i + 256]) for i in range(0, len(self.test), 256))
        return teacher_forced_scores(model, chunks, device)
