"""Drawing Horn-clause problems with a forward-chaining chain of thought, and their splits
(SPEC Part A1): a pure function of a `HornConfig`.

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

import random
from typing import Any, NamedTuple

from symgen.errors import UserError
from symgen.tasks import checker
from symgen.tasks.horn import SCENARIOS, HornConfig, symbol_pools


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


def membership_record(
    record: dict[str, Any], label: bool, pool: list[str], rng: random.Random
) -> dict[str, Any]:
    """A problem of depth 0 made from `record`'s facts: no rules and an empty proof; the query is one
    of the facts (True) or a symbol of `pool` that is not (False). It rewards, from the first step,
    the match of a symbol to its other occurrences in the context, which every proof step needs."""
    facts = list(record["facts"])
    if label:
        query = _choice(rng, facts)
    else:
        query = _choice(rng, pool)
        while query in facts:
            query = _choice(rng, pool)
    return {
        "rules": [],
        "facts": facts,
        "query": query,
        "label": label,
        "proof": [],
        "depth": 0,
        "scenario": record["scenario"],
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


__all__ = ["canonical_key", "generate_splits"]
