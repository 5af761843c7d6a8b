"""An in-process store for tests and notebooks: :class:`InMemoryStore`.

Nothing survives the process. Values are kept in their JSON form, so a caller mutating a
dict it stored or received never changes what the store holds.

Example:
    >>> store = InMemoryStore()
    >>> _ = store.append_turn("u", "s", "q", "a")
    >>> store.count_turns("u", "s")
    1
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field

from memory_chains.stores._base import BaseStore
from memory_chains.stores._values import (
    Document,
    Namespace,
    SummaryState,
    Tombstone,
    Turn,
    document_owner,
    forgotten_error,
)

__all__ = ["InMemoryStore"]


@dataclass
class _Session:
    turns: list[Turn] = field(default_factory=list)
    summary: SummaryState | None = None


class InMemoryStore(BaseStore):
    """A store living in a dict, thread-safe, for tests and notebooks (``memory://``).

    Example:
        >>> store = InMemoryStore()
        >>> store.put(("facts", "u"), "k", {"v": 1})
        >>> [d.key for d in store.list(("facts",))]
        ['k']
    """

    scheme = "memory"

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.RLock()
        self._sessions: dict[tuple[str, str], _Session] = {}
        self._docs: dict[tuple[Namespace, str], tuple[str, float, float]] = {}
        # (user, session or "" for the whole user) -> time forgotten
        self._tombs: dict[tuple[str, str], float] = {}

    def _setup(self) -> None:
        pass

    def _refuse_forgotten(self, user_id: str | None, session_id: str | None) -> None:
        """Raise if the user or session has a tombstone; the caller holds the lock."""
        if user_id is None or not self._tombs:
            return
        at = self._tombs.get((user_id, ""))
        if at is not None:
            raise forgotten_error(user_id, None, at)
        at = self._tombs.get((user_id, session_id)) if session_id else None
        if at is not None:
            raise forgotten_error(user_id, session_id, at)

    def _add_tombstone(self, user_id: str, session_id: str | None, now: float) -> Tombstone:
        with self._lock:
            at = self._tombs.setdefault((user_id, session_id or ""), now)
        return Tombstone(user_id, session_id, at)

    def _remove_tombstones(self, user_id: str, session_id: str | None) -> int:
        with self._lock:
            gone = [k for k in self._tombs if k[0] == user_id and (session_id in (None, k[1]))]
            for k in gone:
                del self._tombs[k]
            return len(gone)

    def _tombstones(self, user_id: str) -> list[Tombstone]:
        with self._lock:
            return [
                Tombstone(u, s or None, at) for (u, s), at in self._tombs.items() if u == user_id
            ]

    def _append_turn(
        self, user_id: str, session_id: str, human: str, ai: str, metadata_json: str, now: float
    ) -> Turn:
        with self._lock:
            self._refuse_forgotten(user_id, session_id)
            session = self._sessions.setdefault((user_id, session_id), _Session())
            seq = session.turns[-1].seq + 1 if session.turns else 1
            turn = Turn(seq, human, ai, now, json.loads(metadata_json))
            session.turns.append(turn)
            return turn

    def _read_turns(
        self, user_id: str, session_id: str, after_seq: int, last: int | None
    ) -> list[Turn]:
        with self._lock:
            session = self._sessions.get((user_id, session_id))
            if session is None:
                return []
            turns = session.turns
            # seq is 1..n without gaps in this backend: index arithmetic, no scan
            start = max(after_seq, 0)
            if last is not None:
                start = max(start, len(turns) - last)
            return list(turns[start:])

    def _count_turns(self, user_id: str, session_id: str) -> tuple[int, int]:
        with self._lock:
            session = self._sessions.get((user_id, session_id))
            if session is None or not session.turns:
                return 0, 0
            return len(session.turns), session.turns[-1].seq

    def _delete_session(self, user_id: str, session_id: str) -> int:
        with self._lock:
            session = self._sessions.get((user_id, session_id))
            if session is None:
                session = self._sessions[(user_id, session_id)] = _Session()
            deleted = len(session.turns)
            version = session.summary.version if session.summary else 0
            # reset, not removed: the advanced version makes stale compactions fail
            session.turns = []
            session.summary = SummaryState("", 0, {}, version + 1, time.time())
            return deleted

    def _list_sessions(self, user_id: str) -> list[str]:
        with self._lock:
            return sorted(
                s
                for (u, s), session in self._sessions.items()
                if u == user_id
                and (session.turns or (session.summary and session.summary.upto_seq > 0))
            )

    def _get_summary(self, user_id: str, session_id: str) -> SummaryState | None:
        with self._lock:
            session = self._sessions.get((user_id, session_id))
            return session.summary if session else None

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
        with self._lock:
            self._refuse_forgotten(user_id, session_id)
            session = self._sessions.setdefault((user_id, session_id), _Session())
            current = session.summary.version if session.summary else 0
            if current != expected_version:
                return None
            state = SummaryState(text, upto_seq, json.loads(data_json), current + 1, now)
            session.summary = state
            return state

    def _put(self, namespace: Namespace, key: str, value_json: str, now: float) -> None:
        with self._lock:
            self._refuse_forgotten(*document_owner(namespace, key))
            old = self._docs.get((namespace, key))
            self._docs[(namespace, key)] = (value_json, old[1] if old else now, now)

    def _put_if(
        self, namespace: Namespace, key: str, value_json: str, expected_json: str | None, now: float
    ) -> bool:
        with self._lock:  # re-entrant: _put takes it again
            old = self._docs.get((namespace, key))
            if (old[0] if old else None) != expected_json:
                return False
            self._put(namespace, key, value_json, now)
            return True

    def _get(self, namespace: Namespace, key: str) -> Document | None:
        with self._lock:
            row = self._docs.get((namespace, key))
        if row is None:
            return None
        return Document(namespace, key, json.loads(row[0]), row[1], row[2])

    def _list(self, prefix: Namespace, limit: int | None) -> list[Document]:
        with self._lock:
            items = sorted((k, v) for k, v in self._docs.items() if k[0][: len(prefix)] == prefix)
        if limit is not None:
            items = items[:limit]
        return [Document(ns, key, json.loads(v[0]), v[1], v[2]) for (ns, key), v in items]

    def _delete(self, namespace: Namespace, key: str) -> bool:
        with self._lock:
            return self._docs.pop((namespace, key), None) is not None
