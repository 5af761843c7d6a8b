"""The records of the facts memory: :class:`FactCandidate`, :class:`Fact`, :class:`FactChanges`.

A candidate is what an extractor proposes (a normalised sentence, an optional slot key, a
``supersedes`` flag); a fact is what is stored under ``("facts", user_id)`` with its
sources, validity period and embedding, and converts to and from its store document
(:meth:`Fact.to_json` / :meth:`Fact.from_json`); the changes say what one
:meth:`~memory_chains.longterm.FactMemory.add` did. Plain data, no store and no model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memory_chains.errors import InvalidInputError, StoreError
from memory_chains.longterm._profile import normalize_key
from memory_chains.longterm._vectors import decode_vector, encode_vector

__all__ = ["Fact", "FactCandidate", "FactChanges"]

_MAX_TEXT = 300


@dataclass(frozen=True)
class FactCandidate:
    """A fact an extractor proposes, before it is merged into memory.

    Attributes:
        text: one short sentence about the user.
        key: the slot it fills (``preferred_course_day``, ``city``…), normalised to
            snake_case; a later candidate with the same key supersedes it.
        supersedes: the extractor says it replaces an earlier fact (used when there is
            no key).

    Example:
        >>> FactCandidate(" Habite   à Lyon ", key="City").key
        'city'
    """

    text: str
    key: str | None = None
    supersedes: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise InvalidInputError(f"fact text must be a string, got {type(self.text).__name__}")
        text = " ".join(self.text.split())[:_MAX_TEXT]
        if not text:
            raise InvalidInputError("fact text is empty")
        object.__setattr__(self, "text", text)
        if self.key is not None:
            key = self.key.strip() if isinstance(self.key, str) else self.key
            object.__setattr__(self, "key", normalize_key(key) if key else None)


@dataclass(frozen=True)
class Fact:
    """A stored fact and its validity period.

    Attributes:
        id: document key under ``("facts", user_id)``.
        text: the (PII-masked) sentence.
        key: the slot, if the extractor gave one.
        scope: ``"user"`` or ``"global"``.
        sources: ``(session_id, seq)`` of the turns it was observed in (seq may be None).
        created_at: UNIX time the row was written.
        valid_from: when it became true (the turn's time).
        valid_to: when it was superseded; ``None`` while current.
        superseded_by: id of the fact that replaced it.
        vector: its embedding (not compared, not shown).

    Example:
        >>> Fact("f1", "L'utilisateur habite à Lyon.").is_current
        True
    """

    id: str
    text: str
    key: str | None = None
    scope: str = "user"
    sources: tuple[tuple[str, int | None], ...] = ()
    created_at: float = 0.0
    valid_from: float = 0.0
    valid_to: float | None = None
    superseded_by: str | None = None
    vector: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def is_current(self) -> bool:
        """True while the fact has not been superseded."""
        return self.valid_to is None

    def to_json(self) -> dict[str, Any]:
        """The stored document (the vector as base64 float32).

        Example:
            >>> Fact("f1", "x", vector=np.array([1.0], dtype="<f4")).to_json()["vector"]
            'AACAPw=='
        """
        return {
            "text": self.text,
            "key": self.key,
            "scope": self.scope,
            "sources": [[s, q] for s, q in self.sources],
            "created_at": self.created_at,
            "valid_from": self.valid_from,
            "valid_to": self.valid_to,
            "superseded_by": self.superseded_by,
            "vector": None if self.vector is None else encode_vector(self.vector.tolist()),
        }

    @classmethod
    def from_json(cls, fact_id: str, data: Mapping[str, Any]) -> Fact:
        """Rebuild a fact from :meth:`to_json`'s document.

        Raises:
            StoreError: the document is not a fact.

        Example:
            >>> Fact.from_json("f1", {"text": "x", "sources": [["s1", 2]]}).sources
            (('s1', 2),)
        """
        try:
            vector = data.get("vector")
            valid_to = data.get("valid_to")
            return cls(
                id=fact_id,
                text=str(data["text"]),
                key=data.get("key"),
                scope=str(data.get("scope", "user")),
                sources=tuple(
                    (str(s), None if q is None else int(q)) for s, q in data.get("sources", ())
                ),
                created_at=float(data.get("created_at") or 0.0),
                valid_from=float(data.get("valid_from") or 0.0),
                valid_to=None if valid_to is None else float(valid_to),
                superseded_by=data.get("superseded_by"),
                vector=None if vector is None else decode_vector(vector),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise StoreError(f"fact document {fact_id!r} is not a fact: {exc}") from exc


@dataclass(frozen=True)
class FactChanges:
    """What :meth:`FactMemory.add` did.

    Attributes:
        added: ids of new facts.
        merged: ids of existing facts a candidate restated (sources merged).
        superseded: ids of facts that stopped being current.

    Example:
        >>> FactChanges().changed
        False
    """

    added: tuple[str, ...] = ()
    merged: tuple[str, ...] = ()
    superseded: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        """True when anything was written."""
        return bool(self.added or self.merged or self.superseded)
