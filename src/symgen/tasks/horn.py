"""Horn-clause reasoning problems with a forward-chaining chain of thought (SPEC Part A1).

Symbols
-------
The symbol universe is ``v0 .. v{N-1}`` with ``N = n_seen + n_unseen``. A seeded permutation of it
(a function of ``HornConfig.seed``) splits it into the *seen* pool (``n_seen`` symbols, the only
ones training problems use) and the disjoint *unseen* pool (``n_unseen`` symbols). Names carry no
hint of which pool a symbol belongs to. Every atom is one token.

Record (one JSON object per line)
---------------------------------
``rules``: list of ``{"body": [atoms], "head": atom}``; ``facts``: list of atoms; ``query``: atom;
``label``: bool (is the query entailed?); ``proof``: the reference chain of thought, a list of
``{"body", "head"}`` steps; ``depth``: int; ``scenario``: ``"train"``, ``"all_seen"``,
``"query_unseen"`` or ``"all_unseen"``.

- ``proof`` is forward chaining: at each step, the first rule in context order whose body atoms
  are all known and whose head is not yet known; it stops when the query is derived (True) or
  when no rule applies (False: the proof then holds every step taken until saturation).
- ``depth`` of a True problem is the derivation level of the query: the number of rounds of
  parallel forward chaining after which it is first known (the length of the longest chain of
  rules in its shallowest derivation). A False problem's ``depth`` is the same quantity computed
  with every atom that heads no rule granted as a fact: how far the query sits above the leaves,
  i.e. the depth it would have had if its blocked derivation were not blocked. The generator makes
  the two coincide for True problems, so both labels have the same depth distribution.

Token format
------------
Prompt (``encode_prompt``)::

    <bos> b1 b2 -> h . b3 -> h2 . ... facts: f1 f2 ... ? q <cot>

one ``body -> head .`` group per rule in context order, then ``facts:`` and the facts, then ``?``
and the query; the model starts writing after ``<cot>``.

Target (``encode_target``)::

    b1 b2 -> h . ... <ans> True <eos>

one ``body -> head .`` group per proof step, then ``<ans>``, ``True`` or ``False``, ``<eos>``.
``<pad>`` (id 0) pads batches. Special tokens: ``<pad> <bos> <eos> -> . facts: ? <cot> <ans> True
False``.

Sampling (how labels are kept free of surface shortcuts)
--------------------------------------------------------
A problem is built on a structure sampled independently of its label:

- chain **A** of ``d`` rules ending at the query (``d`` = the target depth), and chain **C** of
  ``d`` rules too (fewer only when ``max_rules < 2 d``) ending at another atom, both drawn from
  the same shape distribution, so that what the label changes (which chain fires) shows no
  difference in counts such as "rules whose body is all facts". Each chain has one *blocker*
  leaf, an atom used once, in a uniformly drawn rule of the chain (the first one when
  ``max_body = 2``) next to at least one fact leaf, so every path in the rule graph, and every
  "does this rule touch a fact" count, is the same whether the blocker is a fact or not;
- with probability ``p_decoy``, a decoy rule for the query whose body holds an atom at level
  ``>= d - 1`` and a never-known leaf, so it never fires but is as deep as chain A;
- distractor rules over facts, derived atoms and never-known leaves, with fresh heads;
- ``n_facts - 1`` shared fact leaves (any that no rule picks are facts used by no rule).

The label then only decides which blocker is a fact: True makes A's blocker a fact (A fires, C is
blocked), False makes C's blocker a fact (C fires, A is blocked). Both versions have the same
rules, the same number of facts, the same rule graph and the same depth. Rules, bodies and facts
are shuffled. Every problem is verified with the checker's fixpoint before it is kept.

The structure keeps the audit near chance when ``max_body >= 2``, ``min_facts >= 2`` and
``max_rules >= 2 * max_depth``. With one-atom bodies entailment *is* reachability in the rule
graph, so a graph-depth feature decides it; that is the task, not a shortcut.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, NamedTuple

from symgen.errors import UserError
from symgen.tasks import checker
from symgen.tasks.vocab import Vocab

PAD, BOS, EOS = "<pad>", "<bos>", "<eos>"
ARROW, DOT, FACTS, QMARK, COT, ANS = "->", ".", "facts:", "?", "<cot>", "<ans>"
TRUE, FALSE = "True", "False"
SPECIAL_TOKENS = [PAD, BOS, EOS, ARROW, DOT, FACTS, QMARK, COT, ANS, TRUE, FALSE]
_SPECIAL = frozenset(SPECIAL_TOKENS)

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
# symbols and vocabulary
# ---------------------------------------------------------------------------------------------
def symbol_pools(cfg: HornConfig) -> tuple[list[str], list[str]]:
    """(seen, unseen): disjoint random subsets of ``v0..v{N-1}``, each sorted by index."""
    n = cfg.n_symbols_total
    order = list(range(n))
    random.Random(f"symgen-horn:{cfg.seed}:symbols").shuffle(order)
    seen = sorted(order[: cfg.n_seen])
    unseen = sorted(order[cfg.n_seen :])
    return [f"v{i}" for i in seen], [f"v{i}" for i in unseen]


def vocab_groups(cfg: HornConfig, labels: bool = False) -> dict[str, list[str]]:
    seen, unseen = symbol_pools(cfg)
    special = list(SPECIAL_TOKENS) + [rule_label(i) for i in range(cfg.max_rules)] * labels
    return {"special": special, "seen": seen, "unseen": unseen}


def build_vocab(cfg: HornConfig, labels: bool = False) -> Vocab:
    """Special tokens (with `labels`, the rule labels too), then seen symbols, then unseen
    symbols; groups of the same names."""
    groups = vocab_groups(cfg, labels)
    return Vocab(groups["special"] + groups["seen"] + groups["unseen"], groups)


# ---------------------------------------------------------------------------------------------
# sampling
# ---------------------------------------------------------------------------------------------
class _Retry(Exception):
    pass


def _randint(rng: random.Random, a: int, b: int) -> int:
    """Uniform integer in [a, b] (faster than Random.randint)."""
    return a + int(rng.random() * (b - a + 1))


def _choice(rng: random.Random, seq: list) -> Any:
    return seq[int(rng.random() * len(seq))]


def _shuffle(rng: random.Random, x: list) -> None:
    rnd = rng.random
    for i in range(len(x) - 1, 0, -1):
        j = int(rnd() * (i + 1))
        x[i], x[j] = x[j], x[i]


class _Structure(NamedTuple):
    rules: list[tuple[list[int], int]]  # local atom ids
    common_facts: list[int]
    blocker_true: int  # a fact only in the True version (chain A's blocker)
    blocker_false: int  # a fact only in the False version (chain C's blocker)
    query: int
    n_atoms: int


class _Draft:
    """The structure of one problem while it is drawn: fresh local atom ids (past `max_atoms` the
    draw starts over), the shared fact leaves and the rules so far."""

    def __init__(self, rng: random.Random, max_body: int, max_atoms: int, n_common: int) -> None:
        self.rng, self.max_body, self.max_atoms = rng, max_body, max_atoms
        self.n_atoms = 0
        self.common = [self.new() for _ in range(n_common)]
        self.use_count = dict.fromkeys(self.common, 0)
        self.rules: list[tuple[list[int], int]] = []

    def new(self) -> int:
        self.n_atoms += 1
        if self.n_atoms > self.max_atoms:
            raise _Retry
        return self.n_atoms - 1

    def pick_fact(self, body: list[int]) -> int | None:
        """A shared fact leaf not in `body`, mostly one no rule uses yet, so the facts spread over rules."""
        cands = [f for f in self.common if f not in body]
        if not cands:
            return None
        fresh = [f for f in cands if self.use_count[f] == 0]
        f = _choice(self.rng, fresh if fresh and self.rng.random() < 0.7 else cands)
        self.use_count[f] += 1
        return f

    def chain(self, k: int, head: int, blocker: int) -> list[int]:
        """A chain of `k` rules ending at `head`, `blocker` in one of them; returns the chain's heads."""
        rng, mb = self.rng, self.max_body
        heads = [self.new() for _ in range(k - 1)] + [head]
        # the blocker shares its rule with at least one fact leaf when sizes allow it
        feasible = [j for j in range(k) if self.common and mb >= (2 if j == 0 else 3)]
        jb = _choice(rng, feasible) if feasible else 0
        for j in range(k):
            body: list[int] = [] if j == 0 else [heads[j - 1]]
            n_fixed = len(body)
            if j == jb:
                body.append(blocker)
                n_fixed += 1
                need_fact = bool(feasible)
            else:
                need_fact = j == 0
            lo_size = n_fixed + (1 if need_fact else 0)
            size = _randint(rng, min(lo_size, mb), mb)
            while len(body) < size:
                earlier = heads[: j - 1] if j >= 2 else []
                if need_fact or not earlier or rng.random() < 0.8:
                    f = self.pick_fact(body)
                    if f is None:
                        break
                    body.append(f)
                    need_fact = False
                else:
                    cand = [h for h in earlier if h not in body]
                    if not cand:
                        break
                    body.append(_choice(rng, cand))
            if not body:
                raise _Retry
            self.rules.append((body, heads[j]))
        return heads

    def decoy(self, query: int, deep: list[int]) -> None:
        """A rule for the query that never fires: a never-known leaf, next to one of the atoms of
        `deep` (none at depth 1), so it is as deep as the query's own chain."""
        b_block = self.new()
        body = [_choice(self.rng, deep), b_block] if deep else [b_block]
        size = _randint(self.rng, len(body), self.max_body)
        while len(body) < size:
            f = self.pick_fact(body)
            if f is None:
                break
            body.append(f)
        self.rules.append((body, query))

    def distractors(self, n: int, derived: list[int]) -> None:
        """`n` rules over facts, `derived` atoms and never-known leaves, with fresh heads (now and
        then the head of an earlier distractor)."""
        rng = self.rng
        dead: list[int] = []
        d_heads: list[int] = []
        for _ in range(n):
            size = _randint(rng, 1, self.max_body)
            body = []
            for _ in range(size):
                u = rng.random()
                if u < 0.45 and self.common:
                    a = self.pick_fact(body)
                elif u < 0.75:
                    cand = [x for x in derived + d_heads if x not in body]
                    a = _choice(rng, cand) if cand else None
                else:
                    cand = [x for x in dead if x not in body]
                    a = _choice(rng, cand) if cand and rng.random() < 0.3 else self.new()
                    if a not in dead:
                        dead.append(a)
                if a is not None:
                    body.append(a)
            if not body:
                a = self.new()
                dead.append(a)
                body.append(a)
            reuse = [h for h in d_heads if h not in body] if not any(b in d_heads for b in body) else []
            head = _choice(rng, reuse) if reuse and rng.random() < 0.2 else self.new()
            if head not in d_heads:
                d_heads.append(head)
            self.rules.append((body, head))


