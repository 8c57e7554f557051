"""The Horn-clause task's tokens, settings (`HornConfig`) and symbols (SPEC Part A1).

The problems are drawn in `symgen.tasks.horn_generator`, written as token sequences and scored in
`symgen.tasks.horn_text`, and written to files in `symgen.tasks.horn_io`.

Symbols
-------
The symbol universe is ``v0 .. v{N-1}`` with ``N = n_seen + n_unseen``. A seeded permutation of it
(a function of ``HornConfig.seed``) splits it into the *seen* pool (``n_seen`` symbols, the only
ones training problems use) and the disjoint *unseen* pool (``n_unseen`` symbols). Names carry no
hint of which pool a symbol belongs to. Every atom is one token.

Tokens
------
Special tokens: ``<pad> <bos> <eos> -> . facts: ? <cot> <ans> True False``; ``<pad>`` (id 0) pads
batches. When rules are labelled, ``<r0> <r1> ...`` name the rules of a problem in context order.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, fields
from typing import Any

from symgen.errors import UserError
from symgen.tasks.vocab import Vocab

PAD, BOS, EOS = "<pad>", "<bos>", "<eos>"
ARROW, DOT, FACTS, QMARK, COT, ANS = "->", ".", "facts:", "?", "<cot>", "<ans>"
TRUE, FALSE = "True", "False"
SPECIAL_TOKENS = [PAD, BOS, EOS, ARROW, DOT, FACTS, QMARK, COT, ANS, TRUE, FALSE]

SCENARIOS = ("all_seen", "query_unseen", "all_unseen")
SPLITS = ("train",) + tuple(f"test_{s}" for s in SCENARIOS)


# ---------------------------------------------------------------------------------------------
# configuration
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class HornConfig:
    """Sizes of the symbol pools, of the problems and of the splits.

    ``n_rules`` of a problem is drawn from ``[min_rules, max_rules]`` (raised to what its chains
    need), ``n_facts`` uniformly from ``[min_facts, max_facts]``, body sizes from ``[1, max_body]``
    and the target depth uniformly from ``[1, max_depth]`` (balanced per label).
    ``n_test`` is per test scenario.
    """

    n_seen: int = 200
    n_unseen: int = 100
    min_rules: int = 4
    max_rules: int = 8
    min_facts: int = 2
    max_facts: int = 4
    max_body: int = 3
    max_depth: int = 3
    n_train: int = 20_000
    n_test: int = 500
    seed: int = 0
    p_decoy: float = 0.5
    # 0: off; k: a problem deeper than k holds two more rules per level beyond k (its proof chain
    # and its distractor chain each grow by one), so it keeps the distractors of depth k's problems
    grow_beyond: int = 0

    @classmethod
    def quick(cls, **overrides: Any) -> HornConfig:
        """CPU-scale defaults (D = 3)."""
        return cls(**overrides)

    @classmethod
    def paper(cls, **overrides: Any) -> HornConfig:
        """GPU-scale defaults (D = 6, larger problems, 1000 seen symbols)."""
        base = dict(
            n_seen=1000,
            n_unseen=100,
            min_rules=8,
            max_rules=16,
            min_facts=3,
            max_facts=8,
            max_body=3,
            max_depth=6,
            n_train=200_000,
            n_test=1000,
        )
        base.update(overrides)
        return cls(**base)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> HornConfig:
        known = {f.name: f for f in fields(cls)}
        unknown = sorted(set(d) - set(known))
        if unknown:
            raise UserError(f"unknown Horn task setting(s) {unknown}; known: {sorted(known)}")
        for k, v in d.items():
            is_float = known[k].type in ("float", float)
            ok = isinstance(v, (int, float)) if is_float else isinstance(v, int)
            if isinstance(v, bool) or not ok:
                what = "a number" if is_float else "an integer"
                raise UserError(f"Horn task setting {k!r} must be {what}, got {v!r}")
        cfg = cls(**d)
        cfg.validate()
        return cfg

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def n_symbols_total(self) -> int:
        return self.n_seen + self.n_unseen

    def extra_rules(self, depth: int) -> int:
        """Rules a problem of `depth` holds beyond [min_rules, max_rules] (`grow_beyond`)."""
        return 2 * max(0, depth - self.grow_beyond) if self.grow_beyond else 0

    def min_atoms(self) -> int:
        """Fewest distinct atoms a problem of the largest depth can have."""
        d = self.max_depth
        return d + 1 + 2 + max(0, self.min_facts - 1) + max(0, self.min_rules + self.extra_rules(d) - d - 1)

    def validate(self) -> HornConfig:
        def need(ok: bool, msg: str) -> None:
            if not ok:
                raise UserError(f"Horn task config: {msg}")

        for name in ("n_seen", "n_unseen", "min_rules", "max_rules", "min_facts", "max_facts"):
            need(getattr(self, name) >= 1, f"{name} must be at least 1")
        need(self.max_body >= 1, "max_body must be at least 1")
        need(self.max_depth >= 1, "max_depth must be at least 1")
        need(self.n_train >= 0 and self.n_test >= 0, "n_train and n_test must not be negative")
        need(self.max_rules >= self.min_rules, "max_rules must be >= min_rules")
        need(self.max_facts >= self.min_facts, "max_facts must be >= min_facts")
        need(self.grow_beyond >= 0, "grow_beyond must not be negative")
        need(
            self.max_rules + self.extra_rules(self.max_depth) >= self.max_depth + 1,
            f"max_rules={self.max_rules} cannot hold a depth-{self.max_depth} chain plus one distractor "
            f"chain; raise max_rules to at least {self.max_depth + 1} or lower max_depth",
        )
        need(0.0 <= self.p_decoy <= 1.0, "p_decoy must be in [0, 1]")
        m = self.min_atoms()
        need(self.n_seen >= m, f"n_seen={self.n_seen} is too small: problems need at least {m} symbols")
        need(self.n_unseen >= m, f"n_unseen={self.n_unseen} is too small: problems need at least {m} symbols")
        return self


# ---------------------------------------------------------------------------------------------
# symbols, rule labels and vocabulary
# ---------------------------------------------------------------------------------------------
def symbol_pools(cfg: HornConfig) -> tuple[list[str], list[str]]:
    """(seen, unseen): disjoint random subsets of ``v0..v{N-1}``, each sorted by index."""
    n = cfg.n_symbols_total
    order = list(range(n))
    random.Random(f"symgen-horn:{cfg.seed}:symbols").shuffle(order)
    seen = sorted(order[: cfg.n_seen])
    unseen = sorted(order[cfg.n_seen :])
    return [f"v{i}" for i in seen], [f"v{i}" for i in unseen]


def rule_label(index: int) -> str:
    """The token that names the rule at `index` (context order) when rules are labelled."""
    return f"<r{index}>"


def is_rule_label(token: str) -> bool:
    return token.startswith("<r") and token.endswith(">") and token[2:-1].isdigit()


def vocab_groups(cfg: HornConfig, labels: bool = False) -> dict[str, list[str]]:
    seen, unseen = symbol_pools(cfg)
    special = list(SPECIAL_TOKENS) + [rule_label(i) for i in range(cfg.max_rules)] * labels
    return {"special": special, "seen": seen, "unseen": unseen}


def build_vocab(cfg: HornConfig, labels: bool = False) -> Vocab:
    """Special tokens (with `labels`, the rule labels too), then seen symbols, then unseen
    symbols; groups of the same names."""
    groups = vocab_groups(cfg, labels)
    return Vocab(groups["special"] + groups["seen"] + groups["unseen"], groups)


__all__ = [
    "HornConfig",
    "SCENARIOS",
    "SPECIAL_TOKENS",
    "SPLITS",
    "build_vocab",
    "symbol_pools",
    "vocab_groups",
]
