"""Conversations per user, across devices: :class:`SessionManager`.

A session is a turn log in a :class:`~memory_chains.stores.BaseStore` (what the memories
write under ``(user_id, session_id)``) plus one metadata document under
``("sessions", user_id)``, key ``session_id``, so that
:func:`~memory_chains.stores.forget_user` and :func:`~memory_chains.stores.export_user`
cover sessions like everything else. One code path for every backend; async methods run
the sync ones in a worker thread (the store calls block).

Expiry is computed, not scheduled: a session whose last activity (the later of its last
:meth:`~SessionManager.touch` and its last turn) is older than ``ttl`` is *expired* —
:meth:`~SessionManager.resume` skips it and :meth:`~SessionManager.list` hides it — and
:meth:`~SessionManager.purge_expired` deletes expired sessions for good.

Every change of a session's document (touch, end, the sources of a merge) is a
compare-and-swap (:meth:`~memory_chains.stores.BaseStore.put_if`) retried on a fresh read:
managers in other threads or processes, on any backend, never undo each other's change (a
touch racing an end never reopens the session).

Example:
    >>> from memory_chains.stores import InMemoryStore
    >>> manager = SessionManager(InMemoryStore())
    >>> phone = manager.resume("alice", device="phone")
    >>> laptop = manager.resume("alice", device="laptop")
    >>> laptop.session_id == phone.session_id, laptop.devices
    (True, ('phone', 'laptop'))
"""

from __future__ import annotations

import asyncio
import builtins
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import timedelta

from memory_chains.errors import InvalidInputError
from memory_chains.sessions._merge import merge_sessions
from memory_chains.sessions._records import SessionRecords, SessionRef
from memory_chains.sessions._session import (
    SESSIONS_NAMESPACE,
    Session,
    new_session_id,
    ttl_seconds,
)
from memory_chains.stores import (
    BaseStore,
    ForgetResult,
    forget_session,
    open_store,
    validate_id,
)

__all__ = ["SessionManager"]


