"""Horn-clause problems with a chain of thought, as a training task (SPEC Part A1).

A training sequence is ``prompt + target`` (see `symgen.tasks.horn_text`); the loss is on the target
only: the forward-chaining steps, ``<ans>``, the answer and ``<eos>``. The vocabulary is the special
tokens, then the seen symbols, then the unseen symbols: unseen rows exist in the model (and are
decayed, frozen or reset like any other) but never occur in a training batch.

Training problems are either a fixed set of ``n_train`` problems (epochs over a seeded
permutation) or, with ``n_train = 0``, fresh problems every step, a pure function of
(seed, step); either way no training problem equals an ``all_seen`` test problem.

Evaluation decodes greedily with the KV cache on ``n_test`` problems per scenario and scores the
outputs with the checker (`horn_text.score_output`): answer accuracy, exact match and proof validity,
per scenario (``all_seen/exact_match``, ...) and per scenario and depth
(``all_seen/depth2/exact_match``, ...); also the teacher-forced token accuracy on the target
(``all_seen/token_accuracy``) and per role of the target token (``all_seen/token_accuracy/head``:
which rule fires, the atoms copied after it, the head copied after ``->``, the answer, syntax).
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from symgen.errors import UserError
from symgen.models.generate import generate
from symgen.models.transformer import Transformer
from symgen.tasks import horn, horn_generator, horn_matching, horn_text
from symgen.tasks.base import IGNORE, Batch, Task, epoch_indices, generator_config, pad_batch

PROMPT_ORDERS = ("rules_first", "facts_first", "query_last")
SCORES = ("answer_accuracy", "exact_match", "proof_valid")
LIGHT_STRIDE = 4  # a light evaluation (train.light_evals) reads every 4th test problem
_SCORE_KEYS = {
    "answer_accuracy": "answer_correct",
    "exact_match": "exact_match",
    "proof_valid": "proof_valid",
}


@dataclass
class HornTaskConfig:
    name: str = "horn"
    n_seen: int = 200
    n_unseen: int = 100
    min_rules: int = 4
    max_rules: int = 8
    min_facts: int = 2
    max_facts: int = 4
    max_body: int = 3
    max_depth: int = 3
    p_decoy: float = 0.5
    n_train: int = 0  # 0: fresh problems every step, drawn from (seed, step)
    n_test: int = 200  # per test scenario
    eval_batch_size: int = 200
    max_new_tokens: int = 0  # 0: the longest possible target
    # rules_first: horn_text.encode_prompt; facts_first: facts and query first;
    # query_last: facts, rules, query
    prompt_order: str = "rules_first"
    rule_labels: bool = False  # a label token starts every rule, and every proof step names its rule
    label_at_end: bool = False  # with rule_labels: the label also closes its rule, `<r0> b -> h <r0> .`
    grow_steps: int = 0  # size curriculum: problems grow from depth 1, 2 rules to full size over these steps
    # share of every training batch that are membership problems (no rules, proof empty: is the query
    # one of the facts?), until step `membership_until` (0: throughout); training data only
    membership_share: float = 0.0
    membership_until: int = 0

    def validate(self) -> None:
        own_name = type(self).__dataclass_fields__["name"].default
        if self.name != own_name:
            raise UserError(f"task.name={self.name!r} must be {own_name!r} for this config")
        if self.n_test < 1:
            raise UserError(f"task.n_test={self.n_test} must be at least 1")
        if self.eval_batch_size < 1:
            raise UserError(f"task.eval_batch_size={self.eval_batch_size} must be at least 1")
        if self.max_new_tokens < 0:
            raise UserError(f"task.max_new_tokens={self.max_new_tokens} must be >= 0 (0: derived)")
        if self.prompt_order not in PROMPT_ORDERS:
            allowed = ", ".join(PROMPT_ORDERS)
            raise UserError(f"task.prompt_order={self.prompt_order!r}: allowed are {allowed}")
        if self.n_train < 0:
            raise UserError(f"task.n_train={self.n_train} must be >= 0 (0: fresh problems every step)")
        if self.grow_steps < 0:
            raise UserError(f"task.grow_steps={self.grow_steps} must be >= 0 (0: full size throughout)")
        if self.label_at_end and not self.rule_labels:
            raise UserError("task.label_at_end needs task.rule_labels=true")
        if not 0.0 <= self.membership_share < 1.0:
            raise UserError(f"task.membership_share={self.membership_share} must be in [0, 1)")
        if self.membership_until < 0:
            raise UserError(f"task.membership_until={self.membership_until} must be >= 0 (0: throughout)")
        if self.membership_share and self.n_train:
            raise UserError("task.membership_share needs fresh problems every step (task.n_train=0)")
        if self.grow_steps and self.n_train:
            raise UserError("task.grow_steps needs fresh problems every step (task.n_train=0)")
        try:
            self.horn_config(0).validate()
        except UserError as e:
            raise UserError(f"task: {e}") from None

    def horn_config(self, seed: int) -> horn.HornConfig:
        return generator_config(horn.HornConfig, self, seed=seed)

    def sizes_at(self, step: int) -> dict[str, int]:
        """Problem sizes of the size curriculum at a training step: depth, rules and facts grow
        linearly from (1, 2, min_facts) to the configured maxima over `grow_steps`; full size after."""
        f = 1.0 if step >= self.grow_steps else step / self.grow_steps
        depth = 1 + int(f * (self.max_depth - 1) + 0.5)
        rules = max(depth + 1, 2 + int(f * (self.max_rules - 2) + 0.5))
        return {
            "max_depth": depth,
            "max_rules": rules,
            "min_rules": min(self.min_rules, rules),
            "max_facts": self.min_facts + int(f * (self.max_facts - self.min_facts) + 0.5),
        }

    def max_target_tokens(self) -> int:
        """A proof fires each rule at most once: steps of `[label] body -> head .`, then `<ans> X <eos>`."""
        return self.max_rules * (self.max_body + 3 + self.rule_labels) + 3

    def max_prompt_tokens(self) -> int:
        per_rule = self.max_body + 3 + self.rule_labels * (1 + self.label_at_end)
        return 1 + self.max_rules * per_rule + 1 + self.max_facts + 4


@dataclass(frozen=True)
class SymbolLayout:
    """The symbols of a Horn task that another task hosts (the transfer task's fine-tunes): the
    host's vocabulary, which holds the Horn special tokens and rule labels, the symbols of training
    problems (`seen`), those of the unseen scenarios, and which test scenarios to keep."""

    vocab: list[str]
    seen: list[str]
    unseen: list[str]
    scenarios: tuple[str, ...] = horn.SCENARIOS


def _repeat_labels(tokens: list[str]) -> list[str]:
    """`<r0> b -> h .` -> `<r0> b -> h <r0> .` for every labelled rule."""
    out: list[str] = []
    label = None
    for t in tokens:
        if horn.is_rule_label(t):
            label = t
        elif t == horn.DOT and label is not None:
            out.append(label)
            label = None
        out.append(t)
    return out


MATCHING_PROBLEMS = 64  # prompts read for the attention-matching diagnostic, per scenario


class HornTask(Task):
    def __init__(self, cfg: HornTaskConfig, seed: int, layout: SymbolLayout | None = None) -> None:
        cfg.validate()
        self.cfg, self.seed = cfg, seed
        self.hcfg = cfg.horn_config(seed)
        if layout is None:
            seen, unseen = horn.symbol_pools(self.hcfg)
            layout = SymbolLayout(horn.build_vocab(self.hcfg, self.labels).all_tokens, seen, unseen)
        self.vocab = layout.vocab
        self._id = {t: i for i, t in enumerate(self.vocab)}
        self.pad_id, self.eos_id = self._id[horn.PAD], self._id[horn.EOS]
        self.seen_pool, self.unseen_pool = layout.seen, layout.unseen
        pools = (layout.seen, layout.unseen)
        splits = horn_generator.generate_splits(self.hcfg, pools, layout.scenarios, self.test_generator())
        self.train_records = splits["train"]
        self.test = {s: splits[f"test_{s}"] for s in layout.scenarios}
        self._test_keys = {horn_generator.canonical_key(r) for r in self.test["all_seen"]}
        self.max_new_tokens = cfg.max_new_tokens or cfg.max_target_tokens()

    def test_generator(self) -> horn.HornConfig:
        """The sizes of the test problems: those of training."""
        return self.hcfg

    # ---------------------------------------------------------------- vocabulary
    @property
    def labels(self) -> bool:
        """Whether rules and proof steps carry rule labels (`task.rule_labels`)."""
        return self.cfg.rule_labels

    @property
    def max_seq_len(self) -> int:
        return self.cfg.max_prompt_tokens() + self.cfg.max_target_tokens()

    def unseen_ids(self) -> list[int]:
        """Rows of symbols that never occur in training (collapse diagnostics, interventions)."""
        return self.encode(self.unseen_pool)

    def seen_ids(self) -> list[int]:
        return self.encode(self.seen_pool)

    def prompt_tokens(self, record: dict[str, Any]) -> list[str]:
        """`horn_text.encode_prompt`, or with `facts_first` the same tokens with the facts and the query
        moved before the rules: `<bos> facts: f ... ? q . b1 b2 -> h . ... <cot>`. Under causal
        attention every rule then sees which atoms are known; the chain of thought is unchanged.
        `query_last` keeps the facts first and moves the query to the end, `... -> h . ? q <cot>`:
        the query's own position then sees every rule's head (what an answer without a chain of
        thought must match it against). With `label_at_end` each rule's label is repeated before its
        closing `.`: the position that has read the whole rule then holds its name, which is what a
        proof step starts with."""
        tokens = horn_text.encode_prompt(record, self.labels)
        if self.labels and self.cfg.label_at_end:
            tokens = _repeat_labels(tokens)
        if self.cfg.prompt_order == "rules_first":
            return tokens
        cut = tokens.index(horn.FACTS)
        if self.cfg.prompt_order == "query_last":
            ask = tokens.index(horn.QMARK)
            return [tokens[0]] + tokens[cut:ask] + [horn.DOT] + tokens[1:cut] + tokens[ask:]
        return [tokens[0]] + tokens[cut:-1] + [horn.DOT] + tokens[1:cut] + [tokens[-1]]

    def encode(self, tokens: list[str]) -> list[int]:
        return [self._id[t] for t in tokens]

    # ---------------------------------------------------------------- training
    def train_problems(self, step: int, batch_size: int) -> list[dict[str, Any]]:
        if self.cfg.n_train > 0:
            idx = epoch_indices(len(self.train_records), batch_size, step, self.seed)
            return [self.train_records[i] for i in idx]
        rng = random.Random(f"symgen-horn-task:{self.seed}:train:{step}")
        hcfg = self.hcfg
        if step < self.cfg.grow_steps:
            hcfg = dataclasses.replace(hcfg, **self.cfg.sizes_at(step))
        records = horn_generator._generate(
            hcfg, batch_size, rng, "train", self.seen_pool, None, self._test_keys
        )
        share, until = self.cfg.membership_share, self.cfg.membership_until
        if share and (until == 0 or step < until):
            n = round(share * batch_size)
            records[:n] = [
                horn_generator.membership_record(r, i % 2 == 0, self.seen_pool, rng)
                for i, r in enumerate(records[:n])
            ]
        return records

    def sequences(self, records: list[dict[str, Any]]) -> tuple[list[list[int]], list[int]]:
        """Token ids of prompt + target, and the length of each prompt."""
        rows, prompt_lengths = [], []
        for r in records:
            prompt = self.encode(self.prompt_tokens(r))
            rows.append(prompt + self.encode(horn_text.encode_target(r, self.labels)))
            prompt_lengths.append(len(prompt))
        return rows, prompt_lengths

    def batch(self, records: list[dict[str, Any]]) -> Batch:
        """Inputs = sequence[:-1]; targets = sequence[1:] on the target part, IGNORE elsewhere."""
        rows, prompt_lengths = self.sequences(records)
        inputs, targets = [], []
        for row, n_prompt in zip(rows, prompt_lengths, strict=True):
            inputs.append(row[:-1])
            # position i predicts row[i + 1]; scored when row[i + 1] belongs to the target
            targets.append([IGNORE] * (n_prompt - 1) + row[n_prompt:])
        return pad_batch(inputs, targets, self.pad_id)

    def train_batch(self, step: int, batch_size: int) -> Batch:
        return self.batch(self.train_problems(step, batch_size))

    # ---------------------------------------------------------------- evaluation
    def headline_metric(self) -> str:
        return "all_seen/exact_match"

    @torch.no_grad()
    def generate(self, model: Transformer, records: list[dict[str, Any]]) -> list[list[str]]:
        outputs: list[list[str]] = []
        for start in range(0, len(records), self.cfg.eval_batch_size):
            chunk = records[start : start + self.cfg.eval_batch_size]
            prompts = [self.encode(self.prompt_tokens(r)) for r in chunk]
            new = generate(model, prompts, self.max_new_tokens, self.eos_id, self.pad_id)
            outputs.extend([self.vocab[i] for i in row] for row in new)
        return outputs

    def atom_sources(self, records: list[dict[str, Any]], outputs: list[list[str]]) -> dict[str, float]:
        """Where the generated atoms come from: `atoms_in_prompt`, the fraction that occur in the
        problem (copied from the context), and `atoms_seen_pool`, the fraction that are seen
        symbols (on unseen problems: symbols the model replaced the unseen ones with)."""
        seen, symbols = set(self.seen_pool), set(self.seen_pool) | set(self.unseen_pool)
        n_atoms = in_prompt = from_seen = 0
        for record, output in zip(records, outputs, strict=True):
            context = set(horn_text.encode_prompt(record))
            for token in output:
                if token in symbols:
                    n_atoms += 1
                    in_prompt += token in context
                    from_seen += token in seen
        n = max(n_atoms, 1)
        return {"atoms_in_prompt": in_prompt / n, "atoms_seen_pool": from_seen / n}

    @torch.no_grad()
    def token_accuracy(
        self, model: Transformer, records: list[dict[str, Any]], device: torch.device
    ) -> dict[str, float]:
        """Teacher-forced accuracy of the next-token argmax over the target tokens, overall
        (``token_accuracy``: more sensitive than exact match while a model is still learning) and
        per role of the token (``token_accuracy/head``, see `horn_text.target_roles`): where a model
        that is still learning goes wrong."""
        right: dict[str, int] = {role: 0 for role in horn_text.TARGET_ROLES}
        total = dict(right)
        for start in range(0, len(records), self.cfg.eval_batch_size):
            chunk = records[start : start + self.cfg.eval_batch_size]
            batch = self.batch(chunk).to(device)
            hits = model(batch.inputs).logits.argmax(-1) == batch.targets
            for row, record in enumerate(chunk):
                columns = (batch.targets[row] != IGNORE).nonzero().flatten().tolist()
                for column, role in zip(columns, horn_text.target_roles(record, self.labels), strict=True):
                    right[role] += int(hits[row, column])
                    total[role] += 1
        out = {"token_accuracy": sum(right.values()) / max(sum(total.values()), 1)}
        return out | {f"token_accuracy/{r}": right[r] / total[r] for r in horn_text.TARGET_ROLES if total[r]}

    def matching(self, model: Transformer, records: list[dict[str, Any]], device: torch.device) -> dict:
        """`horn_matching.same_symbol_shares` on the scenario's first `MATCHING_PROBLEMS` prompts."""
        if not isinstance(model, Transformer) or not model.cfg.causal:  # a stand-in model has no heads
            return {}
        chunk = records[:MATCHING_PROBLEMS]
        ids = self.batch(chunk).inputs.to(device)
        lengths = [len(self.prompt_tokens(r)) for r in chunk]
        symbols = horn_matching.symbol_mask(model.cfg.vocab_size, self.seen_ids() + self.unseen_ids())
        return horn_matching.same_symbol_shares(model, ids, lengths, symbols)

    @torch.no_grad()
    def evaluate(self, model: Transformer, device: torch.device, full: bool = True) -> dict[str, float]:
        """`full=False` (`train.light_evals`) reads every `LIGHT_STRIDE`-th problem of each scenario:
        curves during training at a quarter of the cost, the run's last evaluation on all."""
        metrics: dict[str, float] = {}
        for scenario, all_records in self.test.items():
            records = all_records if full else all_records[::LIGHT_STRIDE]
            accuracy = self.token_accuracy(model, records, device)
            metrics |= {f"{scenario}/{k}": v for k, v in accuracy.items()}
            metrics[f"{scenario}/n"] = len(records)  # problems read: every rate's n
            outputs = self.generate(model, records)
            scores = [
                horn_text.score_output(r, out, self.labels) for r, out in zip(records, outputs, strict=True)
            ]
            for name in SCORES:
                metrics[f"{scenario}/{name}"] = float(np.mean([s[_SCORE_KEYS[name]] for s in scores]))
            metrics |= {f"{scenario}/{k}": v for k, v in self.atom_sources(records, outputs).items()}
            metrics |= {f"{scenario}/{k}": v for k, v in self.matching(model, records, device).items()}
            for depth in sorted({r["depth"] for r in records}):
                picked = [s for r, s in zip(records, scores, strict=True) if r["depth"] == depth]
                for name in SCORES:
                    value = float(np.mean([s[_SCORE_KEYS[name]] for s in picked]))
                    metrics[f"{scenario}/depth{depth}/{name}"] = value
        return metrics
