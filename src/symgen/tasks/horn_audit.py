"""Shortcut audit for Horn-clause data: can surface features alone predict the label?

A logistic regression (numpy, full-batch gradient descent on standardized features) is fit on the
training records' surface features and scored on held-out records. Near 0.5 means the features
below give the label away no better than chance; SPEC A1 asks for at most 0.60.

Features (a problem's label, proof and depth are never read): number of rules, facts, prompt
tokens and distinct atoms; mean body size; whether the query heads a rule, how many rules it heads,
the fewest body atoms among them and how many of them touch a fact; whether the query occurs in a
body; the longest and the shortest path from any fact to the query in the rule graph (edges from
each body atom to the head, conjunction ignored; -1 when unreachable); the deepest such path to
any atom; the fraction of body-atom occurrences that are facts; the number of rules whose body is
all facts; body atoms that are neither facts nor heads; facts used by no rule; atoms that head two
or more rules.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Sequence
from typing import Any

import numpy as np

from symgen.errors import UserError

FEATURE_NAMES = (
    "n_rules",
    "n_facts",
    "n_tokens",
    "n_atoms",
    "mean_body",
    "query_is_head",
    "n_query_rules",
    "min_query_body",
    "n_query_rules_with_fact",
    "query_in_body",
    "longest_path_to_query",
    "shortest_path_to_query",
    "max_path_any_atom",
    "frac_body_facts",
    "n_rules_all_facts",
    "n_dead_leaves",
    "n_unused_facts",
    "n_multi_head_atoms",
)


def _longest_paths(edges: list[tuple[str, str]], facts: set[str], cap: int) -> dict[str, int]:
    dist = dict.fromkeys(facts, 0)
    for _ in range(cap):
        changed = False
        for b, h in edges:
            if b in dist and dist[b] + 1 > dist.get(h, -1) and dist[b] + 1 <= cap:
                dist[h] = dist[b] + 1
                changed = True
        if not changed:
            break
    return dist


def _shortest_paths(edges: list[tuple[str, str]], facts: set[str]) -> dict[str, int]:
    out_edges: dict[str, list[str]] = defaultdict(list)
    for b, h in edges:
        out_edges[b].append(h)
    dist = dict.fromkeys(facts, 0)
    q = deque(facts)
    while q:
        a = q.popleft()
        for h in out_edges[a]:
            if h not in dist:
                dist[h] = dist[a] + 1
                q.append(h)
    return dist


def surface_features(record: dict[str, Any]) -> list[float]:
    rules = [(list(r["body"]), r["head"]) for r in record["rules"]]
    facts = set(record["facts"])
    q = record["query"]
    heads: dict[str, int] = defaultdict(int)
    for _, h in rules:
        heads[h] += 1
    atoms = facts | {q} | {h for _, h in rules} | {b for body, _ in rules for b in body}
    body_occ = [b for body, _ in rules for b in body]
    body_atoms = set(body_occ)
    qrules = [body for body, h in rules if h == q]
    edges = [(b, h) for body, h in rules for b in body]
    longest = _longest_paths(edges, facts, cap=len(atoms))
    shortest = _shortest_paths(edges, facts)
    n_tokens = 1 + sum(len(body) + 3 for body, _ in rules) + 1 + len(facts) + 3
    return [
        len(rules),
        len(facts),
        n_tokens,
        len(atoms),
        len(body_occ) / max(1, len(rules)),
        float(q in heads),
        len(qrules),
        min((len(b) for b in qrules), default=0),
        sum(any(a in facts for a in b) for b in qrules),
        float(q in body_atoms),
        longest.get(q, -1),
        shortest.get(q, -1),
        max(longest.values(), default=0),
        sum(b in facts for b in body_occ) / max(1, len(body_occ)),
        sum(all(b in facts for b in body) for body, _ in rules),
        len({b for b in body_atoms if b not in facts and b not in heads}),
        len(facts - body_atoms),
        sum(c >= 2 for c in heads.values()),
    ]


def _matrix(records: Sequence[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
    x = np.array([surface_features(r) for r in records], dtype=np.float64)
    y = np.array([bool(r["label"]) for r in records], dtype=np.float64)
    return x, y


def shortcut_audit(
    train_records: Sequence[dict[str, Any]],
    test_records: Sequence[dict[str, Any]],
    steps: int = 500,
    lr: float = 0.5,
    l2: float = 1e-3,
) -> float:
    """Held-out accuracy of a logistic regression on surface features (chance = 0.5)."""
    if not train_records or not test_records:
        raise UserError("shortcut audit needs at least one training and one test record")
    xtr, ytr = _matrix(train_records)
    xte, yte = _matrix(test_records)
    mu, sd = xtr.mean(0), xtr.std(0)
    sd[sd == 0] = 1.0
    xtr = np.hstack([(xtr - mu) / sd, np.ones((len(xtr), 1))])
    xte = np.hstack([(xte - mu) / sd, np.ones((len(xte), 1))])
    w = np.zeros(xtr.shape[1])
    n = len(xtr)
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-np.clip(xtr @ w, -30, 30)))
        grad = xtr.T @ (p - ytr) / n + l2 * np.r_[w[:-1], 0.0]
        w -= lr * grad
    pred = (xte @ w) > 0
    return float(np.mean(pred == (yte > 0.5)))
