"""The session value and the pure rules around it: :class:`Session`, its status, its stored
form, new ids and the order of merged turns.

Nothing here does I/O; :class:`~memory_chains.sessions.SessionManager` reads and writes
the stored form (one JSON document per session under ``("sessions", user_id)``).

Example:
    >>> s = Session("alice", "s1", created_at=0.0, last_active_at=10.0, expires_at=20.0)
    >>> s.status
    'active'
    >>> Session.from_record("alice", "s1", s.to_record(), ttl=100.0, now=50.0).expires_at
    110.0
"""

from __future__ import annotations

import math
import secrets
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any, Literal

from memory_chains.errors import InvalidInputError
from memory_chains.stores import Turn

__all__ = [
    "SESSIONS_NAMESPACE",
    "Session",
    "SessionStatus",
    "merged_turn_order",
    "new_session_id",
    "ttl_seconds",
]

#: First label of the namespace holding session metadata: ``("sessions", user_id)``.
SESSIONS_NAMESPACE = "sessions"

SessionStatus = Literal["active", "ended", "merged", "expired"]

# Metadata key under which a merged turn remembers where it came from.
MERGED_FROM_KEY = "merged_from"


def ttl_seconds(ttl: timedelta | float | int | None) -> float | None:
    """Seconds of a TTL given as a ``timedelta`` or a number; ``None`` means "never".

    Raises:
        InvalidInputError: zero, negative, not finite, or not a duration.

    Example:
        >>> ttl_seconds(timedelta(hours=24))
        86400.0
    """
    if ttl is None:
        return None
    if isinstance(ttl, timedelta):
        seconds = ttl.total_seconds()
    elif isinstance(ttl, (int, float)) and not isinstance(ttl, bool):
        seconds = float(ttl)
    else:
        raise InvalidInputError(
            f"ttl must be a timedelta or a number of seconds, got {type(ttl).__name__}"
        )
    if not math.isfinite(seconds) or seconds <= 0:
        raise InvalidInputError(f"ttl must be positive (or None for no expiry), got {ttl!r}")
    return seconds


def new_session_id(now: float) -> str:
    """A fresh session id: UTC time of creation plus 8 random hex digits.

    Ids sort by creation time (to the second) and stay within the id rules (1-64 of
    ``A-Z a-z 0-9 _ - . : @``).

    Example:
        >>> new_session_id(0.0)[:18]
        's-19700101T000000-'
    """
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now))
    return f"s-{stamp}-{secrets.token_hex(4)}"