def _sample_structure(rng: random.Random, cfg: HornConfig, depth: int, max_atoms: int) -> _Structure:
    """Label-free structure of a problem whose query sits at ``depth``; see the module docstring."""
    mb = cfg.max_body
    n_facts = _randint(rng, cfg.min_facts, cfg.max_facts)
    d_a = depth
    min_rules, max_rules = cfg.min_rules + cfg.extra_rules(depth), cfg.max_rules + cfg.extra_rules(depth)
    d_c = min(d_a, max_rules - d_a)
    decoy = rng.random() < cfg.p_decoy and (mb >= 2 or d_a == 1)
    lo = max(min_rules, d_a + d_c + decoy)
    if lo > max_rules:
        decoy = False
        lo = max(min_rules, d_a + d_c)
    n_rules = _randint(rng, lo, max_rules)

    draft = _Draft(rng, mb, max_atoms, n_facts - 1)
    query = draft.new()
    c_head = draft.new()
    a_block, c_block = draft.new(), draft.new()
    heads_a = draft.chain(d_a, query, a_block)
    heads_c = draft.chain(d_c, c_head, c_block)
    if decoy:
        # atoms at level >= d - 1: the last but one of chain A, and chain C's from that level on
        deep = ([heads_a[d_a - 2]] + [heads_c[i] for i in range(d_a - 2, d_c)]) if d_a > 1 else []
        draft.decoy(query, deep)
    draft.distractors(n_rules - len(draft.rules), heads_a + heads_c)
    return _Structure(draft.rules, draft.common, a_block, c_block, query, draft.n_atoms)


