"""Answering without memory while the store is down: :class:`ResilientStore`.

The one place where a store outage is absorbed (seed 000, "fallback gracieux"). Wrap any
store, and a conversation keeps going when the store cannot be reached
(:class:`~memory_chains.errors.StoreUnavailableError`):

* reads a conversation needs (turns, counts, summary, a document, a namespace listing)
  return empty results, so the next answer is simply memory-less;
* writes (turns, summaries, documents) are dropped and counted;
* one :class:`~memory_chains.errors.StoreUnavailableWarning` (and one log record) per
  outage, not one per call;
* while down, the store is tried again at most every ``retry_interval`` seconds (calls in
  between do not wait for a timeout); the first call that succeeds ends the outage and
  memory resumes. Turns dropped during the outage stay lost (they are counted).

What is never degraded: erasing (``delete_session``, ``delete``), tombstones (adding,
removing and listing them) and the store-wide listings that
:func:`~memory_chains.stores.forget_user` and :func:`~memory_chains.stores.export_user`
rely on (``list_sessions``, ``list(())``).
They raise :class:`~memory_chains.errors.StoreUnavailableError` during an outage, so an
erasure or an export can never silently report "nothing to do". Other store errors
(a corrupt file, a newer schema, a write for a forgotten user) are not outages and
propagate.

Example:
    >>> from memory_chains.stores import InMemoryStore
    >>> store = ResilientStore(InMemoryStore())
    >>> store.append_turn("alice", "s1", "Bonjour", "Salut !").seq
    1
    >>> store.stats().available, store.stats().dropped_writes
    (True, 0)
"""

from __future__ import annotations

import builtins
import json
import logging
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from memory_chains.errors import (
    InvalidInputError,
    StoreUnavailableError,
    StoreUnavailableWarning,
)
from memory_chains.stores._base import BaseStore
from memory_chains.stores._values import Document, Namespace, SummaryState, Tombstone, Turn

__all__ = ["ResilienceStats", "ResilientStore"]

log = logging.getLogger(__name__)

T = TypeVar("T")

_MISSING: Any = object()  # a read answered empty because of an outage


@dataclass(frozen=True)
class ResilienceStats:
    """What a :class:`ResilientStore` went through since it was created.

    Attributes:
        available: False while an outage is going on.
        outages: outages seen (each began with one warning).
        dropped_writes: turns, summaries and documents not written because of an outage.
        degraded_reads: reads answered empty because of an outage.
        stale_writes: documents not overwritten after an outage because the writer's
            copy came from a read answered empty during it (see :class:`ResilientStore`).
        last_error: the message of the last outage's error ("" if none).

    Example:
        >>> ResilienceStats(True, 0, 0, 0).outages
        0
    """

    available: bool
    outages: int
    dropped_writes: int
    degraded_reads: int
    stale_writes: int = 0
    last_error: str = ""


