"""Independent checker for propositional Horn-clause records (SPEC Part A1).

This module shares no code with the generator: it recomputes everything from a record's
``rules``, ``facts`` and ``query``.

Definitions
-----------
- *Known* atoms start as the facts; a rule *applies* when all its body atoms are known and its
  head is not.
- *Entailment*: the query is in the least fixpoint of the rules over the facts.
- *Level* of an atom: 0 for a fact; otherwise the first round of parallel forward chaining (all
  rules that apply fire at once) in which it becomes known. A True record's ``depth`` is the level
  of its query: the number of derivation rounds its shortest derivation needs.
- *Optimistic depth*: the level of the query when every atom that is the head of no rule is
  granted as a fact (0 if the query is still not derivable). A False record's ``depth`` is its
  optimistic depth: how deep the query sits above the leaves of the rule graph.
- *Forward-chaining proof* (the reference chain of thought): repeatedly take the first rule in
  context order that applies and derive its head; stop once the query is known or no rule
  applies. Each step is ``{"body": [...], "head": ...}`` with the body in the rule's own order.

``check_record`` returns ``None`` for a valid record and otherwise a short description of the first
problem; ``check_file`` raises :class:`~symgen.errors.UserError` naming the file and line
(``path:N: ...``), and also checks that every record's ``scenario`` is the one its file holds.
``check_split`` checks a whole dataset's seen/unseen split against its ``vocab.json``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from symgen.errors import UserError

Rule = tuple[tuple[str, ...], str]

RECORD_FIELDS = ("rules", "facts", "query", "label", "proof", "depth", "scenario")


def _norm_rules(rules: Iterable[Any]) -> list[Rule]:
    out = []
    for r in rules:
        if isinstance(r, dict):
            out.append((tuple(r["body"]), r["head"]))
        else:
            body, head = r
            out.append((tuple(body), head))
    return out


def levels(rules: Iterable[Any], facts: Iterable[str]) -> dict[str, int]:
    """Level of every derivable atom (facts at 0), by rounds of parallel forward chaining."""
    rules = _norm_rules(rules)
    level = {f: 0 for f in facts}
    rnd = 0
    while True:
        rnd += 1
        new = {h for body, h in rules if h not in level and all(b in level for b in body)}
        if not new:
            return level
        for h in new:
            level[h] = rnd


def entailed(rules: Iterable[Any], facts: Iterable[str], query: str) -> bool:
    """Whether ``query`` is in the least fixpoint of ``rules`` over ``facts``."""
    rules = _norm_rules(rules)
    known = set(facts)
    changed = True
    while changed and query not in known:
        changed = False
        for body, h in rules:
            if h not in known and all(b in known for b in body):
                known.add(h)
                changed = True
    return query in known


def derivation_depth(rules: Iterable[Any], facts: Iterable[str], query: str) -> int | None:
    """Level of the query (0 if it is a fact), or None if it is not entailed."""
    return levels(rules, facts).get(query)


def optimistic_depth(rules: Iterable[Any], facts: Iterable[str], query: str) -> int:
    """Level of the query when every atom that heads no rule is granted as a fact (0 if underivable)."""
    rules = _norm_rules(rules)
    heads = {h for _, h in rules}
    leaves = {b for body, _ in rules for b in body if b not in heads}
    lvl = levels(rules, set(facts) | leaves).get(query)
    return 0 if lvl is None else lvl


def forward_chain(rules: Iterable[Any], facts: Iterable[str], query: str) -> list[dict[str, Any]]:
    """The reference proof: first applicable rule in context order, until the query or saturation."""
    rules = _norm_rules(rules)
    known = set(facts)
    steps: list[dict[str, Any]] = []
    if query in known:
        return steps
    while True:
        for body, h in rules:
            if h not in known and all(b in known for b in body):
                steps.append({"body": list(body), "head": h})
                known.add(h)
                break
        else:
            return steps
        if h == query:
            return steps


def check_proof(
    rules: Iterable[Any],
    facts: Iterable[str],
    proof: Sequence[Any],
    query: str,
    answer: bool = True,
) -> str | None:
    """None if ``proof`` is a valid derivation supporting ``answer``; else what is wrong.

    Every step must be a rule of the problem (body compared as a set) whose body atoms are all
    known and whose head is new. For ``answer=True`` the last step derives the query. For
    ``answer=False`` the query is never derived and, at the end, no rule applies (saturation), so
    the proof certifies non-entailment.
    """
    rules = _norm_rules(rules)
    rule_set = {(frozenset(body), h) for body, h in rules}
    known = set(facts)
    if not isinstance(proof, (list, tuple)):
        return "proof is not a list"
    for i, step in enumerate(proof, 1):
        if not isinstance(step, dict) or "body" not in step or "head" not in step:
            return f"proof step {i} is not an object with body and head"
        body, head = step["body"], step["head"]
        if not isinstance(body, (list, tuple)) or not body or not isinstance(head, str):
            return f"proof step {i} has a malformed body or head"
        if (frozenset(body), head) not in rule_set:
            return f"proof step {i} ({' '.join(map(str, body))} -> {head}) is not a rule of the problem"
        missing = [b for b in body if b not in known]
        if missing:
            return f"proof step {i} uses {missing[0]!r} before it is known"
        if head in known:
            return f"proof step {i} derives {head!r}, which is already known"
        if head == query and i != len(proof):
            return f"proof step {i} derives the query but the proof goes on"
        known.add(head)
    if answer:
        if query not in known:
            return "proof does not derive the query"
        if query in set(facts):
            return "the query is a given fact"
        return None
    if query in known:
        return "proof derives the query but the answer is False"
    for body, h in rules:
        if h not in known and all(b in known for b in body):
            return f"proof stops while rule {' '.join(body)} -> {h} still applies"
    return None


def _check_fields(record: Any) -> str | None:
    if not isinstance(record, dict):
        return "record is not a JSON object"
    for f in RECORD_FIELDS:
        if f not in record:
            return f"missing field {f!r}"
    rules = record["rules"]
    if not isinstance(rules, list) or not rules:
        return "rules must be a non-empty list"
    for i, r in enumerate(rules, 1):
        if not isinstance(r, dict) or "body" not in r or "head" not in r:
            return f"rule {i} is not an object with body and head"
        if not isinstance(r["body"], list) or not r["body"]:
            return f"rule {i} has an empty or non-list body"
        if not all(isinstance(a, str) and a for a in r["body"]) or not isinstance(r["head"], str):
            return f"rule {i} has a non-string atom"
    facts = record["facts"]
    if not isinstance(facts, list) or not all(isinstance(a, str) and a for a in facts):
        return "facts must be a list of atoms"
    if not isinstance(record["query"], str) or not record["query"]:
        return "query must be an atom"
    if not isinstance(record["label"], bool):
        return "label must be true or false"
    if not isinstance(record["proof"], list):
        return "proof must be a list"
    depth = record["depth"]
    if isinstance(depth, bool) or not isinstance(depth, int):
        return "depth must be an integer"
    if not isinstance(record["scenario"], str):
        return "scenario must be a string"
    return None


def check_record(record: Any) -> str | None:
    """None if the record is consistent; else the first problem found."""
    err = _check_fields(record)
    if err:
        return err
    rules = _norm_rules(record["rules"])
    facts, query, label = record["facts"], record["query"], record["label"]
    if query in facts:
        return f"query {query!r} is a given fact"
    truth = entailed(rules, facts, query)
    if label != truth:
        return f"label is {label} but the query is {'' if truth else 'not '}entailed"
    err = check_proof(rules, facts, record["proof"], query, answer=label)
    if err:
        return err
    reference = forward_chain(rules, facts, query)
    proof = [{"body": list(s["body"]), "head": s["head"]} for s in record["proof"]]
    if proof != reference:
        for i, (got, want) in enumerate(zip(proof, reference, strict=False), 1):
            if got != want:
                return (
                    f"proof step {i} is {' '.join(got['body'])} -> {got['head']}, but forward chaining "
                    f"takes {' '.join(want['body'])} -> {want['head']}"
                )
        return f"proof has {len(proof)} steps, forward chaining takes {len(reference)}"
    want_depth = derivation_depth(rules, facts, query) if label else optimistic_depth(rules, facts, query)
    if record["depth"] != want_depth:
        return f"depth is {record['depth']} but should be {want_depth}"
    return None


def check_file(path: str | Path, scenario: str | None = None) -> int:
    """Check every line of a JSONL file; raise UserError("<path>:N: ...") on the first bad one. With
    `scenario`, every record's ``scenario`` field must be that one (the scenario its file holds).

    Returns the number of records checked. Blank lines are skipped (but counted for line numbers).
    """
    path = Path(path)
    try:
        fh = path.open(errors="replace")  # bytes that are not text fail as invalid JSON below
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror}") from None
    n = 0
    with fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                raise UserError(f"{path}:{lineno}: {json_error(e)}") from None
            err = check_record(rec)
            if err is None and scenario is not None and rec["scenario"] != scenario:
                err = f"field 'scenario' is {rec['scenario']!r}, but {path.name} holds {scenario!r} records"
            if err:
                raise UserError(f"{path}:{lineno}: {err}")
            n += 1
    if n == 0:
        raise UserError(f"{path} holds no records")
    return n


def json_error(e: json.JSONDecodeError) -> str:
    """The whole of a JSON error on one line of a JSONL file (its line within the record is always 1)."""
    return f"not valid JSON: {e.msg}: column {e.colno}"


# which symbols each file of a Horn dataset may hold (vocab.json's groups), by file name
SPLIT_FILES = ("train.jsonl", "test_all_seen.jsonl", "test_query_unseen.jsonl", "test_all_unseen.jsonl")


def _atoms(record: dict[str, Any]) -> list[str]:
    """Every atom of a record, in order: rule bodies and heads, facts, query."""
    atoms = [a for r in record["rules"] for a in (*r["body"], r["head"])]
    return atoms + list(record["facts"]) + [record["query"]]


def read_vocab(path: Path, special_tokens: Sequence[str]) -> tuple[set[str], set[str]]:
    """The seen and unseen symbols of a dataset's vocab.json, which must hold its three groups
    (special, seen, unseen) as lists of distinct strings, every one of `special_tokens` among the
    special ones, and no symbol in two groups. Raises UserError naming the file."""
    try:
        vocab = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise UserError(f"{path}:{e.lineno}: not valid JSON: {e.msg}") from None
    if not isinstance(vocab, dict):
        raise UserError(f"{path}: not a JSON object with groups special, seen and unseen")
    groups: dict[str, list[str]] = {}
    for group in ("special", "seen", "unseen"):
        items = vocab.get(group)
        if not isinstance(items, list) or not all(isinstance(t, str) and t for t in items):
            raise UserError(f"{path}: group {group!r} is missing or not a list of tokens")
        groups[group] = items
    missing = [t for t in special_tokens if t not in groups["special"]]
    if missing:
        raise UserError(f"{path}: special token {missing[0]!r} is missing from group 'special'")
    seen, unseen = set(groups["seen"]), set(groups["unseen"])
    for group, items in groups.items():
        others = set().union(*(set(v) for g, v in groups.items() if g != group))
        twice = [t for t in items if t in others]
        if twice:
            raise UserError(f"{path}: token {twice[0]!r} of group {group!r} is in another group too")
    if not seen or not unseen:
        raise UserError(f"{path}: group {'seen' if not seen else 'unseen'!r} is empty")
    return seen, unseen


def check_split(directory: str | Path, special_tokens: Sequence[str]) -> tuple[int, int]:
    """A Horn dataset's seen/unseen split, against its vocab.json (`read_vocab`): every atom of every
    file is one of its symbols; train.jsonl and test_all_seen.jsonl hold no unseen symbol;
    test_query_unseen.jsonl's query is unseen and its other atoms seen; test_all_unseen.jsonl holds
    only unseen symbols. Returns the (seen, unseen) symbol counts; raises UserError("<file>:N: ...")
    on the first record that breaks the split."""
    directory = Path(directory)
    seen, unseen = read_vocab(directory / "vocab.json", special_tokens)
    for name in SPLIT_FILES:
        path = directory / name
        with path.open(errors="replace") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                err = _split_error(name, json.loads(line), seen, unseen)
                if err:
                    raise UserError(f"{path}:{lineno}: {err}")
    return len(seen), len(unseen)


def _split_error(name: str, record: dict[str, Any], seen: set[str], unseen: set[str]) -> str | None:
    query = record["query"]
    for atom in _atoms(record):
        if atom not in seen and atom not in unseen:
            return f"atom {atom!r} is in no group of vocab.json"
    if name == "test_query_unseen.jsonl":
        if query not in unseen:
            return f"the query {query!r} is a seen symbol, but {name} holds unseen queries"
        other = next((a for a in _atoms(record) if a != query and a in unseen), None)
        if other is not None:
            return f"atom {other!r} is unseen, but in {name} only the query is"
        return None
    wanted, kind = (unseen, "seen") if name == "test_all_unseen.jsonl" else (seen, "unseen")
    wrong = next((a for a in _atoms(record) if a not in wanted), None)
    if wrong is not None:
        holds = "only unseen" if kind == "seen" else "no unseen"
        return f"atom {wrong!r} is {kind}, but {name} holds {holds} symbols"
    return None
