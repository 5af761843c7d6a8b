"""The store side of the session manager: :class:`SessionRecords`.

A session's metadata is one document under ``("sessions", user_id)``; this base class of
:class:`~memory_chains.sessions.SessionManager` reads it back as a
:class:`~memory_chains.sessions.Session` (expiry computed, a session with turns but no
document reported too), checks the ids and session references the manager is given, and
changes a document by compare-and-swap (:meth:`~memory_chains.stores.BaseStore.put_if`)
retried on a fresh read, so concurrent managers never undo each other's change.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable

from memory_chains.errors import InvalidInputError, StoreError
from memory_chains.sessions._session import SESSIONS_NAMESPACE, Session
from memory_chains.stores import BaseStore, Document, validate_id

__all__ = ["SessionRecords", "SessionRef"]

SessionRef = Session | str


# How many times an update reads the session again after losing a compare-and-swap.
_UPDATE_ATTEMPTS = 20


class SessionRecords:
    """Reading, checking and compare-and-swap writing of session documents in ``store``.

    Holds no state of its own: the :class:`~memory_chains.sessions.SessionManager` that
    inherits it sets :attr:`store`, :attr:`ttl` (seconds, ``None``: never expires) and
    :attr:`clock`.
    """

    store: BaseStore
    ttl: float | None
    clock: Callable[[], float]

    @staticmethod
    def _session_id(user_id: str, session: object) -> str:
        if isinstance(session, Session):
            if session.user_id != user_id:
                raise InvalidInputError(
                    f"session {session.session_id!r} belongs to another user, not {user_id!r}"
                )
            return session.session_id
        return validate_id(session, "session_id")

    @staticmethod
    def _device(device: object) -> str | None:
        return None if device is None else validate_id(device, "device")

    def _namespace(self, user_id: str) -> tuple[str, str]:
        return (SESSIONS_NAMESPACE, user_id)

    def _records(self, user_id: str) -> builtins.list[Document]:
        ns = self._namespace(user_id)
        return [d for d in self.store.list(ns) if d.namespace == ns]

    def _load(self, user_id: str, session_id: str, now: float) -> Session | None:
        doc = self.store.get(self._namespace(user_id), session_id)
        return self._from_doc(user_id, session_id, now, doc)

    def _from_doc(
        self, user_id: str, session_id: str, now: float, doc: Document | None
    ) -> Session | None:
        """The session from its document as already read (``None``: it has none), and
        its last turn; ``None`` when it has neither."""
        last = self.store.last_turns(user_id, session_id, 1)
        if doc is None and not last:
            return None
        last_turn_at = last[0].created_at if last else 0.0
        record = doc.value if doc is not None else {"created_at": last_turn_at}
        return Session.from_record(
            user_id, session_id, record, ttl=self.ttl, now=now, last_turn_at=last_turn_at
        )

    def _require(self, user_id: str, session_id: str, now: float) -> Session:
        session = self._load(user_id, session_id, now)
        if session is None:
            raise InvalidInputError(
                f"no session {session_id!r} for user {user_id!r}: list them with "
                "SessionManager.list() or start one with resume()/create()"
            )
        return session

    @staticmethod
    def _refuse_merged(session: Session) -> None:
        if session.merged_into is not None:
            raise InvalidInputError(
                f"session {session.session_id!r} was merged into {session.merged_into!r}: "
                "use that session"
            )

    def _update(
        self,
        user_id: str,
        session_id: str,
        change: Callable[[Session, float], Session | None],
        missing: Session | None = None,
    ) -> Session:
        """Read the session, ``change`` it (``None``: nothing to write) and write it back
        only if no other writer, in this process or another, changed its record meanwhile
        (:meth:`~memory_chains.stores.BaseStore.put_if`); else read it again and retry.
        ``missing`` stands for a session that is gone (a merge source whose turns were
        just moved); without it, a missing session is an error.

        Raises:
            InvalidInputError: unknown session (or whatever ``change`` raises).
            StoreError: the record kept changing under other writers.
        """
        namespace = self._namespace(user_id)
        for _ in range(_UPDATE_ATTEMPTS):
            now = self.clock()
            doc = self.store.get(namespace, session_id)
            session = self._from_doc(user_id, session_id, now, doc)
            if session is None:
                session = (
                    missing if missing is not None else self._require(user_id, session_id, now)
                )
            changed = change(session, now)
            if changed is None:
                return session
            expected = None if doc is None else doc.value
            if self.store.put_if(namespace, session_id, changed.to_record(), expected=expected):
                return changed
        raise StoreError(
            f"session {session_id!r} of user {user_id!r} changed under other writers "
            f"{_UPDATE_ATTEMPTS} times in a row; nothing was written: retry"
        )

    def _save(self, session: Session) -> None:
        self.store.put(self._namespace(session.user_id), session.session_id, session.to_record())
