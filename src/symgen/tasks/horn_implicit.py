"""Horn problems answered without a chain of thought (SPEC Part C.1).

The same problems, symbol pools, scenarios and checker as the Horn task; the sequence is the prompt
(ending in ``<cot>``) followed by the answer, ``True`` or ``False``, and the loss is on the answer
alone (with ``head_labels``, a change of task, also on sub-goal labels: whether each rule's head
atom, and a query placed after the rules, is entailed). Whatever reasoning happens, happens inside
the forward pass — over the iterations of a looped model, or the layers of a vanilla one.

Training problems have proof depths 1..D (``max_depth``), labels balanced at every depth; with
``curriculum`` training starts at depth 1 and adds depth k + 1 once held-out all_seen accuracy at
depth k passes the threshold (paper B's depth curriculum, `symgen.training.curriculum`). Test
problems of every scenario have depths 1..``test_max_depth`` (default 2·D, depths above D never
trained), again balanced per depth and label; a deeper problem holds two more rules per extra
level (its two chains grow), so the number of distractor rules stays that of training.

Evaluation reads the answer at the last prompt token: accuracy per scenario and depth at every
iteration count of ``eval_loops`` (`{scenario}/depth{d}/accuracy@r{r}`; the model's own R is the
plain `{scenario}/depth{d}/accuracy`), and for looped models the same under adaptive halting
(KL + entropy, `symgen.models.recurrence`): accuracy and mean iterations per depth.

`validation_problems()` draws, per scenario, as many fresh problems as the test set holds, from the
test generator (same depths, sizes and symbols) under their own seed stream and never a test problem:
the data on which an analysis chooses the inference iteration count r, so the test set never does.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass, field
from typing import Any

import torch

from symgen.errors import UserError
from symgen.models.recurrence import HaltingRule
from symgen.models.transformer import Transformer
from symgen.tasks import horn, horn_generator
from symgen.tasks.base import IGNORE, Batch, CurriculumSettings, pad_batch
from symgen.tasks.checker import levels
from symgen.tasks.horn_task import HornTask, HornTaskConfig


@dataclass
class ImplicitHornTaskConfig(HornTaskConfig):
    name: str = "horn-implicit"
    test_max_depth: int = 0  # 0: 2 × max_depth
    eval_loops: list[int] = field(default_factory=list)  # iteration counts of the accuracy grid
    halting: bool = False  # also evaluate under adaptive halting, up to max(eval_loops) iterations
    curriculum: bool = False  # train on depth 1 first; add depth k+1 when held-out depth k passes
    curriculum_threshold: float = 0.9  # all_seen accuracy at depth k (at the model's own R)
    curriculum_patience: int = 0  # end the run after this many evaluations without a stage passed
    # sub-goal labels (a change of task, beyond SPEC C.1): every rule's head token, and the query token
    # when it follows the rules (prompt_order=query_last), is also trained to say whether its atom is
    # entailed, True or False; evaluation still reads only the answer
    head_labels: bool = False

    def validate(self) -> None:
        super().validate()
        if self.rule_labels:
            raise UserError("task.rule_labels has no use without a chain of thought; leave it false")
        if self.test_max_depth and self.test_max_depth < self.max_depth:
            raise UserError(f"task.test_max_depth={self.test_max_depth} must be >= task.max_depth")
        if any(r < 1 for r in self.eval_loops):
            raise UserError(f"task.eval_loops={self.eval_loops}: iteration counts must be >= 1")
        if not 0.5 < self.curriculum_threshold <= 1.0:
            raise UserError(f"task.curriculum_threshold={self.curriculum_threshold} must be in (0.5, 1]")
        if self.curriculum_patience < 0:
            raise UserError(f"task.curriculum_patience={self.curriculum_patience} must be >= 0")

    @property
    def deepest_test(self) -> int:
        return self.test_max_depth or 2 * self.max_depth

    @property
    def extra_test_rules(self) -> int:
        """Rules the deepest test problem holds beyond training's (the test generator's growth)."""
        return self.test_config(seed=0).extra_rules(self.deepest_test)

    def test_config(self, seed: int) -> horn.HornConfig:
        """The generator of the test problems: deeper, and only those deeper than training hold the
        extra rules their chains need, so every test depth has training's number of distractors."""
        return dataclasses.replace(
            self.horn_config(seed), max_depth=self.deepest_test, grow_beyond=self.max_depth
        )

    def max_prompt_tokens(self) -> int:
        """The longest prompt: a test problem's, with its extra rules."""
        deepest = dataclasses.replace(self, max_rules=self.max_rules + self.extra_test_rules)
        return HornTaskConfig.max_prompt_tokens(deepest)


def share(right: torch.Tensor) -> float:
    """The fraction of True, exact in float64: in float32, 36 of 40 reads 0.89999998 and fails a 0.9 bar."""
    return right.sum().item() / right.numel()


def answer_positions(targets: torch.Tensor) -> torch.Tensor:
    """(B,) the last scored position of each row: the answer (head labels, if any, come before it)."""
    scored = (targets != IGNORE).long()
    return scored.shape[1] - 1 - scored.flip(-1).argmax(-1)