class SessionManager(SessionRecords):
    """Create, resume, list, merge, end and expire the sessions of each user.

    Args:
        store: where sessions live: a :class:`~memory_chains.stores.BaseStore` or a store
            URL (``"sqlite:///memory.sqlite3"``).
        ttl: idle time after which a session expires (``timedelta`` or seconds); 24 hours
            by default; ``None`` never expires sessions.
        clock: returns the current UNIX time (inject a fake one in tests).

    Methods taking a session accept its id or a :class:`Session`; user, session and
    device ids follow the store's id rules (1-64 of ``A-Z a-z 0-9 _ - . : @``) and a bad
    one raises :class:`~memory_chains.errors.InvalidInputError` before anything is written.

    Concurrency: two devices resuming at the same instant for a user with no session may
    create two sessions (merge them afterwards). Every change of a session's record is a
    compare-and-swap retried on a fresh read, so a touch never writes back a session that
    a concurrent :meth:`end` closed, in this process or another one sharing the store.

    Turns are stamped by the store with the real time: a fake ``clock`` must stay
    comparable to :func:`time.time` (e.g. real time plus an offset).

    Example:
        >>> from memory_chains.stores import InMemoryStore
        >>> now = [time.time()]
        >>> manager = SessionManager(InMemoryStore(), ttl=timedelta(hours=1), clock=lambda: now[0])
        >>> s = manager.create("bob", device="phone")
        >>> now[0] += 2 * 3600  # two idle hours later
        >>> manager.list("bob"), manager.get("bob", s).status
        ([], 'expired')
    """

    def __init__(
        self,
        store: BaseStore | str,
        *,
        ttl: timedelta | float | None = timedelta(hours=24),
        clock: Callable[[], float] = time.time,
    ) -> None:
        if isinstance(store, str):
            store = open_store(store, setup=False)
        if not isinstance(store, BaseStore):
            raise InvalidInputError(
                f"store must be a BaseStore or a store URL, got {type(store).__name__}"
            )
        if not callable(clock):
            raise InvalidInputError("clock must be a callable returning UNIX seconds")
        self.store = store
        self.ttl = ttl_seconds(ttl)
        self.clock = clock

    # -- reading ------------------------------------------------------------------------

    def get(self, user_id: str, session_id: SessionRef) -> Session | None:
        """The session as it is now (expiry computed), or ``None`` if unknown.

        A session written by a memory without the manager (turns but no metadata) is
        reported too, with its last turn's time as creation time.

        Example:
            >>> from memory_chains.stores import InMemoryStore
            >>> SessionManager(InMemoryStore()).get("alice", "nope") is None
            True
        """
        user_id = validate_id(user_id, "user_id")
        session_id = self._session_id(user_id, session_id)
        return self._load(user_id, session_id, self.clock())

    def list(self, user_id: str, *, include_expired: bool = False) -> builtins.list[Session]:
        """The user's sessions, most recently active first.

        Args:
            include_expired: also return expired sessions and the tombstones left by
                :meth:`merge`; by default only active and ended sessions.

        Example:
            >>> from memory_chains.stores import InMemoryStore
            >>> m = SessionManager(InMemoryStore())
            >>> _ = m.create("alice", session_id="a"); _ = m.end("alice", "a")
            >>> [(s.session_id, s.status) for s in m.list("alice")]
            [('a', 'ended')]
        """
        user_id = validate_id(user_id, "user_id")
        now = self.clock()
        records = {d.key: d for d in self._records(user_id)}
        ids = set(records) | set(self.store.list_sessions(user_id))
        sessions = [
            s
            for sid in ids
            if (s := self._from_doc(user_id, sid, now, records.get(sid))) is not None
        ]
        if not include_expired:
            sessions = [s for s in sessions if s.status in ("active", "ended")]
        sessions.sort(key=lambda s: (s.last_active_at, s.created_at, s.session_id), reverse=True)
        return sessions

    def latest(self, user_id: str) -> Session | None:
        """The most recently active session :meth:`resume` would return, or ``None``.

        Example:
            >>> from memory_chains.stores import InMemoryStore
            >>> SessionManager(InMemoryStore()).latest("alice") is None
            True
        """
        return next((s for s in self.list(user_id) if s.resumable), None)

    # -- writing ------------------------------------------------------------------------

    def create(
        self, user_id: str, device: str | None = None, *, session_id: str | None = None
    ) -> Session:
        """Start a new session (a generated id unless ``session_id`` is given).

        Raises:
            InvalidInputError: a bad id or device, or ``session_id`` already exists.

        Example:
            >>> from memory_chains.stores import InMemoryStore
            >>> s = SessionManager(InMemoryStore()).create("alice", device="phone")
            >>> s.status, s.devices, s.session_id.startswith("s-")
            ('active', ('phone',), True)
        """
        user_id = validate_id(user_id, "user_id")
        device = self._device(device)
        now = self.clock()
        if session_id is None:
            session_id = new_session_id(now)
        session_id = validate_id(session_id, "session_id")
        if self._load(user_id, session_id, now) is not None:
            raise InvalidInputError(
                f"session {session_id!r} already exists for user {user_id!r}: resume it "
                "with touch(), or create one without session_id to get a fresh id"
            )
        session = Session(
            user_id,
            session_id,
            created_at=now,
            last_active_at=now,
            expires_at=math.inf if self.ttl is None else now + self.ttl,
        ).with_device(device)
        if not self.store.put_if(
            self._namespace(user_id), session_id, session.to_record(), expected=None
        ):
            raise InvalidInputError(
                f"session {session_id!r} was just created for user {user_id!r} by another "
                "writer: resume it with touch()"
            )
        return session

    def resume(self, user_id: str, device: str | None = None) -> Session:
        """The user's latest active session, touched (and ``device`` recorded); a new
        session when there is none (all expired, ended or merged).

        Every device of a user resumes the same latest session.

        Example:
            >>> from memory_chains.stores import InMemoryStore
            >>> m = SessionManager(InMemoryStore())
            >>> m.resume("alice").session_id == m.resume("alice").session_id
            True
        """
        latest = self.latest(user_id)
        if latest is None:
            return self.create(user_id, device)
        return self.touch(user_id, latest, device=device)

    def touch(self, user_id: str, session_id: SessionRef, *, device: str | None = None) -> Session:
        """Record activity now (and ``device``): the session's TTL starts again.

        Appending a turn counts as activity too, without calling this. An expired session
        touched explicitly becomes active again; an ended one stays ended.

        Raises:
            InvalidInputError: unknown session, or a session merged into another (the
                message names the one to use).

        Example:
            >>> from memory_chains.stores import InMemoryStore
            >>> m = SessionManager(InMemoryStore())
            >>> _ = m.create("alice", session_id="a")
            >>> m.touch("alice", "a", device="tablet").devices
            ('tablet',)
        """
        user_id = validate_id(user_id, "user_id")
        session_id = self._session_id(user_id, session_id)
        device = self._device(device)

        def touched(session: Session, now: float) -> Session:
            self._refuse_merged(session)
            active = max(session.last_active_at, now)
            return replace(
                session,
                last_active_at=active,
                expires_at=math.inf if self.ttl is None else active + self.ttl,
                expired=False,
            ).with_device(device)

        return self._update(user_id, session_id, touched)

    def end(self, user_id: str, session_id: SessionRef) -> Session:
        """Close a session: its turns stay, :meth:`resume` no longer returns it.

        Idempotent (the first end time is kept).

        Example:
            >>> from memory_chains.stores import InMemoryStore
            >>> m = SessionManager(InMemoryStore())
            >>> s = m.create("alice")
            >>> m.end("alice", s).status, m.resume("alice").session_id != s.session_id
            ('ended', True)
        """
        user_id = validate_id(user_id, "user_id")
        session_id = self._session_id(user_id, session_id)

        def ended(session: Session, now: float) -> Session | None:
            self._refuse_merged(session)
            return None if session.ended_at is not None else replace(session, ended_at=now)

        return self._update(user_id, session_id, ended)

    def merge(
        self,
        user_id: str,
        sessions: Sequence[SessionRef],
        *,
        into: str | None = None,
        device: str | None = None,
    ) -> Session:
        """Merge sessions of one user into one: every turn, in time order, numbered 1, 2, …

        The merged session is written first; only then are the sources' turns and
        summaries deleted. Each source keeps a metadata *tombstone* (status ``"merged"``,
        :attr:`Session.merged_into` naming the new session) so a device still holding an
        old id can find where its conversation went; tombstones are purged with expired
        sessions. Each moved turn's metadata records where it came from
        (``merged_from``: session id, seq, original time). Summaries are not merged: a
        summary memory rebuilds one from the turns.

        Args:
            sessions: the sessions to merge (at least one, distinct).
            into: the id of the merged session: a new or empty session; generated when
                ``None``.
            device: recorded on the merged session with the sources' devices.

        Raises:
            InvalidInputError: bad or unknown sessions, a session already merged, or
                ``into`` naming a source or a session that already has turns.
            StoreError: a source received new turns during the merge; the partial copy
                was removed and the sources are untouched: retry.

        Example:
            >>> from memory_chains.stores import InMemoryStore
            >>> store = InMemoryStore()
            >>> m = SessionManager(store)
            >>> _ = store.append_turn("alice", "phone", "q1", "a1")
            >>> _ = store.append_turn("alice", "laptop", "q2", "a2")
            >>> merged = m.merge("alice", ["phone", "laptop"], into="all")
            >>> [(t.seq, t.human) for t in store.turns_after("alice", "all")]
            [(1, 'q1'), (2, 'q2')]
            >>> m.get("alice", "phone").merged_into, merged.merged_from
            ('all', ('phone', 'laptop'))
        """
        return merge_sessions(self, user_id, sessions, into=into, device=device)

    def forget_session(self, user_id: str, session_id: SessionRef) -> ForgetResult:
        """Delete a session completely: turns, summary, metadata and per-session documents
        (:func:`~memory_chains.stores.forget_session`), leaving a tombstone: writes to it
        then raise :class:`~memory_chains.errors.ForgottenError` until
        :func:`~memory_chains.stores.readmit_session`.

        Example:
            >>> from memory_chains.stores import InMemoryStore
            >>> store = InMemoryStore()
            >>> m = SessionManager(store)
            >>> s = m.create("alice")
            >>> _ = store.append_turn("alice", s.session_id, "q", "a")
            >>> m.forget_session("alice", s)
            ForgetResult(sessions=1, turns=1, documents=1)
        """
        user_id = validate_id(user_id, "user_id")
        return forget_session(self.store, user_id, self._session_id(user_id, session_id))

    def purge_expired(self, user_id: str | None = None) -> int:
        """Delete every expired session (and merge tombstone) for good; return how many.

        Args:
            user_id: one user; ``None`` purges the sessions the manager tracks for every
                user (sessions written without the manager are purged per user only).

        Example:
            >>> from memory_chains.stores import InMemoryStore
            >>> now = [0.0]
            >>> m = SessionManager(InMemoryStore(), ttl=60, clock=lambda: now[0])
            >>> _ = m.create("alice"); now[0] = 61.0
            >>> m.purge_expired(), m.list("alice", include_expired=True)
            (1, [])
        """
        if user_id is None:
            docs = self.store.list((SESSIONS_NAMESPACE,))
            users = sorted({d.namespace[1] for d in docs if len(d.namespace) == 2})
        else:
            users = [validate_id(user_id, "user_id")]
        purged = 0
        for user in users:
            for session in self.list(user, include_expired=True):
                if session.status == "expired" or (
                    session.merged_into is not None and session.expired
                ):
                    # housekeeping, not an erasure request: no tombstone, the id may return
                    forget_session(self.store, user, session.session_id, tombstone=False)
                    purged += 1
        return purged

    # -- async flavours (the store calls block: run them in a thread) ---------------------

    async def aget(self, user_id: str, session_id: SessionRef) -> Session | None:
        """Async :meth:`get`."""
        return await asyncio.to_thread(self.get, user_id, session_id)

    async def alist(self, user_id: str, *, include_expired: bool = False) -> builtins.list[Session]:
        """Async :meth:`list`."""
        return await asyncio.to_thread(self.list, user_id, include_expired=include_expired)

    async def alatest(self, user_id: str) -> Session | None:
        """Async :meth:`latest`."""
        return await asyncio.to_thread(self.latest, user_id)

    async def acreate(
        self, user_id: str, device: str | None = None, *, session_id: str | None = None
    ) -> Session:
        """Async :meth:`create`."""
        return await asyncio.to_thread(self.create, user_id, device, session_id=session_id)

    async def aresume(self, user_id: str, device: str | None = None) -> Session:
        """Async :meth:`resume`."""
        return await asyncio.to_thread(self.resume, user_id, device)

    async def atouch(
        self, user_id: str, session_id: SessionRef, *, device: str | None = None
    ) -> Session:
        """Async :meth:`touch`."""
        return await asyncio.to_thread(self.touch, user_id, session_id, device=device)

    async def aend(self, user_id: str, session_id: SessionRef) -> Session:
        """Async :meth:`end`."""
        return await asyncio.to_thread(self.end, user_id, session_id)

    async def amerge(
        self,
        user_id: str,
        sessions: Sequence[SessionRef],
        *,
        into: str | None = None,
        device: str | None = None,
    ) -> Session:
        """Async :meth:`merge`."""
        return await asyncio.to_thread(self.merge, user_id, sessions, into=into, device=device)

    async def aforget_session(self, user_id: str, session_id: SessionRef) -> ForgetResult:
        """Async :meth:`forget_session`."""
        return await asyncio.to_thread(self.forget_session, user_id, session_id)

    async def apurge_expired(self, user_id: str | None = None) -> int:
        """Async :meth:`purge_expired`."""
        return await asyncio.to_thread(self.purge_expired, user_id)
