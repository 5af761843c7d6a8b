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

import builtins
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any

from memory_chains.errors import ReadOnlyStoreError
from memory_chains.stores._async import AsyncFlavours
from memory_chains.stores._values import (
    _PUT_IF_LOCK,
    MAX_COUNT,
    MAX_SEQ,
    Document,
    Namespace,
    SummaryState,
    Tombstone,
    Turn,
    _json_object,
    _non_negative,
    _validate_key,
    _validate_text,
    validate_id,
    validate_namespace,
)

__all__ = ["BaseStore"]


class BaseStore(AsyncFlavours, ABC):
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

    def _after_erasure(self) -> None:
        """Hook run by ``forget_user`` / ``forget_session`` once the rows are deleted: a
        backend whose files may keep copies of deleted bytes removes them here."""

    def _writable(self) -> None:
        if self.read_only:
            raise ReadOnlyStoreError(
                f"{self!r} was opened read-only: nothing was written; open it without "
                "read_only=True to change it"
            )

    def _ensure(self) -> None:
        if not self._setup_done:
            self.setup()

    def close(self) -> None:
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
