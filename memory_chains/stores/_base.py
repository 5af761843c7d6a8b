"""The store interface every memory persists through: :class:`BaseStore`.

A store holds three kinds of records:

* an append-only **turn log** per ``(user_id, session_id)``: each :class:`Turn` is one
  exchange (the human message and the AI reply together), numbered by ``seq`` (1, 2, …);
* one running-summary :class:`SummaryState` per session, replaced atomically together with
  the ``upto_seq`` marker saying which turns it covers (compare-and-swap on ``version``);
* namespaced JSON **documents** (:class:`Document`) for other memories (entities, profile,
  facts): ``put(("entities", "alice"), "dell-xps-15", {...})``.

Backends implement a handful of private primitives (``_append_turn``, ``_read_turns``, …);
validation, the conveniences and the async flavours are written once here. Async methods
run the sync one in a worker thread unless a backend with a native async driver overrides
them. Constructors do no I/O: :meth:`BaseStore.setup` creates or migrates the schema (it
is idempotent and runs on first use if the caller did not call it).

Example:
    >>> from memory_chains.stores import InMemoryStore
    >>> store = InMemoryStore()
    >>> store.append_turn("alice", "s1", "Bonjour", "Bonjour Alice !").seq
    1
    >>> [t.human for t in store.last_turns("alice", "s1", 5)]
    ['Bonjour']
    >>> store.put(("profile", "alice"), "lang", {"value": "fr"})
    >>> store.get(("profile", "alice"), "lang").value
    {'value': 'fr'}
"""

from __future__ import annotations

import asyncio
import builtins
import json
import math
import re
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from memory_chains._json import MAX_JSON_DEPTH, json_depth, loads_bounded
from memory_chains.errors import (
    ForgottenError,
    InvalidInputError,
    ReadOnlyStoreError,
    StoreError,
)

