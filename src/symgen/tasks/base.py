"""What the trainer needs from a task: deterministic training batches and an evaluation.

A batch is a pure function of (seed, step, task state), so a resumed or data-parallel run sees
exactly the batches an uninterrupted single-process run would.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import Tensor

from symgen.errors import UserError
from symgen.models.transformer import Transformer

IGNORE = -100  # target value of positions that carry no loss


@dataclass
class Batch:
    """Right-padded rows: under causal attention padding at the end never reaches a real
    position, so training needs no attention mask."""

    inputs: Tensor  # (B, T) token ids
    targets: Tensor  # (B, T) next-token targets, IGNORE where no loss

    def shard(self, rank: int, world: int) -> Batch:
        """This rank's rows of a global batch (data parallel)."""
        return Batch(self.inputs[rank::world], self.targets[rank::world])

    def to(self, device: torch.device) -> Batch:
        return Batch(self.inputs.to(device), self.targets.to(device))


def generator_config(cls: type, settings: Any, **extra: Any) -> Any:
    """The generator's config (dataclass `cls`) from a task's settings: every field the two share,
    plus `extra` (the seed, say), so a task config never lists its generator's fields twice."""
    names = {f.name for f in dataclasses.fields(cls)} - set(extra)
    return cls(**{n: getattr(settings, n) for n in names if hasattr(settings, n)}, **extra)


def step_rng(seed: int, step: int, stream: int = 0) -> np.random.Generator:
    """The random stream of one training step: independent of every other step."""
    return np.random.default_rng([seed, stream, step])


def epoch_indices(n: int, batch_size: int, step: int, seed: int) -> np.ndarray:
    """Rows of a fixed dataset for one step: a fresh permutation every epoch, no row repeated
    within an epoch (a batch straddling two epochs takes the end of one and the start of the next)."""
    start = step * batch_size
    out = []
    while len(out) < batch_size:
        epoch, offset = divmod(start + len(out), n)
        perm = np.random.default_rng([seed, 7, epoch]).permutation(n)
        out.extend(perm[offset : offset + batch_size - len(out)].tolist())
    return np.asarray(out)


@dataclass(frozen=True)
class CurriculumSettings:
    """The depth curriculum a task asks for (paper B, §6); training builds the hook from it
    (`symgen.training.curriculum`). The stage k is the deepest hop count (or proof depth) in
    training; it grows by one when `metric` (formatted with k) reaches `threshold`."""

    max_hops: int  # the deepest stage
    threshold: float = 0.95
    start: int = 2
    reset_optimizer: bool = False  # rebuild AdamW and restart its warm-up at every stage
    metric: str = "eval/hop_{k}/accuracy"
    patience: int = 0  # end the run after this many evaluations without a stage passed (0: never)


class Task(ABC):
    """A task samples and tokenizes problems and scores a model; it knows nothing of training.

    Optional abilities have explicit defaults here, so training never asks a task what it has:
    symbols that never occur in training (`unseen_ids`), a padding token (`pad_id`), a depth
    curriculum (`curriculum` and `set_train_hops`)."""

    vocab: list[str]
    pad_id: int | None = None  # the padding token, when the task pads its batches with one

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    @property
    @abstractmethod
    def max_seq_len(self) -> int: ...

    @abstractmethod
    def train_batch(self, step: int, batch_size: int) -> Batch: ...

    @abstractmethod
    def evaluate(self, model: Transformer, device: torch.device, full: bool = True) -> dict[str, float]:
        """Held-out metrics, names without prefix (the trainer adds `eval/`). `full=False` asks for
        a cheaper subset during training (`train.light_evals`); a task without one ignores it."""

    def headline_metric(self) -> str:
        """The evaluation metric shown in the progress bar."""
        return "exact_match"

    def seen_ids(self) -> list[int]:
        """Ids of the symbols that occur in training (empty: the task has no symbol pools)."""
        return []

    def unseen_ids(self) -> list[int]:
        """Ids of the symbols that never occur in training (empty: the task has none)."""
        return []

    def curriculum(self) -> CurriculumSettings | None:
        """The depth curriculum this task trains under, if any."""
        return None

    def set_train_hops(self, k: int) -> None:
        """Train on stages up to k (a task with a curriculum overrides this)."""
        raise UserError(f"{type(self).__name__} has no depth curriculum")


@torch.no_grad()
def teacher_forced_scores(
    model: Transformer, batches: Iterable[Batch], device: torch.device
) -> dict[str, float]:
    """Exact match (every scored token is the argmax, so greedy decoding writes the same) and token
    accuracy of a model under teacher forcing, over all rows of `batches`."""
    right_tokens = scored_tokens = exact = rows = 0
    for batch in batches:
        batch = batch.to(device)
        scored = batch.targets != IGNORE
        right = (model(batch.inputs).logits.argmax(-1) == batch.targets) | ~scored
        right_tokens += int((right & scored).sum())
        scored_tokens += int(scored.sum())
        exact += int(right.all(dim=1).sum())
        rows += batch.inputs.shape[0]
    return {"exact_match": exact / rows, "token_accuracy": right_tokens / max(scored_tokens, 1)}


def pad_batch(rows: list[list[int]], targets: list[list[int]], pad_id: int) -> Batch:
    """Right-pad token rows (and their targets with IGNORE) into one batch."""
    width = max(len(r) for r in rows)
    inputs = np.full((len(rows), width), pad_id, dtype=np.int64)
    tgt = np.full((len(rows), width), IGNORE, dtype=np.int64)
    for i, (r, t) in enumerate(zip(rows, targets, strict=True)):  # numpy rows: no tensor per row
        inputs[i, : len(r)] = r
        tgt[i, : len(t)] = t
    return Batch(torch.from_numpy(inputs), torch.from_numpy(tgt))