class ResilientStore(BaseStore):
    """A store that keeps a conversation going when the wrapped store is unreachable.

    Args:
        inner: the store doing the work (any :class:`BaseStore`, e.g. from
            ``open_store(url, setup=False)``).
        retry_interval: seconds during which, after a failure, calls do not touch the
            store at all (they degrade at once); the next call after that tries again.
            ``0`` tries on every call.

    A document read during an outage reads as missing; a memory that caches it and later
    writes it back whole (read-modify-write, like the entity tracker) would then replace
    the real document with one built from nothing. So after such a read, a write of that
    document (or under that listed namespace) is done only if the document does not exist
    in the store; otherwise it is dropped and counted in ``stale_writes`` until the
    document is read again successfully.

    Raises:
        InvalidInputError: ``inner`` is not a store or ``retry_interval`` is negative.

    Example:
        >>> from memory_chains.memory import BufferCore
        >>> from memory_chains.stores import open_store
        >>> store = open_store("memory://", resilient=True)
        >>> mem = BufferCore(store, user_id="alice")
        >>> _ = mem.add_exchange("Bonjour", "Salut !")
        >>> len(mem.context().turns), store.stats().outages
        (1, 0)

        A store that cannot be opened (its directory is a file): the turn is dropped,
        reads are empty, one warning.

        >>> import os, tempfile, warnings
        >>> from memory_chains.stores import SQLiteStore
        >>> blocker = os.path.join(tempfile.mkdtemp(), "not-a-directory")
        >>> open(blocker, "w").close()
        >>> down = ResilientStore(SQLiteStore(os.path.join(blocker, "memory.sqlite3")))
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     seq = down.append_turn("alice", "s1", "Bonjour", "Salut !").seq
        ...     turns = down.last_turns("alice", "s1", 5)
        >>> seq, turns, len(caught), down.stats().dropped_writes
        (0, [], 1, 1)
    """

    def __init__(self, inner: BaseStore, *, retry_interval: float = 1.0) -> None:
        super().__init__()
        if not isinstance(inner, BaseStore):
            raise InvalidInputError(
                f"ResilientStore wraps a BaseStore (e.g. open_store(url, setup=False)), "
                f"got {type(inner).__name__}"
            )
        if (
            isinstance(retry_interval, bool)
            or not isinstance(retry_interval, (int, float))
            or not 0 <= retry_interval < 86_400
        ):
            raise InvalidInputError(
                f"retry_interval must be a number of seconds >= 0, got {retry_interval!r}"
            )
        self.inner = inner
        self.scheme = inner.scheme
        self.read_only = inner.read_only
        self.retry_interval = float(retry_interval)
        self._state = threading.Lock()
        self._down_since: float | None = None  # monotonic time the outage began
        self._last_failure = 0.0
        self._outages = 0
        self._dropped = 0
        self._degraded = 0
        self._stale = 0
        self._last_error = ""
        # documents (and listing prefixes) read as empty during an outage: the reader may
        # write back a copy built from nothing (read-modify-write), see _put
        self._blind_keys: set[tuple[Namespace, str]] = set()
        self._blind_prefixes: set[Namespace] = set()

    def __repr__(self) -> str:
        return f"ResilientStore({self.inner!r})"

    # -- outage bookkeeping --------------------------------------------------------------

    def stats(self) -> ResilienceStats:
        """The counters so far (a snapshot)."""
        with self._state:
            return ResilienceStats(
                available=self._down_since is None,
                outages=self._outages,
                dropped_writes=self._dropped,
                degraded_reads=self._degraded,
                stale_writes=self._stale,
                last_error=self._last_error,
            )

    @property
    def available(self) -> bool:
        """False while an outage is going on."""
        with self._state:
            return self._down_since is None

    def _skipping(self) -> bool:
        """True when down and the last failure is too recent to try the store again."""
        with self._state:
            return (
                self._down_since is not None
                and time.monotonic() - self._last_failure < self.retry_interval
            )

    def _failed(self, exc: StoreUnavailableError) -> None:
        now = time.monotonic()
        with self._state:
            self._last_failure = now
            self._last_error = str(exc)
            if self._down_since is not None:
                return
            self._down_since = now
            self._outages += 1
        message = (
            f"the memory store {self.inner!r} is unreachable ({exc}); answering without "
            "memory and dropping new turns until it is back"
        )
        log.warning(message)
        warnings.warn(StoreUnavailableWarning(message), stacklevel=4)

    def _succeeded(self) -> None:
        with self._state:
            if self._down_since is None:
                return
            lasted = time.monotonic() - self._down_since
            self._down_since = None
            dropped = self._dropped
        log.info(
            "the memory store %r is back after %.1f s; memory resumes (%d writes dropped so far)",
            self.inner,
            lasted,
            dropped,
        )

    def _count(self, write: bool | None) -> None:
        with self._state:
            if write:
                self._dropped += 1
            elif write is not None:
                self._degraded += 1

    def _try(self, call: Callable[[], T], fallback: T, *, write: bool | None) -> T:
        """``call()`` on the inner store, or ``fallback`` during an outage (counted as a
        dropped write, a degraded read, or not at all when ``write`` is None)."""
        if self._skipping():
            self._count(write)
            return fallback
        try:
            self.inner._ensure()  # set up on first use, and again after a failed setup
            result = call()
        except StoreUnavailableError as exc:
            self._failed(exc)
            self._count(write)
            return fallback
        self._succeeded()
        return result

    def _must(self, call: Callable[[], T], what: str) -> T:
        """``call()`` on the inner store; an outage raises (never silently skipped)."""
        if self._skipping():
            with self._state:
                error = self._last_error
            raise StoreUnavailableError(
                f"the memory store {self.inner!r} is unreachable ({error}): {what} was not "
                "done; retry once it is back"
            )
        try:
            self.inner._ensure()
            result = call()
        except StoreUnavailableError as exc:
            self._failed(exc)
            raise
        self._succeeded()
        return result

    # -- lifecycle -----------------------------------------------------------------------

    def _setup(self) -> None:
        # an outage at setup is an outage like any other: inner setup is retried on use
        self._try(self.inner.setup, None, write=None)

    def close(self) -> None:
        """Close the inner store."""
        self.inner.close()

    # -- primitives ----------------------------------------------------------------------

    def _append_turn(
        self, user_id: str, session_id: str, human: str, ai: str, metadata_json: str, now: float
    ) -> Turn:
        # seq 0 marks a turn that was not stored (real turns start at 1)
        dropped = Turn(0, human, ai, now, json.loads(metadata_json))
        return self._try(
            lambda: self.inner._append_turn(user_id, session_id, human, ai, metadata_json, now),
            dropped,
            write=True,
        )

    def _read_turns(
        self, user_id: str, session_id: str, after_seq: int, last: int | None
    ) -> builtins.list[Turn]:
        return self._try(
            lambda: self.inner._read_turns(user_id, session_id, after_seq, last), [], write=False
        )

    def _count_turns(self, user_id: str, session_id: str) -> tuple[int, int]:
        return self._try(lambda: self.inner._count_turns(user_id, session_id), (0, 0), write=False)

    def _delete_session(self, user_id: str, session_id: str) -> int:
        return self._must(
            lambda: self.inner._delete_session(user_id, session_id), "deleting the session"
        )

    def _list_sessions(self, user_id: str) -> builtins.list[str]:
        return self._must(lambda: self.inner._list_sessions(user_id), "listing the sessions")

    def _get_summary(self, user_id: str, session_id: str) -> SummaryState | None:
        return self._try(lambda: self.inner._get_summary(user_id, session_id), None, write=False)

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
        # None reads as a lost compare-and-swap: the memory keeps its turns verbatim
        return self._try(
            lambda: self.inner._replace_summary(
                user_id, session_id, text, upto_seq, data_json, expected_version, now
            ),
            None,
            write=True,
        )

    def _put(self, namespace: Namespace, key: str, value_json: str, now: float) -> None:
        def write() -> None:
            if self._blind(namespace, key):
                if self.inner._get(namespace, key) is not None:
                    self._stale_write(namespace, key)
                    return
                self._see(namespace, key)  # nothing to overwrite: the empty read was right
            self.inner._put(namespace, key, value_json, now)

        self._try(write, None, write=True)

    def _put_if(
        self, namespace: Namespace, key: str, value_json: str, expected_json: str | None, now: float
    ) -> bool:
        # never a silent False during an outage: the caller would read and retry in vain
        written = self._must(
            lambda: self.inner._put_if(namespace, key, value_json, expected_json, now),
            "a compare-and-swap of a document",
        )
        self._see(namespace, key)
        return written

    def _get(self, namespace: Namespace, key: str) -> Document | None:
        doc = self._try(lambda: self.inner._get(namespace, key), _MISSING, write=False)
        if doc is _MISSING:
            with self._state:
                self._blind_keys.add((namespace, key))
            return None
        self._see(namespace, key)
        return doc

    def _list(self, prefix: Namespace, limit: int | None) -> builtins.list[Document]:
        if not prefix:  # the whole store: export / forget, never answered empty
            return self._must(lambda: self.inner._list(prefix, limit), "listing every document")
        docs = self._try(lambda: self.inner._list(prefix, limit), None, write=False)
        with self._state:
            if docs is None:
                self._blind_prefixes.add(prefix)
                return []
            if limit is None:
                self._blind_prefixes.discard(prefix)
        return docs

    # -- documents read blind during an outage -------------------------------------------

    def _blind(self, namespace: Namespace, key: str) -> bool:
        with self._state:
            if not (self._blind_keys or self._blind_prefixes):
                return False
            return (namespace, key) in self._blind_keys or any(
                namespace[: len(p)] == p for p in self._blind_prefixes
            )

    def _see(self, namespace: Namespace, key: str) -> None:
        with self._state:
            self._blind_keys.discard((namespace, key))

    def _stale_write(self, namespace: Namespace, key: str) -> None:
        with self._state:
            self._stale += 1
        log.warning(
            "not overwriting %r/%r in %r: the writer's copy was built from a read answered "
            "empty during an outage; read the document again to update it",
            namespace,
            key,
            self.inner,
        )

    def _delete(self, namespace: Namespace, key: str) -> bool:
        return self._must(lambda: self.inner._delete(namespace, key), "deleting the document")

    def _after_erasure(self) -> None:
        self._must(self.inner._after_erasure, "rebuilding the store after an erasure")

    def exists(self) -> bool:
        """Whether the inner store exists (an outage raises: never a silent "no")."""
        return self.inner.exists()

    def _add_tombstone(self, user_id: str, session_id: str | None, now: float) -> Tombstone:
        return self._must(
            lambda: self.inner._add_tombstone(user_id, session_id, now), "adding a tombstone"
        )

    def _remove_tombstones(self, user_id: str, session_id: str | None) -> int:
        return self._must(
            lambda: self.inner._remove_tombstones(user_id, session_id), "removing tombstones"
        )

    def _tombstones(self, user_id: str) -> builtins.list[Tombstone]:
        return self._must(lambda: self.inner._tombstones(user_id), "listing tombstones")