def _cot(rules: list[dict[str, Any]], facts: list[str], query: str) -> list[dict[str, Any]]:
    known = set(facts)
    steps: list[dict[str, Any]] = []
    while query not in known:
        for r in rules:
            if r["head"] not in known and all(b in known for b in r["body"]):
                steps.append({"body": list(r["body"]), "head": r["head"]})
                known.add(r["head"])
                break
        else:
            break
    return steps


def _sample_record(
    rng: random.Random,
    cfg: HornConfig,
    label: bool,
    depth: int,
    pool: list[str],
    query_pool: list[str] | None,
) -> dict[str, Any]:
    """One problem over ``pool``; with ``query_pool`` the query symbol is drawn from it instead."""
    s = _sample_structure(rng, cfg, depth, max_atoms=len(pool))
    symbols = rng.sample(pool, s.n_atoms)
    if query_pool is not None:
        symbols[s.query] = _choice(rng, query_pool)
    name = symbols.__getitem__
    facts_local = s.common_facts + [s.blocker_true if label else s.blocker_false]
    rules = []
    for body, head in s.rules:
        body = [name(b) for b in body]
        _shuffle(rng, body)
        rules.append({"body": body, "head": name(head)})
    _shuffle(rng, rules)
    facts = [name(f) for f in facts_local]
    _shuffle(rng, facts)
    query = name(s.query)

    # guarantee the label and the depth with the independent checker's fixpoint
    level = checker.levels(rules, facts).get(query)
    if (level is not None) != label or (label and level != depth):
        raise _Retry
    if checker.optimistic_depth(rules, facts, query) != depth:
        raise _Retry
    return {
        "rules": rules,
        "facts": facts,
        "query": query,
        "label": label,
        "proof": _cot(rules, facts, query),
        "depth": depth,
        "scenario": "",
    }


