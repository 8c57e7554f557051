"""Horn-clause problems as token sequences (SPEC Part A1): the prompt and the target a model is
trained on, the role of every target token, and parsing and scoring what a model writes.

Token format
------------
Prompt (``encode_prompt``)::

    <bos> b1 b2 -> h . b3 -> h2 . ... facts: f1 f2 ... ? q <cot>

one ``body -> head .`` group per rule in context order, then ``facts:`` and the facts, then ``?``
and the query; the model starts writing after ``<cot>``.

Target (``encode_target``)::

    b1 b2 -> h . ... <ans> True <eos>

one ``body -> head .`` group per proof step, then ``<ans>``, ``True`` or ``False``, ``<eos>``.
The special tokens are those of `symgen.tasks.horn`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from symgen.tasks import checker
from symgen.tasks.horn import (
    ANS,
    ARROW,
    BOS,
    COT,
    DOT,
    EOS,
    FACTS,
    FALSE,
    QMARK,
    SPECIAL_TOKENS,
    TRUE,
    is_rule_label,
    rule_label,
)

_SPECIAL = frozenset(SPECIAL_TOKENS)


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


__all__ = [
    "TARGET_ROLES",
    "ParsedOutput",
    "encode_prompt",
    "encode_target",
    "parse_output",
    "rule_index",
    "score_output",
    "target_roles",
]
