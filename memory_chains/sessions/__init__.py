"""Conversations per user and device: :class:`SessionManager` and its :class:`Session`.

Create, resume the latest (or create), list, merge, end, expire after an idle TTL
(24 hours by default) and forget sessions, on any :class:`~memory_chains.stores.BaseStore`.
Session metadata lives under ``("sessions", user_id)`` so that
:func:`~memory_chains.stores.forget_user` and :func:`~memory_chains.stores.export_user`
cover it.

Example:
    >>> from memory_chains.memory import WindowCore
    >>> from memory_chains.stores import InMemoryStore
    >>> store = InMemoryStore()
    >>> session = SessionManager(store).resume("alice", device="phone")
    >>> memory = WindowCore(store=store, user_id="alice", session_id=session.session_id)
    >>> _ = memory.add_exchange("Bonjour", "Bonjour Alice !")
    >>> SessionManager(store).resume("alice", device="laptop").session_id == session.session_id
    True
"""

from __future__ import annotations

from memory_chains.sessions._manager import SessionManager
from memory_chains.sessions._session import (
    SESSIONS_NAMESPACE,
    Session,
    SessionStatus,
    merged_turn_order,
    new_session_id,
)

__all__ = [
    "SESSIONS_NAMESPACE",
    "Session",
    "SessionManager",
    "SessionStatus",
    "merged_turn_order",
    "new_session_id",
]
