"""Merging sessions of one user: :func:`merge_sessions`, behind
:meth:`SessionManager.merge <memory_chains.sessions.SessionManager.merge>`.

Every turn of the sources is copied, in time order, into the merged session (each
recording where it came from); the copy is undone if a source received new turns
meanwhile. Only once the merged session's document is written are the sources' turns
deleted and each source's document turned into a tombstone naming the merged session.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from dataclasses import replace

from memory_chains.errors import InvalidInputError, StoreError
from memory_chains.sessions._records import SessionRecords, SessionRef
from memory_chains.sessions._session import (
    Session,
    merged_metadata,
    merged_turn_order,
    new_session_id,
)
from memory_chains.stores import validate_id

__all__ = ["merge_sessions"]


def merge_sessions(
    manager: SessionRecords,
    user_id: str,
    sessions: Sequence[SessionRef],
    *,
    into: str | None,
    device: str | None,
) -> Session:
    """What :meth:`SessionManager.merge <memory_chains.sessions.SessionManager.merge>`
    does (see there), on ``manager``'s store, TTL and clock."""
    user_id = validate_id(user_id, "user_id")
    device = manager._device(device)
    if isinstance(sessions, (str, Session)) or not isinstance(sessions, Sequence):
        raise InvalidInputError("sessions must be a list of session ids or Session objects")
    ids = [manager._session_id(user_id, s) for s in sessions]
    if not ids or len(set(ids)) != len(ids):
        raise InvalidInputError(f"merge needs one or more distinct sessions, got {ids!r:.200}")
    now = manager.clock()
    sources = [manager._require(user_id, sid, now) for sid in ids]
    for source in sources:
        manager._refuse_merged(source)
    target_id = validate_id(into, "into") if into is not None else new_session_id(now)
    if target_id in ids:
        raise InvalidInputError(
            f"into={target_id!r} is one of the merged sessions: merge into a new id"
        )
    existing = manager._load(user_id, target_id, now)
    if existing is not None and (
        existing.merged_into is not None or manager.store.count_turns(user_id, target_id)
    ):
        raise InvalidInputError(
            f"into={target_id!r} already has turns or was merged: merge into a new id"
        )

    turns = {sid: manager.store.turns_after(user_id, sid) for sid in ids}
    try:
        for sid, turn in merged_turn_order([(sid, turns[sid]) for sid in ids]):
            manager.store.append_turn(
                user_id, target_id, turn.human, turn.ai, merged_metadata(sid, turn)
            )
        for sid in ids:
            expected = turns[sid][-1].seq if turns[sid] else 0
            if manager.store.last_seq(user_id, sid) != expected:
                raise StoreError(
                    f"session {sid!r} received new turns during the merge; nothing was "
                    "merged: stop its writers (or end it) and retry"
                )
    except BaseException:
        # undo the partial copy; if the store fails again, the first error matters more
        # (the partial copy then shows in list() as a session without metadata)
        with contextlib.suppress(StoreError):
            manager.store.delete_session(user_id, target_id)
        raise

    devices: list[str] = list(existing.devices) if existing else []
    for d in [*(d for s in sources for d in s.devices), *([device] if device else [])]:
        if d not in devices:
            devices.append(d)
    last_active = max(s.last_active_at for s in sources)
    merged = Session(
        user_id,
        target_id,
        created_at=min(s.created_at for s in sources),
        last_active_at=last_active,
        expires_at=math.inf if manager.ttl is None else last_active + manager.ttl,
        devices=tuple(devices),
        merged_from=tuple(ids),
    )
    manager._save(merged)
    for source in sources:
        manager.store.delete_session(user_id, source.session_id)
        manager._update(
            user_id,
            source.session_id,
            lambda s, at: replace(s, merged_into=target_id, ended_at=s.ended_at or at),
            missing=source,
        )
    return manager._require(user_id, target_id, manager.clock())