@dataclass(frozen=True)
class Session:
    """One conversation of a user, as the session manager sees it.

    Attributes:
        user_id: the owner.
        session_id: the conversation id (the memories' ``session_id``).
        created_at: UNIX time the session was created (or its first turn, for a session
            the manager did not create).
        last_active_at: latest of the last :meth:`SessionManager.touch` and the session's
            last turn.
        expires_at: ``last_active_at + ttl`` (``inf`` when the manager has no TTL).
        devices: the devices that created or resumed the session, first first.
        ended_at: when :meth:`SessionManager.end` closed it, else ``None``.
        merged_into: the session its turns were moved to by a merge, else ``None``.
        merged_from: for a merged session, the sessions it was made of.
        expired: the TTL passed (computed when the session was read).

    Example:
        >>> Session("u", "s", created_at=1.0, last_active_at=1.0, ended_at=2.0).status
        'ended'
    """

    user_id: str
    session_id: str
    created_at: float = 0.0
    last_active_at: float = 0.0
    expires_at: float = math.inf
    devices: tuple[str, ...] = ()
    ended_at: float | None = None
    merged_into: str | None = None
    merged_from: tuple[str, ...] = ()
    expired: bool = False

    @property
    def status(self) -> SessionStatus:
        """``"merged"``, ``"ended"``, ``"expired"`` or ``"active"`` (in that precedence)."""
        if self.merged_into is not None:
            return "merged"
        if self.ended_at is not None:
            return "ended"
        if self.expired:
            return "expired"
        return "active"

    @property
    def resumable(self) -> bool:
        """True when :meth:`SessionManager.resume` may return this session."""
        return self.status == "active"

    def to_record(self) -> dict[str, Any]:
        """The JSON document stored for this session (derived fields left out).

        Example:
            >>> sorted(Session("u", "s").to_record())
            ['created_at', 'devices', 'ended_at', 'last_active_at', 'merged_from', 'merged_into']
        """
        return {
            "created_at": self.created_at,
            "last_active_at": self.last_active_at,
            "devices": list(self.devices),
            "ended_at": self.ended_at,
            "merged_into": self.merged_into,
            "merged_from": list(self.merged_from),
        }

    @classmethod
    def from_record(
        cls,
        user_id: str,
        session_id: str,
        record: Mapping[str, Any],
        *,
        ttl: float | None,
        now: float,
        last_turn_at: float = 0.0,
    ) -> Session:
        """Rebuild a session from its stored document, computing expiry at ``now``.

        Unknown or malformed fields fall back to defaults rather than failing: the
        document may have been written by a newer version.
        """
        created = _number(record.get("created_at"))
        active = max(_number(record.get("last_active_at")), created, last_turn_at)
        ended = record.get("ended_at")
        merged_into = record.get("merged_into")
        return cls(
            user_id=user_id,
            session_id=session_id,
            created_at=created,
            last_active_at=active,
            expires_at=math.inf if ttl is None else active + ttl,
            devices=_strings(record.get("devices")),
            ended_at=_number(ended) if isinstance(ended, (int, float)) else None,
            merged_into=merged_into if isinstance(merged_into, str) else None,
            merged_from=_strings(record.get("merged_from")),
            expired=ttl is not None and now >= active + ttl,
        )

    def with_device(self, device: str | None) -> Session:
        """This session with ``device`` added to :attr:`devices` (once)."""
        if device is None or device in self.devices:
            return self
        return replace(self, devices=(*self.devices, device))


def merged_turn_order(sources: Sequence[tuple[str, Sequence[Turn]]]) -> list[tuple[str, Turn]]:
    """The turns of several sessions in time order: ``(session_id, turn)`` pairs.

    A turn that came from an earlier merge keeps its original time (the ``merged_from``
    metadata). Ties keep the order of ``sources``, then ``seq``, so the result is
    deterministic.

    Example:
        >>> a = ("a", [Turn(1, "q1", "r1", 10.0), Turn(2, "q3", "r3", 30.0)])
        >>> b = ("b", [Turn(1, "q2", "r2", 20.0)])
        >>> [t.human for _, t in merged_turn_order([a, b])]
        ['q1', 'q2', 'q3']
    """
    keyed = [
        (original_time(turn), position, turn.seq, session_id, turn)
        for position, (session_id, turns) in enumerate(sources)
        for turn in turns
    ]
    keyed.sort(key=lambda item: item[:3])
    return [(session_id, turn) for *_, session_id, turn in keyed]


def original_time(turn: Turn) -> float:
    """When the exchange really happened: its ``merged_from`` time if it was moved."""
    origin = turn.metadata.get(MERGED_FROM_KEY)
    if isinstance(origin, Mapping):
        value = origin.get("created_at")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    return turn.created_at


def merged_metadata(session_id: str, turn: Turn) -> dict[str, Any]:
    """The metadata of ``turn`` once moved: its own, plus where and when it came from."""
    metadata = dict(turn.metadata)
    if MERGED_FROM_KEY not in metadata:  # keep the first origin across repeated merges
        metadata[MERGED_FROM_KEY] = {
            "session_id": session_id,
            "seq": turn.seq,
            "created_at": turn.created_at,
        }
    return metadata


def _number(value: object) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return 0.0


def _strings(value: object) -> tuple[str, ...]:
    if not isinstance(value, Iterable) or isinstance(value, (str, bytes)):
        return ()
    return tuple(v for v in value if isinstance(v, str))
