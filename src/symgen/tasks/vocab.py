"""A small ordered vocabulary: token strings <-> integer ids, with optional named groups.

Ids are positions in the token list. Groups (e.g. ``special``, ``seen``, ``unseen``) are named
sub-lists of tokens, kept so that experiments can address a block of embedding rows by name.

JSON forms accepted by :meth:`Vocab.from_json`:

- a list of tokens: ``["<pad>", "a", "b"]``;
- ``{"tokens": [...], "groups": {"name": [...], ...}}`` (what :meth:`Vocab.to_json` writes);
- a dict of groups only, ``{"special": [...], "seen": [...], "unseen": [...]}``: the tokens are the
  groups concatenated in the order they appear.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from symgen.errors import UserError


class Vocab:
    """Ordered list of distinct token strings; ``id(tok)`` is the token's position."""

    def __init__(self, tokens: Iterable[str], groups: Mapping[str, Sequence[str]] | None = None):
        self._tokens: list[str] = list(tokens)
        self._index: dict[str, int] = {}
        for i, tok in enumerate(self._tokens):
            if not isinstance(tok, str):
                raise UserError(f"vocabulary token {tok!r} at position {i} is not a string")
            if tok in self._index:
                raise UserError(f"vocabulary token {tok!r} occurs twice; tokens must be distinct")
            self._index[tok] = i
        self._groups: dict[str, list[str]] = {}
        for name, members in (groups or {}).items():
            members = list(members)
            for tok in members:
                if tok not in self._index:
                    raise UserError(f"vocabulary group {name!r} names {tok!r}, which is not a token")
            self._groups[name] = members

    # --- lookups -------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._tokens)

    def __contains__(self, tok: object) -> bool:
        return tok in self._index

    def __iter__(self):
        return iter(self._tokens)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocab) and self._tokens == other._tokens and self._groups == other._groups

    def __repr__(self) -> str:
        groups = ", ".join(f"{k}={len(v)}" for k, v in self._groups.items())
        return f"Vocab({len(self)} tokens{'; ' + groups if groups else ''})"

    def id(self, tok: str) -> int:
        try:
            return self._index[tok]
        except KeyError:
            raise UserError(f"unknown token {tok!r}: it is not in the vocabulary") from None

    def ids(self, toks: Iterable[str]) -> list[int]:
        return [self.id(t) for t in toks]

    def token(self, i: int) -> str:
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < len(self._tokens):
            raise UserError(f"token id {i!r} is out of range for a vocabulary of {len(self)} tokens")
        return self._tokens[i]

    def tokens(self, ids: Iterable[int]) -> list[str]:
        return [self.token(int(i)) for i in ids]

    @property
    def all_tokens(self) -> list[str]:
        return list(self._tokens)

    # --- groups --------------------------------------------------------------------------
    @property
    def groups(self) -> dict[str, list[str]]:
        return {k: list(v) for k, v in self._groups.items()}

    def group(self, name: str) -> list[str]:
        if name not in self._groups:
            raise UserError(f"unknown vocabulary group {name!r}; known: {sorted(self._groups)}")
        return list(self._groups[name])

    # --- serialization -------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {"tokens": list(self._tokens), "groups": self.groups}

    @classmethod
    def from_json(cls, obj: Any) -> Vocab:
        if isinstance(obj, str):
            try:
                obj = json.loads(obj)
            except json.JSONDecodeError as e:
                raise UserError(f"vocabulary JSON does not parse: {e}") from None
        if isinstance(obj, list):
            return cls(obj)
        if not isinstance(obj, dict):
            raise UserError("vocabulary JSON must be a list of tokens or an object")
        if "tokens" in obj:
            groups = obj.get("groups") or {}
            if not isinstance(obj["tokens"], list) or not isinstance(groups, dict):
                raise UserError('vocabulary JSON: "tokens" must be a list and "groups" an object')
            return cls(obj["tokens"], groups)
        tokens: list[str] = []
        for name, members in obj.items():
            if not isinstance(members, list):
                raise UserError(f"vocabulary JSON: group {name!r} must be a list of tokens")
            tokens.extend(members)
        return cls(tokens, obj)

    @classmethod
    def load(cls, path: str | Path) -> Vocab:
        path = Path(path)
        try:
            text = path.read_text()
        except OSError as e:
            raise UserError(f"cannot read vocabulary file {path}: {e.strerror}") from None
        return cls.from_json(text)
