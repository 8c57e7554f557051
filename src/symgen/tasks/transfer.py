"""Reserved tokens in a model that was pretrained without them (SPEC A6 at CPU scale).

One vocabulary for both stages: `<pad> <bos> <sep> <eos>`, ordinary words `w0..`, and reserved
tokens `<unused0>..` that never occur in pretraining (as in Gemma or BERT vocabularies).

- stage `pretrain`: next-token prediction on "text" from a seeded sparse bigram chain over the
  ordinary words (each word has a few likely successors), mixed with problems over the first half
  of the words (`problem_fraction` of every batch): the model learns the task, the way a
  pretrained model knows what a logic problem looks like. Under weight decay the reserved rows,
  never a target and never an input, collapse as they do in real checkpoints.
- stage `finetune`: the same problems over symbols that never served as variables in
  pretraining: the `reserved` tokens, or `ordinary` words of the second half (known from the text
  only). Started from the pretrained weights (`train.init_from`), optionally with the reserved rows
  re-initialized first (`train.init_repair`), it shows how fast each kind of row learns to serve
  as a variable.

The problems (`problem`) are sequence reversal (copies symbols out of the context; `min_len`,
`max_len`) or Horn-clause problems with a chain of thought (SPEC A1, sizes in `horn`; the vocabulary
then also holds the Horn special tokens). The fine-tune's headline is the exact match on held-out
problems over its symbols.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from symgen.errors import UserError
from symgen.models.transformer import Transformer
from symgen.tasks import horn
from symgen.tasks.base import IGNORE, Batch, Task, step_rng
from symgen.tasks.horn_task import HornTask, HornTaskConfig, SymbolLayout
from symgen.tasks.reverse import SPECIALS, ReverseConfig, ReverseTask

STAGES = ("pretrain", "finetune")
GROUPS = ("ordinary", "reserved")
PROBLEMS = ("reverse", "horn")


@dataclass
class TransferHornConfig(HornTaskConfig):
    """Horn problems small enough that a CPU model learns them during pretraining (the defaults;
    `task.horn.*` overrides any of them). The symbols are the transfer task's words, so `n_seen`
    and `n_unseen` are unused."""

    min_rules: int = 2
    max_rules: int = 3
    min_facts: int = 1
    max_facts: int = 2
    max_body: int = 2
    max_depth: int = 2
    n_test: int = 100
    prompt_order: str = "facts_first"
    rule_labels: bool = True


@dataclass
class TransferConfig:
    name: str = "transfer"
    stage: str = "pretrain"  # pretrain | finetune
    n_ordinary: int = 200
    n_reserved: int = 100
    successors: int = 4  # pretrain: likely successors of every word in the bigram chain
    seq_len: int = 32  # pretrain: words per sequence
    problem: str = "reverse"  # the task pretraining mixes in and fine-tuning trains: reverse | horn
    problem_fraction: float = 0.5  # pretrain: share of every batch that is problems over first-half words
    symbols: str = "reserved"  # finetune: problems over ordinary words or reserved tokens
    n_symbols: int = 100  # finetune: how many of that group's tokens the problems use
    min_len: int = 4  # reverse: sequence lengths
    max_len: int = 8
    horn: TransferHornConfig = field(default_factory=TransferHornConfig)  # horn: problem sizes
    n_test: int = 500  # text sequences and reversals held out (Horn: horn.n_test problems)

    def validate(self) -> None:
        if self.stage not in STAGES:
            raise UserError(f"task.stage={self.stage!r}: allowed are {', '.join(STAGES)}")
        if self.symbols not in GROUPS:
            raise UserError(f"task.symbols={self.symbols!r}: allowed are {', '.join(GROUPS)}")
        if self.n_ordinary < 2 or self.n_reserved < 2 or self.n_test < 1 or self.seq_len < 2:
            raise UserError("task: n_ordinary, n_reserved and seq_len must be >= 2, n_test >= 1")
        if self.problem not in PROBLEMS:
            raise UserError(f"task.problem={self.problem!r}: allowed are {', '.join(PROBLEMS)}")
        if not 0.0 <= self.problem_fraction < 1.0:
            raise UserError(f"task.problem_fraction={self.problem_fraction} must be in [0, 1)")
        if not 1 <= self.successors <= self.n_ordinary:
            raise UserError(f"task.successors={self.successors} must be in 1..task.n_ordinary")
        group = self.n_ordinary // 2 if self.symbols == "ordinary" else self.n_reserved
        if not 2 <= self.n_symbols <= group:
            raise UserError(
                f"task.n_symbols={self.n_symbols} must be in 2..{group} (the {self.symbols} tokens)"
            )
        if not 1 <= self.min_len <= self.max_len:
            raise UserError(f"task.min_len={self.min_len} must be in 1..task.max_len={self.max_len}")
        try:
            self.horn.validate()
        except UserError as e:
            raise UserError(str(e).replace("task.", "task.horn.", 1)) from None


class TransferTask(Task):
    def __init__(self, cfg: TransferConfig, seed: int) -> None:
        self.cfg, self.seed = cfg, seed
        ordinary = [f"w{i}" for i in range(cfg.n_ordinary)]
        reserved = [f"<unused{i}>" for i in range(cfg.n_reserved)]
        self.vocab = SPECIALS + self._problem_tokens() + ordinary + reserved
        first = len(self.vocab) - cfg.n_ordinary - cfg.n_reserved
        self.ordinary = np.arange(first, first + cfg.n_ordinary)
        self.reserved = np.arange(first + cfg.n_ordinary, len(self.vocab))
        # the data of both stages is fixed by the seed, so a fine-tune sees the pretraining's chain
        rng = np.random.default_rng([seed, 31])
        self.successor = np.stack([rng.permutation(cfg.n_ordinary)[: cfg.successors] for _ in ordinary])
        self.successor_p = rng.dirichlet(np.ones(cfg.successors), cfg.n_ordinary)
        half = cfg.n_ordinary // 2
        self.pretrain_problems = self._problems(self.ordinary[:half], seed)
        group = self.ordinary[half:] if cfg.symbols == "ordinary" else self.reserved
        self.problems = self._problems(group[: cfg.n_symbols], seed + 1)
        self.text_test = self._text(np.random.default_rng([seed, 98]), cfg.n_test)

    def _problem_tokens(self) -> list[str]:
        """Tokens the problems need beyond SPECIALS and the symbols."""
        if self.cfg.problem == "reverse":
            return []
        labels = [horn.rule_label(i) for i in range(self.cfg.horn.max_rules)] * self.cfg.horn.rule_labels
        return [t for t in horn.SPECIAL_TOKENS if t not in SPECIALS] + labels

    def _problems(self, symbols: np.ndarray, seed: int) -> ReverseTask | HornTask:
        """The problem task over these symbol ids, sharing this task's vocabulary."""
        if self.cfg.problem == "reverse":
            cfg = ReverseConfig(min_len=self.cfg.min_len, max_len=self.cfg.max_len, n_test=self.cfg.n_test)
            return ReverseTask(cfg, seed, self.vocab, symbols)
        names = [self.vocab[i] for i in symbols]
        return HornTask(self.cfg.horn, seed, SymbolLayout(self.vocab, names, [], ("all_seen",)))

    def unseen_ids(self) -> list[int]:
        return self.reserved.tolist()

    def seen_ids(self) -> list[int]:
        return self.ordinary.tolist()

    @property
    def max_seq_len(self) -> int:
        return max(self.cfg.seq_len + 1, self.problems.max_seq_len, self.pretrain_problems.max_seq_len)

    def _text(self, rng: np.random.Generator, n: int) -> np.ndarray:
        words = np.empty((n, self.cfg.seq_len), dtype=np.int64)
        words[:, 0] = rng.integers(0, self.cfg.n_ordinary, n)
        for t in range(1, self.cfg.seq_len):
            prev = words[:, t - 1]
            u = rng.random(n)[:, None]
            choice = (u > self.successor_p[prev].cumsum(1)).sum(1).clip(max=self.cfg.successors - 1)
            words[:, t] = self.successor[prev, choice]
        seq = np.concatenate([np.full((n, 1), SPECIALS.index("<bos>")), words + self.ordinary[0]], axis=1)
        return seq

    def _text_batch(self, seq: np.ndarray) -> Batch:
        seq_t = torch.from_numpy(seq)
        return Batch(seq_t[:, :-1], seq_t[:, 1:].clone())

    def train_batch(self, step: int, batch_size: int) -> Batch:
        if self.cfg.stage == "finetune":
            return self.problems.train_batch(step, batch_size)
        n_problems = round(self.cfg.problem_fraction * batch_size)
        text = self._text_batch(self._text(step_rng(self.seed, step), batch_size - n_problems))
        if n_problems == 0:
            return text
        problems = self.pretrain_problems.train_batch(step, n_problems)
        width = max(text.inputs.shape[1], problems.inputs.shape[1])
        pad = lambda x, value: torch.nn.functional.pad(x, (0, width - x.shape[1]), value=value)  # noqa: E731
        return Batch(
            torch.cat([pad(text.inputs, 0), pad(problems.inputs, 0)]),
            torch.cat([pad(text.targets, IGNORE), pad(problems.targets, IGNORE)]),
        )

    def headline_metric(self) -> str:
        return "exact_match" if self.cfg.stage == "finetune" else "next_token_accuracy"

    @staticmethod
    def _evaluate_problems(
        task: ReverseTask | HornTask, model: Transformer, device: torch.device
    ) -> dict[str, float]:
        """The problem task's metrics, with the Horn task's one scenario prefix dropped."""
        metrics = task.evaluate(model, device)
        return {k.removeprefix("all_seen/"): v for k, v in metrics.items()}

    @torch.no_grad()
    def evaluate(self, model: Transformer, device: torch.device, full: bool = True) -> dict[str, float]:
        if self.cfg.stage == "finetune":
            return self._evaluate_problems(self.problems, model, device)
        batch = self._text_batch(self.text_test).to(device)
        pred = model(batch.inputs).logits.argmax(-1)
        scored = batch.targets != IGNORE
        text = float(((pred == batch.targets) & scored).sum() / scored.sum())
        problems = self._evaluate_problems(self.pretrain_problems, model, device)
        return {"next_token_accuracy": text} | {f"{self.cfg.problem}/{k}": v for k, v in problems.items()}
