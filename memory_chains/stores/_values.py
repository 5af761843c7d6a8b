"""The values a store holds and the rules its arguments follow: :class:`Turn`,
:class:`SummaryState`, :class:`Document`, :class:`Tombstone`, :func:`validate_id`,
:func:`validate_namespace`, the size bounds and the JSON checks. No I/O here;
:class:`~memory_chains.stores.BaseStore` applies them before every call to a backend.

Example:
    >>> validate_id("alice", "user_id"), document_owner(("profile", "alice"), "lang")
    ('alice', ('alice', None))
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from memory_chains._json import MAX_JSON_DEPTH, json_depth, loads_bounded
from memory_chains.errors import ForgottenError, InvalidInputError, StoreError

__all__ = [
    "MAX_COUNT",
    "MAX_KEY_LENGTH",
    "MAX_SEQ",
    "Document",
    "Namespace",
    "SummaryState",
    "Tombstone",
    "Turn",
    "document_owner",
    "forgotten_error",
    "load_stored_json",
    "validate_id",
    "validate_namespace",
]

Namespace = tuple[str, ...]

#: user and session ids: 1-64 characters among letters, digits and ``_ - . : @``.
_ID_RE = re.compile(r"[A-Za-z0-9_\-.:@]{1,64}")
MAX_KEY_LENGTH = 256
#: Largest count a read accepts (``n``, ``last``, ``limit``): more than any log holds, and
#: within every driver's integer range (SQLite raises ``OverflowError`` past 2**63).
MAX_COUNT = 2**31
#: Largest ``seq``, ``upto_seq`` or ``version`` (SQLite INTEGER, PostgreSQL BIGINT).
MAX_SEQ = 2**62
_MAX_NAMESPACE_DEPTH = 8
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f\ud800-\udfff]")
# Serialises the default (in-process) compare-and-swap of documents.
_PUT_IF_LOCK = threading.Lock()
# a \u0000 escape in serialised JSON (not an escaped backslash followed by "u0000")
_JSON_NUL_RE = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")


def validate_id(value: object, what: str = "id") -> str:
    """Return ``value`` if it is a valid user or session id, else raise.

    Raises:
        InvalidInputError: not a string, empty, longer than 64 characters, or containing
            anything other than letters, digits and ``_ - . : @``.

    Example:
        >>> validate_id("user-42", "user_id")
        'user-42'
    """
    if not isinstance(value, str):
        raise InvalidInputError(f"{what} must be a string, got {type(value).__name__}")
    if not _ID_RE.fullmatch(value):
        raise InvalidInputError(
            f"{what}={value[:80]!r} is invalid: use 1-64 characters among letters, digits "
            "and _ - . : @"
        )
    return value


def validate_namespace(namespace: object, *, allow_empty: bool = False) -> Namespace:
    """Return ``namespace`` as a tuple of non-empty strings without control characters.

    Raises:
        InvalidInputError: not a tuple/list of strings, an empty label, a control character,
            or more than 8 labels.

    Example:
        >>> validate_namespace(["entities", "alice"])
        ('entities', 'alice')
    """
    if isinstance(namespace, str) or not isinstance(namespace, (tuple, list)):
        raise InvalidInputError(
            f"namespace must be a tuple of strings such as ('entities', 'alice'), "
            f"got {namespace!r:.80}"
        )
    labels = tuple(namespace)
    if not labels and not allow_empty:
        raise InvalidInputError("namespace must have at least one label")
    if len(labels) > _MAX_NAMESPACE_DEPTH:
        raise InvalidInputError(f"namespace has more than {_MAX_NAMESPACE_DEPTH} labels")
    for label in labels:
        if not isinstance(label, str) or not label:
            raise InvalidInputError(f"namespace labels must be non-empty strings: {labels!r:.80}")
        if len(label) > MAX_KEY_LENGTH or _CONTROL_RE.search(label):
            raise InvalidInputError(
                f"namespace label {label[:80]!r} is too long or has control characters"
            )
    return labels


def _validate_key(key: object) -> str:
    if not isinstance(key, str) or not key:
        raise InvalidInputError(f"document key must be a non-empty string, got {key!r:.80}")
    if len(key) > MAX_KEY_LENGTH or _CONTROL_RE.search(key):
        raise InvalidInputError(f"document key {key[:80]!r} is too long or has control characters")
    return key


def _json_object(value: object, what: str) -> str:
    """Serialise a JSON object strictly (no NaN, str keys only); the canonical stored form."""
    if not isinstance(value, Mapping):
        raise InvalidInputError(
            f"{what} must be a dict (a JSON object), got {type(value).__name__}"
        )
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{what} is not JSON-serialisable: {exc}") from exc
    except RecursionError:
        raise InvalidInputError(f"{what} is nested too deep (or refers to itself)") from None
    # what is stored must read back: the same limit as every JSON read from a store
    if text.count("[") + text.count("{") > MAX_JSON_DEPTH and json_depth(text) > MAX_JSON_DEPTH:
        raise InvalidInputError(f"{what} is nested deeper than {MAX_JSON_DEPTH} levels")
    # the same refusals as for text, so that every backend stores exactly the same values
    # (PostgreSQL's jsonb has no NUL, no backend's UTF-8 has lone surrogates)
    if _JSON_NUL_RE.search(text):
        raise InvalidInputError(f"{what} contains a NUL character")
    _refuse_surrogates(text, what)
    return text


def _validate_text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise InvalidInputError(f"{what} must be a string, got {type(value).__name__}")
    if "\x00" in value:
        raise InvalidInputError(f"{what} contains a NUL character")
    _refuse_surrogates(value, what)
    return value


def _refuse_surrogates(value: str, what: str) -> None:
    """Refuse lone UTF-16 surrogates: no backend can encode them in UTF-8."""
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InvalidInputError(
                f"{what} contains a lone surrogate ({value[exc.start]!r} at {exc.start}): "
                "decode the text with errors='replace' first"
            ) from None


def load_stored_json(text: str | bytes, what: str = "stored JSON") -> Any:
    """A JSON value read back from a store; a corrupt or too deeply nested one raises
    :class:`~memory_chains.errors.StoreError` (never ``RecursionError``)."""
    try:
        return loads_bounded(text)
    except ValueError as exc:
        raise StoreError(f"{what} in the store is not valid JSON: {exc}") from exc


def document_owner(namespace: Namespace, key: str) -> tuple[str | None, str | None]:
    """The user (and session) a document belongs to, by the memories' convention: the
    user id is the namespace's second label; session metadata lives under
    ``("sessions", user)`` (key: the session id) and ``("sessions", user, session, …)``.

    Example:
        >>> document_owner(("entities", "alice"), "xps")
        ('alice', None)
        >>> document_owner(("sessions", "alice"), "s1")
        ('alice', 's1')
        >>> document_owner(("global",), "k")
        (None, None)
    """
    if len(namespace) < 2:
        return None, None
    user = namespace[1]
    if namespace[0] != "sessions":
        return user, None
    return user, namespace[2] if len(namespace) > 2 else key


def forgotten_error(user_id: str, session_id: str | None, at: float) -> ForgottenError:
    """The error a write for a forgotten user or session raises (every backend)."""
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(at))
    if session_id is None:
        what, readmit = f"user {user_id!r}", f"readmit_user(store, {user_id!r})"
    else:
        what = f"session {session_id!r} of user {user_id!r}"
        readmit = f"readmit_session(store, {user_id!r}, {session_id!r})"
    return ForgottenError(
        f"{what} was forgotten at {when} UTC: nothing was written; if they are to be "
        f"remembered again, re-admit them first with {readmit}",
        user_id,
        session_id,
        at,
    )


@dataclass(frozen=True)
class Tombstone:
    """What a store keeps of a forgotten user or session: the ids and the time, nothing
    else. While it is there, every write for them fails with
    :class:`~memory_chains.errors.ForgottenError`.

    Attributes:
        user_id: the forgotten user.
        session_id: the forgotten session; ``None`` for the whole user.
        forgotten_at: UNIX time of the forgetting.

    Example:
        >>> Tombstone("alice", None, 0.0).session_id is None
        True
    """

    user_id: str
    session_id: str | None
    forgotten_at: float


@dataclass(frozen=True)
class Turn:
    """One exchange of a session's log: what the human said and what the AI answered.

    Attributes:
        seq: position in the session, 1 for the first turn; strictly increasing.
        human: the (already masked) human message.
        ai: the (already masked) AI reply.
        created_at: UNIX time the turn was appended.
        metadata: free JSON metadata (e.g. token counts).

    Example:
        >>> Turn(seq=1, human="Salut", ai="Bonjour !").ai
        'Bonjour !'
    """

    seq: int
    human: str
    ai: str
    created_at: float = 0.0
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SummaryState:
    """The running summary of a session and the last turn it covers.

    Attributes:
        text: the summary as rendered for prompts.
        upto_seq: every turn with ``seq <= upto_seq`` is folded into the summary.
        data: the structured summary (sections of facts, decisions, …) as JSON.
        version: incremented at each replacement (0 means "no summary yet").
        updated_at: UNIX time of the last replacement.

    Example:
        >>> SummaryState().upto_seq
        0
    """

    text: str = ""
    upto_seq: int = 0
    data: Mapping[str, Any] = field(default_factory=dict)
    version: int = 0
    updated_at: float = 0.0


@dataclass(frozen=True)
class Document:
    """A JSON document stored under a namespace and a key.

    Example:
        >>> Document(("entities", "alice"), "xps", {"type": "PRODUCT"}).key
        'xps'
    """

    namespace: Namespace
    key: str
    value: Mapping[str, Any]
    created_at: float = 0.0
    updated_at: float = 0.0


def _non_negative(value: object, what: str, maximum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            value = int(value)
        else:
            raise InvalidInputError(f"{what} must be an integer, got {value!r:.40}")
    if value < 0:
        raise InvalidInputError(f"{what} must be zero or positive, got {value}")
    if value > maximum:
        raise InvalidInputError(f"{what} must be at most {maximum}, got {value:.3g}")
    return value