def canonical_key(record: dict[str, Any]) -> tuple:
    """Order-free identity of a problem (rules, facts, query)."""
    rules = tuple(sorted((tuple(sorted(r["body"])), r["head"]) for r in record["rules"]))
    return rules, tuple(sorted(record["facts"])), record["query"]


def _generate(
    cfg: HornConfig,
    n: int,
    rng: random.Random,
    scenario: str,
    pool: list[str],
    query_pool: list[str] | None,
    exclude: set,
) -> list[dict[str, Any]]:
    big_d = cfg.max_depth
    out: list[dict[str, Any]] = []
    keys: set = set()
    for i in range(n):
        label = i % 2 == 0
        depth = 1 + (i // 2) % big_d
        attempts = 0
        while True:
            attempts += 1
            if attempts > 2000:
                raise UserError(
                    f"could not generate {n} distinct {scenario} problems; "
                    "raise n_seen/n_unseen or the problem sizes, or lower n_train/n_test"
                )
            try:
                rec = _sample_record(rng, cfg, label, depth, pool, query_pool)
            except _Retry:
                continue
            key = canonical_key(rec)
            if key in keys or key in exclude:
                continue
            keys.add(key)
            rec["scenario"] = scenario
            out.append(rec)
            break
    _shuffle(rng, out)
    return out


def generate_splits(
    cfg: HornConfig,
    pools: tuple[list[str], list[str]] | None = None,
    scenarios: tuple[str, ...] = SCENARIOS,
    test_cfg: HornConfig | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """``train`` and ``test_<scenario>`` for each of `scenarios`: a pure function of its arguments.
    `pools` (seen, unseen) replaces `symbol_pools(cfg)` when another task supplies the symbols;
    `test_cfg` draws the test problems with other sizes (deeper ones, say), still never a training
    problem."""
    cfg.validate()
    test_cfg = (test_cfg or cfg).validate()
    seen, unseen = pools or symbol_pools(cfg)

    def rng(name: str) -> random.Random:
        return random.Random(f"symgen-horn:{cfg.seed}:{name}")

    train = _generate(cfg, cfg.n_train, rng("train"), "train", seen, None, set())
    train_keys = {canonical_key(r) for r in train}
    # scenario -> (symbols of the problem, symbols of the query)
    sources = {"all_seen": (seen, None), "query_unseen": (seen, unseen), "all_unseen": (unseen, None)}
    splits = {"train": train}
    for s in scenarios:
        pool, query_pool = sources[s]
        splits[f"test_{s}"] = _generate(test_cfg, test_cfg.n_test, rng(s), s, pool, query_pool, train_keys)
    return splits


# ---------------------------------------------------------------------------------------------
# encoding, parsing, scoring
# ---------------------------------------------------------------------------------------------
def rule_label(index: int) -> str:
    """The token that names the rule at `index` (context order) when rules are labelled."""
    return f"<r{index}>"


def is_rule_label(token: str) -> bool:
    return token.startswith("<r") and token.endswith(">") and token[2:-1].isdigit()


def rule_index(record: dict[str, Any], step: dict[str, Any]) -> int:
    """Position in context order of the rule a proof step fires (the first equal one)."""
    for i, r in enumerate(record["rules"]):
        if r["head"] == step["head"] and list(r["body"]) == list(step["body"]):
            return i
    raise ValueError(f"proof step {step} is not a rule of the problem")


def encode_prompt(record: dict[str, Any], labels: bool = False) -> list[str]:
    """``<bos> body -> head . ... facts: f ... ? q <cot>``; with `labels` every rule starts with
    its label, ``<r0> body -> head . <r1> ...``."""
    toks = [BOS]
    for i, r in enumerate(record["rules"]):
        if labels:
            toks.append(rule_label(i))
        toks.extend(r["body"])
        toks.append(ARROW)
        toks.append(r["head"])
        toks.append(DOT)
    toks.append(FACTS)
    toks.extend(record["facts"])
    toks.append(QMARK)
    toks.append(record["query"])
    toks.append(COT)
    return toks


def encode_target(record: dict[str, Any], labels: bool = False) -> list[str]:
    """``body -> head . ... <ans> True|False <eos>``; with `labels` every step starts with the
    label of the rule it fires, so the rest of the step is a copy of the span after that label."""
    toks: list[str] = []
    for s in record["proof"]:
        if labels:
            toks.append(rule_label(rule_index(record, s)))
        toks.extend(s["body"])
        toks.append(ARROW)
        toks.append(s["head"])
        toks.append(DOT)
    toks.append(ANS)
    toks.append(TRUE if record["label"] else FALSE)
    toks.append(EOS)
    return toks


TARGET_ROLES = ("rule", "first_atom", "next_atom", "head", "answer", "syntax")


def target_roles(record: dict[str, Any], labels: bool = False) -> list[str]:
    """The role of every token of `encode_target(record, labels)`: the rule label (which rule
    fires, when rules are labelled), the first body atom of a step (which rule fires, otherwise),
    a later body atom, the head (the rule's conclusion, copied after ``->``), the
    ``True``/``False`` answer, or syntax (``-> . <ans> <eos>``)."""
    roles: list[str] = []
    for s in record["proof"]:
        roles += ["rule"] * labels + ["first_atom"] + ["next_atom"] * (len(s["body"]) - 1)
        roles += ["syntax", "head", "syntax"]
    return roles + ["syntax", "answer", "syntax"]


class ParsedOutput(NamedTuple):
    proof: list[dict[str, Any]] | None  # None when the steps are malformed or the answer is missing
    answer: bool | None  # None when there is no well-formed answer


def _generated_part(tokens: list[str]) -> list[str]:
    tokens = list(tokens)
    if COT in tokens:
        tokens = tokens[len(tokens) - tokens[::-1].index(COT) :]
    if EOS in tokens:
        tokens = tokens[: tokens.index(EOS) + 1]
    return tokens


def parse_output(tokens: list[str]) -> ParsedOutput:
    """Parse generated tokens (anything after the last ``<cot>``; stops at the first ``<eos>``).
    Rule labels are skipped: a proof is judged by the rules it writes out."""
    toks = [t for t in _generated_part(tokens) if not is_rule_label(t)]
    if toks and toks[-1] == EOS:
        toks = toks[:-1]
    if ANS not in toks:
        return ParsedOutput(None, None)
    cut = toks.index(ANS)
    steps_toks, rest = toks[:cut], toks[cut + 1 :]
    answer = None
    if len(rest) == 1 and rest[0] in (TRUE, FALSE):
        answer = rest[0] == TRUE
    proof: list[dict[str, Any]] | None = []
    group: list[str] = []
    for t in steps_toks:
        if t != DOT:
            group.append(t)
            continue
        if (
            len(group) >= 3
            and group[-2] == ARROW
            and group[-1] not in _SPECIAL
            and not any(g in _SPECIAL for g in group[:-2])
        ):
            proof.append({"body": group[:-2], "head": group[-1]})
            group = []
        else:
            proof = None
            break
    if proof is not None and group:
        proof = None
    return ParsedOutput(proof, answer)


def score_output(record: dict[str, Any], tokens: list[str], labels: bool = False) -> dict[str, bool]:
    """``answer_correct``, ``exact_match`` (the generated part equals ``encode_target``) and
    ``proof_valid`` (the generated proof checks out against the problem, even if it differs from
    the reference, and the answer is correct)."""
    parsed = parse_output(tokens)
    answer_correct = parsed.answer is not None and parsed.answer == record["label"]
    exact = _generated_part(tokens) == encode_target(record, labels)
    proof_valid = bool(
        answer_correct
        and parsed.proof is not None
        and checker.check_proof(
            record["rules"], record["facts"], parsed.proof, record["query"], parsed.answer
        )
        is None
    )
    return {"answer_correct": answer_correct, "exact_match": exact, "proof_valid": proof_valid}


# ---------------------------------------------------------------------------------------------
# files
# ---------------------------------------------------------------------------------------------
def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    path = Path(path)
    try:
        lines = path.read_text().splitlines()
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror}") from None
    out = []
    for i, line in enumerate(lines, 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise UserError(f"{path} line {i}: not valid JSON ({e.msg})") from None
    return out


def _write_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    with path.open("w") as fh:
        for r in records:
            fh.write(json.dumps(r, separators=(",", ":")))
            fh.write("\n")


def split_summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(records)
    hist = {
        lab: dict(sorted(Counter(r["depth"] for r in records if r["label"] == (lab == "true")).items()))
        for lab in ("true", "false")
    }
    return {
        "n": n,
        "frac_true": (sum(r["label"] for r in records) / n) if n else None,
        "depth_hist": hist,
        "mean_prompt_tokens": (sum(len(encode_prompt(r)) for r in records) / n) if n else None,
        "mean_target_tokens": (sum(len(encode_target(r)) for r in records) / n) if n else None,
    }


def write_dataset(cfg: HornConfig, out_dir: str | Path) -> dict[str, Any]:
    """Write the four splits and ``vocab.json`` to ``out_dir``; return a summary."""
    from symgen.tasks.horn_audit import shortcut_audit

    out_dir = Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"cannot create output directory {out_dir}: {e.strerror}") from None
    t0 = time.perf_counter()
    splits = generate_splits(cfg)
    gen_s = time.perf_counter() - t0
    for name, recs in splits.items():
        for i, r in enumerate(recs, 1):
            err = checker.check_record(r)
            if err:  # a generator bug, not a user error
                raise RuntimeError(f"generated {name} record {i} fails the checker: {err}")
        _write_jsonl(out_dir / f"{name}.jsonl", recs)
    (out_dir / "vocab.json").write_text(json.dumps(vocab_groups(cfg), indent=1) + "\n")
    audit = None
    if splits["train"] and splits["test_all_seen"]:
        audit = shortcut_audit(splits["train"], splits["test_all_seen"])
    return {
        "config": cfg.to_dict(),
        "generate_seconds": round(gen_s, 3),
        "vocab_size": len(SPECIAL_TOKENS) + cfg.n_symbols_total,
        "splits": {name: split_summary(recs) for name, recs in splits.items()},
        "audit_accuracy": audit,
    }


__all__ = [
    "HornConfig",
    "ParsedOutput",
    "SCENARIOS",
    "SPECIAL_TOKENS",
    "SPLITS",
    "build_vocab",
    "canonical_key",
    "encode_prompt",
    "encode_target",
    "generate_splits",
    "parse_output",
    "read_jsonl",
    "score_output",
    "symbol_pools",
    "vocab_groups",
    "write_dataset",
]
