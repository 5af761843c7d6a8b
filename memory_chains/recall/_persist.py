"""How one user's episodic index is laid out in a :class:`~memory_chains.stores.BaseStore`.

* ``("episodes", user_id, "turns")`` / ``turn_id``: one document per turn, ``{"order",
  "text", "speaker", "when", "session", "terms": {term: count}, "vector": base64}``; the
  term counts are the BM25 postings of that turn, the vector is little-endian float32
  (compact, exact, never pickled);
* ``("episodes", user_id, "meta")`` / ``"state"``: ``{"count", "generation"}``, rewritten
  after every write so that an in-process cache can tell cheaply whether it is stale.

The user id is the second label, so :func:`memory_chains.stores.forget_user` and
:func:`~memory_chains.stores.export_user` cover everything.

Example:
    >>> import numpy as np
    >>> decode_vector(encode_vector(np.array([0.5, -1.0], dtype=np.float32))).tolist()
    [0.5, -1.0]
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from memory_chains.errors import StoreError
from memory_chains.recall._types import Episode

__all__ = [
    "decode_turn",
    "decode_vector",
    "encode_turn",
    "encode_vector",
    "meta_namespace",
    "turns_namespace",
]

META_KEY = "state"


def turns_namespace(user_id: str) -> tuple[str, str, str]:
    """Namespace of a user's turn documents.

    Example:
        >>> turns_namespace("alice")
        ('episodes', 'alice', 'turns')
    """
    return ("episodes", user_id, "turns")


def meta_namespace(user_id: str) -> tuple[str, str, str]:
    """Namespace of a user's index state document.

    Example:
        >>> meta_namespace("alice")
        ('episodes', 'alice', 'meta')
    """
    return ("episodes", user_id, "meta")


def encode_vector(vector: npt.NDArray[np.float32]) -> str:
    """Base64 of the vector as little-endian float32."""
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def decode_vector(text: str) -> npt.NDArray[np.float32]:
    """Inverse of :func:`encode_vector`."""
    return np.frombuffer(base64.b64decode(text), dtype="<f4").astype(np.float32)


def encode_turn(
    episode: Episode,
    order: int,
    term_counts: Mapping[str, int],
    vector: npt.NDArray[np.float32] | None,
) -> dict[str, Any]:
    """The JSON document stored for one turn."""
    return {
        "order": order,
        "text": episode.text,
        "speaker": episode.speaker,
        "when": episode.when.isoformat() if episode.when else None,
        "session": episode.session,
        "terms": dict(term_counts),
        "vector": encode_vector(vector) if vector is not None else None,
    }


def decode_turn(
    turn_id: str, value: Mapping[str, Any]
) -> tuple[int, Episode, dict[str, int], npt.NDArray[np.float32] | None]:
    """``(order, episode, term counts, vector)`` from a stored turn document.

    Raises:
        StoreError: the document does not have the expected fields.
    """
    try:
        when = datetime.fromisoformat(value["when"]) if value.get("when") else None
        vector = decode_vector(value["vector"]) if value.get("vector") else None
        episode = Episode(
            turn_id, str(value["text"]), str(value["speaker"]), when, str(value["session"])
        )
        terms = {str(t): int(n) for t, n in dict(value["terms"]).items()}
        return int(value["order"]), episode, terms, vector
    except (KeyError, TypeError, ValueError) as exc:
        raise StoreError(
            f"episodic turn document {turn_id!r} is malformed ({exc!r}); delete the user's "
            "('episodes', user_id) documents and re-index the turns"
        ) from exc