__all__ = [
    "MAX_COUNT",
    "MAX_KEY_LENGTH",
    "MAX_SEQ",
    "BaseStore",
    "Document",
    "Namespace",
    "SummaryState",
    "Tombstone",
    "Turn",
    "document_owner",
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


class BaseStore(ABC):
    """Persistence for memories: turn logs, running summaries and JSON documents.

    Subclasses implement the private primitives; the public methods validate their
    arguments (ids with :func:`validate_id`, JSON values, namespaces) before any I/O, so
    bad input raises :class:`~memory_chains.errors.InvalidInputError` and writes nothing.
    Every method is safe to call from several threads of one process.

    Example:
        >>> from memory_chains.stores import open_store
        >>> with open_store("memory://") as store:
        ...     _ = store.append_turn("u", "s", "q1", "a1")
        ...     _ = store.append_turn("u", "s", "q2", "a2")
        ...     [t.seq for t in store.turns_after("u", "s", 1)], store.count_turns("u", "s")
        ([2], 2)
    """

    #: the scheme ``open_store`` maps to this backend, e.g. ``"sqlite"``.
    scheme: str = ""
    #: True when opened read-only: :meth:`setup` checks the store exists instead of
    #: creating it, and every write raises :class:`~memory_chains.errors.ReadOnlyStoreError`.
    read_only: bool = False

    def __init__(self) -> None:
        self._setup_done = False
        self._setup_lock = threading.Lock()

    # -- lifecycle --------------------------------------------------------------------

    def setup(self) -> None:
        """Create or migrate the schema; idempotent. On a store opened read-only, check
        instead that it exists and that its schema is one this library reads.

        Raises:
            SchemaVersionError: the store was written by a newer version of the library.
            StoreNotFoundError: read-only, and there is no store there.
            StoreUnavailableError: the store cannot be opened.
        """
        with self._setup_lock:
            if not self._setup_done:
                self._setup()
                self._setup_done = True

    def exists(self) -> bool:
        """True when the store has been created (a SQLite file with the schema, a Redis
        prefix or PostgreSQL schema set up); nothing is created to find out.

        Example:
            >>> from memory_chains.stores import InMemoryStore
            >>> InMemoryStore().exists()
            True
        """
        return True

    def _writable(self) -> None:
        if self.read_only:
            raise ReadOnlyStoreError(
                f"{self!r} was opened read-only: nothing was written; open it without "
                "read_only=True to change it"
            )

    def _ensure(self) -> None:
        if not self._setup_done:
            self.setup()

    def close(self) -> None:  # noqa: B027 - optional hook, nothing to release by default
        """Release connections. The store must not be used afterwards."""

    def __enter__(self) -> BaseStore:
        self.setup()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- primitives (backends) ---------------------------------------------------------

    @abstractmethod
    def _setup(self) -> None: ...

    @abstractmethod
    def _append_turn(
        self, user_id: str, session_id: str, human: str, ai: str, metadata_json: str, now: float
    ) -> Turn:
        """Append one exchange atomically with the next ``seq``."""

    @abstractmethod
    def _read_turns(
        self, user_id: str, session_id: str, after_seq: int, last: int | None
    ) -> builtins.list[Turn]:
        """Turns with ``seq > after_seq`` in order; only the ``last`` most recent if given."""

    @abstractmethod
    def _count_turns(self, user_id: str, session_id: str) -> tuple[int, int]:
        """``(number of turns, highest seq)`` of a session; must not scan the log."""

    @abstractmethod
    def _delete_session(self, user_id: str, session_id: str) -> int:
        """Delete the turns of a session and reset its summary to ``("", 0, {})`` with
        ``version + 1``; return the number of turns deleted."""

    @abstractmethod
    def _list_sessions(self, user_id: str) -> builtins.list[str]: ...

    @abstractmethod
    def _get_summary(self, user_id: str, session_id: str) -> SummaryState | None: ...

    @abstractmethod
    def _replace_summary(
        self,
        user_id: str,
        session_id: str,
        text: str,
        upto_seq: int,
        data_json: str,
        expected_version: int,
        now: float,
    ) -> SummaryState | None:
        """Write version ``expected_version + 1`` if the stored version is still
        ``expected_version`` (0 = none yet); else write nothing and return None."""

    @abstractmethod
    def _put(self, namespace: Namespace, key: str, value_json: str, now: float) -> None: ...

    def _put_if(
        self, namespace: Namespace, key: str, value_json: str, expected_json: str | None, now: float
    ) -> bool:
        """Write ``value_json`` if the stored value is still ``expected_json`` (``None``:
        no document yet); True if written. This default is atomic within one process
        only: a backend shared by processes overrides it with one atomic step."""
        with _PUT_IF_LOCK:
            current = self._get(namespace, key)
            stored = None if current is None else _json_object(current.value, "document value")
            if stored != expected_json:
                return False
            self._put(namespace, key, value_json, now)
            return True

    @abstractmethod
    def _get(self, namespace: Namespace, key: str) -> Document | None: ...

    @abstractmethod
    def _list(self, prefix: Namespace, limit: int | None) -> builtins.list[Document]:
        """Documents whose namespace starts with ``prefix``, by namespace then key."""

    @abstractmethod
    def _delete(self, namespace: Namespace, key: str) -> bool: ...

    # -- turn log ------------------------------------------------------------------------

    def append_turn(
        self,
        user_id: str,
        session_id: str,
        human: str,
        ai: str,
        metadata: Mapping[str, Any] | None = None,
    ) -> Turn:
        """Append one exchange (both messages or neither) and return it with its ``seq``.

        The store does not mask or normalise text: memories do that before calling it.

        Raises:
            InvalidInputError: a bad id, a non-string message, a NUL character or a lone
                surrogate (no backend stores them identically), or metadata that is not a
                JSON object.
        """
        validate_id(user_id, "user_id")
        validate_id(session_id, "session_id")
        _validate_text(human, "human message")
        _validate_text(ai, "ai message")
        metadata_json = _json_object(metadata or {}, "turn metadata")
        self._writable()
        self._ensure()
        return self._append_turn(user_id, session_id, human, ai, metadata_json, time.time())

    def last_turns(self, user_id: str, session_id: str, n: int) -> builtins.list[Turn]:
        """The ``n`` most recent turns, oldest first (``n = 0`` gives ``[]``).

        Raises:
            InvalidInputError: bad ids, or ``n`` not an integer in ``0 … MAX_COUNT``.
        """
        n = _non_negative(n, "n", MAX_COUNT)
        validate_id(user_id, "user_id")
        validate_id(session_id, "session_id")
        if n == 0:
            return []
        self._ensure()
        return self._read_turns(user_id, session_id, 0, n)

    def turns_after(
        self, user_id: str, session_id: str, after_seq: int = 0, *, last: int | None = None
    ) -> builtins.list[Turn]:
        """Turns with ``seq > after_seq``, oldest first; only the ``last`` ones if given."""
        after_seq = _non_negative(after_seq, "after_seq", MAX_SEQ)
        if last is not None:
            last = _non_negative(last, "last", MAX_COUNT)
            if last == 0:
                return []
        validate_id(user_id, "user_id")
        validate_id(session_id, "session_id")
        self._ensure()
        return self._read_turns(user_id, session_id, after_seq, last)

    def count_turns(self, user_id: str, session_id: str) -> int:
        """Number of turns in the session's log (constant time)."""
        validate_id(user_id, "user_id")
        validate_id(session_id, "session_id")
        self._ensure()
        return self._count_turns(user_id, session_id)[0]

    def last_seq(self, user_id: str, session_id: str) -> int:
        """The ``seq`` of the most recent turn, 0 when the session is empty."""
        validate_id(user_id, "user_id")
        validate_id(session_id, "session_id")
        self._ensure()
        return self._count_turns(user_id, session_id)[1]

    def delete_session(self, user_id: str, session_id: str) -> int:
        """Forget a session: its turns and its summary. Returns the number of turns deleted.

        The summary is reset (empty text, ``upto_seq = 0``) with a new ``version``, so a
        compaction of the deleted turns still running somewhere cannot write them back.
        """
        validate_id(user_id, "user_id")
        validate_id(session_id, "session_id")
        self._writable()
        self._ensure()
        return self._delete_session(user_id, session_id)

    def list_sessions(self, user_id: str) -> builtins.list[str]:
        """Session ids of a user that have turns or a summary, sorted."""
        validate_id(user_id, "user_id")
        self._ensure()
        return self._list_sessions(user_id)

    # -- running summary -----------------------------------------------------------------

    def get_summary(self, user_id: str, session_id: str) -> SummaryState:
        """The session's summary state; an empty ``SummaryState()`` when there is none."""
        validate_id(user_id, "user_id")
        validate_id(session_id, "session_id")
        self._ensure()
        return self._get_summary(user_id, session_id) or SummaryState()

    def replace_summary(
        self,
        user_id: str,
        session_id: str,
        text: str,
        upto_seq: int,
        data: Mapping[str, Any] | None = None,
        *,
        expected_version: int,
    ) -> SummaryState | None:
        """Atomically replace the summary and its ``upto_seq`` marker.

        Compare-and-swap: the write happens only if the stored version still equals
        ``expected_version`` (the ``version`` of the state the new summary was built from),
        so two concurrent compactions cannot overwrite each other.

        Returns:
            The new state, or ``None`` when another writer got there first.

        Raises:
            InvalidInputError: bad ids, text, ``upto_seq`` or data.
        """
        validate_id(user_id, "user_id")
        validate_id(session_id, "session_id")
        _validate_text(text, "summary text")
        upto_seq = _non_negative(upto_seq, "upto_seq", MAX_SEQ)
        expected_version = _non_negative(expected_version, "expected_version", MAX_SEQ)
        data_json = _json_object(data or {}, "summary data")
        self._writable()
        self._ensure()
        return self._replace_summary(
            user_id, session_id, text, upto_seq, data_json, expected_version, time.time()
        )

    # -- documents -----------------------------------------------------------------------

    def put(self, namespace: Sequence[str], key: str, value: Mapping[str, Any]) -> None:
        """Insert or replace the JSON document ``value`` under ``(namespace, key)``.

        Raises:
            InvalidInputError: bad namespace or key, or a value that is not a JSON object
                (NaN, sets, objects… are refused: nothing is ever pickled) or holds a NUL
                character or a lone surrogate.
        """
        ns = validate_namespace(namespace)
        _validate_key(key)
        value_json = _json_object(value, "document value")
        self._writable()
        self._ensure()
        self._put(ns, key, value_json, time.time())

    def put_if(
        self,
        namespace: Sequence[str],
        key: str,
        value: Mapping[str, Any],
        *,
        expected: Mapping[str, Any] | None,
    ) -> bool:
        """Compare-and-swap a document: write ``value`` only if the stored value still
        equals ``expected`` (``None``: only if there is no document yet), in one atomic
        step on every backend, so that writers in different processes cannot undo each
        other's change. Read, change, ``put_if``, and read again when it returns False.

        Returns:
            True if ``value`` was written, False if the document had changed.

        Raises:
            InvalidInputError: as :meth:`put`, for ``value`` and ``expected``.

        Example:
            >>> from memory_chains.stores import InMemoryStore
            >>> store = InMemoryStore()
            >>> store.put_if(("ns",), "k", {"n": 1}, expected=None)
            True
            >>> store.put_if(("ns",), "k", {"n": 2}, expected=None)  # it exists now
            False
            >>> store.put_if(("ns",), "k", {"n": 2}, expected={"n": 1})
            True
        """
        ns = validate_namespace(namespace)
        _validate_key(key)
        value_json = _json_object(value, "document value")
        expected_json = None if expected is None else _json_object(expected, "expected value")
        self._writable()
        self._ensure()
        return self._put_if(ns, key, value_json, expected_json, time.time())

    def get(self, namespace: Sequence[str], key: str) -> Document | None:
        """The document under ``(namespace, key)``, or ``None``."""
        ns = validate_namespace(namespace)
        _validate_key(key)
        self._ensure()
        return self._get(ns, key)

    def list(
        self, namespace_prefix: Sequence[str] = (), *, limit: int | None = None
    ) -> builtins.list[Document]:
        """Documents whose namespace starts with ``namespace_prefix`` (all with ``()``)."""
        prefix = validate_namespace(namespace_prefix, allow_empty=True)
        if limit is not None:
            limit = _non_negative(limit, "limit", MAX_COUNT)
            if limit == 0:
                return []
        self._ensure()
        return self._list(prefix, limit)

    def delete(self, namespace: Sequence[str], key: str) -> bool:
        """Delete one document; True if it existed."""
        ns = validate_namespace(namespace)
        _validate_key(key)
        self._writable()
        self._ensure()
        return self._delete(ns, key)

    # -- tombstones (forget that sticks) -------------------------------------------------

    def add_tombstone(self, user_id: str, session_id: str | None = None) -> Tombstone:
        """Mark a user (``session_id=None``) or one of their sessions as forgotten.

        From then on, every write for them — turns, summaries, and documents they own by
        the namespace convention (:func:`document_owner`) — raises
        :class:`~memory_chains.errors.ForgottenError`, in every process sharing the
        store: the check and the write are one atomic step on every backend. Reads and
        deletions still work. Idempotent (the first time is kept).
        :func:`~memory_chains.stores.forget_user` calls it before erasing anything.

        Example:
            >>> from memory_chains.stores import InMemoryStore
            >>> store = InMemoryStore()
            >>> _ = store.add_tombstone("alice")
            >>> store.append_turn("alice", "s1", "q", "a")
            Traceback (most recent call last):
            ...
            memory_chains.errors.ForgottenError: user 'alice' was forgotten at ...
        """
        validate_id(user_id, "user_id")
        if session_id is not None:
            validate_id(session_id, "session_id")
        self._writable()
        self._ensure()
        return self._add_tombstone(user_id, session_id, time.time())

    def remove_tombstones(self, user_id: str, session_id: str | None = None) -> int:
        """Re-admit: with ``session_id=None``, remove the user's tombstone and those of
        every one of their sessions; else that session's only. Returns how many went.

        Example:
            >>> from memory_chains.stores import InMemoryStore
            >>> store = InMemoryStore()
            >>> _ = store.add_tombstone("alice", "s1")
            >>> store.remove_tombstones("alice"), store.append_turn("alice", "s1", "q", "a").seq
            (1, 1)
        """
        validate_id(user_id, "user_id")
        if session_id is not None:
            validate_id(session_id, "session_id")
        self._writable()
        self._ensure()
        return self._remove_tombstones(user_id, session_id)

    def tombstones(self, user_id: str) -> builtins.list[Tombstone]:
        """The user's tombstones: the whole user's first (if any), then per session.

        Example:
            >>> from memory_chains.stores import InMemoryStore
            >>> store = InMemoryStore()
            >>> _ = store.add_tombstone("alice", "s2")
            >>> [(t.user_id, t.session_id) for t in store.tombstones("alice")]
            [('alice', 's2')]
        """
        validate_id(user_id, "user_id")
        self._ensure()
        found = self._tombstones(user_id)
        return sorted(found, key=lambda t: (t.session_id is not None, t.session_id or ""))

    @abstractmethod
    def _add_tombstone(self, user_id: str, session_id: str | None, now: float) -> Tombstone:
        """Insert the tombstone if missing (atomically with respect to every write)."""

    @abstractmethod
    def _remove_tombstones(self, user_id: str, session_id: str | None) -> int: ...

    @abstractmethod
    def _tombstones(self, user_id: str) -> builtins.list[Tombstone]: ...

    # -- async flavours (a thread by default; native async backends override) -----------

    async def asetup(self) -> None:
        """Async :meth:`setup`."""
        await asyncio.to_thread(self.setup)

    async def aappend_turn(
        self,
        user_id: str,
        session_id: str,
        human: str,
        ai: str,
        metadata: Mapping[str, Any] | None = None,
    ) -> Turn:
        """Async :meth:`append_turn`."""
        return await asyncio.to_thread(self.append_turn, user_id, session_id, human, ai, metadata)

    async def alast_turns(self, user_id: str, session_id: str, n: int) -> builtins.list[Turn]:
        """Async :meth:`last_turns`."""
        return await asyncio.to_thread(self.last_turns, user_id, session_id, n)

    async def aturns_after(
        self, user_id: str, session_id: str, after_seq: int = 0, *, last: int | None = None
    ) -> builtins.list[Turn]:
        """Async :meth:`turns_after`."""
        return await asyncio.to_thread(self.turns_after, user_id, session_id, after_seq, last=last)

    async def acount_turns(self, user_id: str, session_id: str) -> int:
        """Async :meth:`count_turns`."""
        return await asyncio.to_thread(self.count_turns, user_id, session_id)

    async def adelete_session(self, user_id: str, session_id: str) -> int:
        """Async :meth:`delete_session`."""
        return await asyncio.to_thread(self.delete_session, user_id, session_id)

    async def aget_summary(self, user_id: str, session_id: str) -> SummaryState:
        """Async :meth:`get_summary`."""
        return await asyncio.to_thread(self.get_summary, user_id, session_id)

    async def areplace_summary(
        self,
        user_id: str,
        session_id: str,
        text: str,
        upto_seq: int,
        data: Mapping[str, Any] | None = None,
        *,
        expected_version: int,
    ) -> SummaryState | None:
        """Async :meth:`replace_summary`."""
        return await asyncio.to_thread(
            self.replace_summary,
            user_id,
            session_id,
            text,
            upto_seq,
            data,
            expected_version=expected_version,
        )

    async def aput(self, namespace: Sequence[str], key: str, value: Mapping[str, Any]) -> None:
        """Async :meth:`put`."""
        await asyncio.to_thread(self.put, namespace, key, value)

    async def aget(self, namespace: Sequence[str], key: str) -> Document | None:
        """Async :meth:`get`."""
        return await asyncio.to_thread(self.get, namespace, key)

    async def alist(
        self, namespace_prefix: Sequence[str] = (), *, limit: int | None = None
    ) -> builtins.list[Document]:
        """Async :meth:`list`."""
        return await asyncio.to_thread(self.list, namespace_prefix, limit=limit)

    async def adelete(self, namespace: Sequence[str], key: str) -> bool:
        """Async :meth:`delete`."""
        return await asyncio.to_thread(self.delete, namespace, key)


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