class ImplicitHornTask(HornTask):
    cfg: ImplicitHornTaskConfig

    def __init__(self, cfg: ImplicitHornTaskConfig, seed: int) -> None:
        super().__init__(cfg, seed)
        self.answer_ids = {True: self._id[horn.TRUE], False: self._id[horn.FALSE]}
        self.set_train_hops(1 if cfg.curriculum else cfg.max_depth)

    def test_generator(self) -> horn.HornConfig:
        return self.cfg.test_config(self.seed)

    def validation_problems(self, scenarios: tuple[str, ...] = ()) -> dict[str, list[dict[str, Any]]]:
        """Per scenario (default: every test scenario), n_test fresh problems of the test generator,
        balanced per depth and label, from a seed stream of their own; none is a test problem (nor a
        problem of a fixed training set). The same problems at every call."""
        gen = self.test_generator()
        held = [*self.train_records, *(r for records in self.test.values() for r in records)]
        exclude = {horn_generator.canonical_key(r) for r in held}
        seen, unseen = self.seen_pool, self.unseen_pool
        # scenario -> (symbols of the problem, symbols of the query), as the test set draws them
        sources = {"all_seen": (seen, None), "query_unseen": (seen, unseen), "all_unseen": (unseen, None)}
        out = {}
        for s in scenarios or tuple(self.test):
            rng = random.Random(f"symgen-horn:{gen.seed}:validation:{s}")
            pool, query_pool = sources[s]
            out[s] = horn_generator._generate(gen, gen.n_test, rng, s, pool, query_pool, exclude)
        return out

    def set_train_hops(self, k: int) -> None:
        """Train on proof depths 1..k (the depth curriculum's stage), balanced per depth and label."""
        self.train_hops = k
        self.hcfg = dataclasses.replace(self.cfg.horn_config(self.seed), max_depth=k)

    def curriculum(self) -> CurriculumSettings | None:
        if not self.cfg.curriculum:
            return None
        return CurriculumSettings(
            max_hops=self.cfg.max_depth,
            threshold=self.cfg.curriculum_threshold,
            start=1,
            metric="eval/all_seen/depth{k}/accuracy",
            patience=self.cfg.curriculum_patience,
        )

    @property
    def max_seq_len(self) -> int:
        return self.cfg.max_prompt_tokens() + 1

    def batch(self, records: list[dict[str, Any]]) -> Batch:
        """Inputs: the prompt; target: the answer at its last token, IGNORE elsewhere (with
        `head_labels`, also whether the atom is entailed at each rule's head token, and at the query
        token when the query follows the rules)."""
        # the tokens that introduce an atom to label: a rule's `->`, and `?` when the query sees the rules
        asks = {horn.ARROW, horn.QMARK} if self.cfg.prompt_order == "query_last" else {horn.ARROW}
        inputs, targets = [], []
        for r in records:
            tokens = self.prompt_tokens(r)
            target = [IGNORE] * (len(tokens) - 1) + [self.answer_ids[bool(r["label"])]]
            if self.cfg.head_labels:
                derivable = levels(r["rules"], r["facts"])
                for j in range(1, len(tokens)):
                    if tokens[j - 1] in asks:
                        target[j] = self.answer_ids[tokens[j] in derivable]
            inputs.append(self.encode(tokens))
            targets.append(target)
        return pad_batch(inputs, targets, self.pad_id)

    # ---------------------------------------------------------------- evaluation
    def headline_metric(self) -> str:
        return "all_seen/accuracy"

    def loops_grid(self, model: Transformer) -> list[int]:
        return sorted(set(self.cfg.eval_loops) | {model.cfg.n_loops})

    @torch.no_grad()
    def answers(
        self, model: Transformer, records: list[dict[str, Any]], device: torch.device, **kwargs: Any
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Whether each answer is right, and (with halting) the iterations each used."""
        right, used = [], []
        for start in range(0, len(records), self.cfg.eval_batch_size):
            batch = self.batch(records[start : start + self.cfg.eval_batch_size]).to(device)
            at = answer_positions(batch.targets)
            rows = torch.arange(len(at), device=device)
            out = model(batch.inputs, answer_positions=at, **kwargs)
            predicted = out.logits[rows, at].argmax(-1)
            right.append((predicted == batch.targets[rows, at]).cpu())
            if out.iterations is not None:
                used.append(out.iterations.cpu())
        return torch.cat(right), (torch.cat(used) if used else None)

    @torch.no_grad()
    def evaluate(self, model: Transformer, device: torch.device, full: bool = True) -> dict[str, float]:
        """Accuracy per scenario and depth at every iteration count of the grid and under halting;
        `full=False` (evaluations during training): at the model's own R only."""
        metrics: dict[str, float] = {}
        own = model.cfg.n_loops
        grid = self.loops_grid(model) if full else [own]
        for scenario, records in self.test.items():
            depths = torch.tensor([r["depth"] for r in records])
            for d in sorted(set(depths.tolist())):  # the problems each accuracy reads: its interval's n
                metrics[f"{scenario}/depth{d}/n"] = int((depths == d).sum())
            for r in grid:
                right, _ = self.answers(model, records, device, n_loops=r)
                suffix = "" if r == own else f"@r{r}"
                metrics[f"{scenario}/accuracy{suffix}"] = share(right)
                for d in sorted(set(depths.tolist())):
                    metrics[f"{scenario}/depth{d}/accuracy{suffix}"] = share(right[depths == d])
            if self.cfg.halting and full:
                right, used = self.answers(model, records, device, n_loops=max(grid), halting=HaltingRule())
                metrics[f"{scenario}/halting/accuracy"] = share(right)
                for d in sorted(set(depths.tolist())):
                    picked = depths == d
                    metrics[f"{scenario}/depth{d}/halting/accuracy"] = share(right[picked])
                    metrics[f"{scenario}/depth{d}/halting/iterations"] = float(used[picked].float().mean())
        return metrics
