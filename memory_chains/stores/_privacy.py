"""Everything a store holds about one user: :func:`export_user`, :func:`forget_user` and
:func:`readmit_user`.

Written once over the public :class:`~memory_chains.stores.BaseStore` interface, so they
work on every backend. What belongs to a user:

* every session :meth:`~memory_chains.stores.BaseStore.list_sessions` reports for them,
  with its turns and its running summary;
* every document whose namespace has the user id as its **second** label — the convention
  the memories follow: ``("entities", user_id)``, ``("profile", user_id)``,
  ``("facts", user_id, …)``, and the session metadata ``("sessions", user_id)``.

:func:`forget_session` erases one session: its turns, its summary, its metadata document
(``("sessions", user_id)``, key ``session_id``) and the per-session documents under
``("sessions", user_id, session_id, …)``. What other memories learnt from it about the
user (entities, profile, facts) is per user: :func:`forget_user` removes that.

Forgetting sticks: :func:`forget_user` first leaves a tombstone (the user id and the
time, nothing else, :meth:`~memory_chains.stores.BaseStore.add_tombstone`), then erases.
From the tombstone on, every write for that user — from this process, a session still
running in another one, a background compaction — raises
:class:`~memory_chains.errors.ForgottenError` and stores nothing, until the application
calls :func:`readmit_user` (a user who comes back and agrees again). :func:`forget_session`
does the same for one session (:func:`readmit_session`).

Finding the documents lists every document of the store once (the interface has no index
by user); fine for the thousands of documents a deployment holds, linear beyond.

Example:
    >>> from memory_chains.stores import InMemoryStore
    >>> store = InMemoryStore()
    >>> _ = store.append_turn("alice", "s1", "Mon IBAN ?", "Je ne le garde pas.")
    >>> store.put(("profile", "alice"), "lang", {"value": "fr"})
    >>> export_user(store, "alice")["documents"][0]["key"]
    'lang'
    >>> forget_user(store, "alice")
    ForgetResult(sessions=1, turns=1, documents=1)
    >>> export_user(store, "alice")["sessions"]
    []
    >>> store.append_turn("alice", "s1", "Encore moi", "…")
    Traceback (most recent call last):
    ...
    memory_chains.errors.ForgottenError: user 'alice' was forgotten at ...
    >>> readmit_user(store, "alice")
    1
    >>> store.append_turn("alice", "s1", "Encore moi", "Bienvenue").seq
    1
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from memory_chains.stores._base import BaseStore
from memory_chains.stores._values import Document, validate_id

__all__ = [
    "EXPORT_FORMAT",
    "ForgetResult",
    "export_user",
    "forget_session",
    "forget_user",
    "readmit_session",
    "readmit_user",
]

_SESSIONS = "sessions"  # the session manager's namespace label

#: The ``format`` field of :func:`export_user` documents; bumped if the layout changes.
EXPORT_FORMAT = "memory_chains.export/1"


@dataclass(frozen=True)
class ForgetResult:
    """What :func:`forget_user` deleted.

    Attributes:
        sessions: sessions deleted (turns and summary).
        turns: turns deleted across those sessions.
        documents: documents deleted (entities, profile, facts, …).

    Example:
        >>> ForgetResult(sessions=0, turns=0, documents=0).turns
        0
    """

    sessions: int
    turns: int
    documents: int


def _user_documents(store: BaseStore, user_id: str) -> list[Document]:
    return [d for d in store.list(()) if len(d.namespace) >= 2 and d.namespace[1] == user_id]


def export_user(store: BaseStore, user_id: str) -> dict[str, Any]:
    """One JSON-serialisable document of everything ``store`` holds about ``user_id``.

    Returns:
        ``{"format", "user_id", "exported_at", "sessions": [{"session_id", "turns",
        "summary"}], "documents": [{"namespace", "key", "value", "created_at",
        "updated_at"}], "tombstones": [{"session_id", "forgotten_at"}]}``; ``sessions``
        and ``documents`` are empty for an unknown or forgotten user, ``tombstones`` says
        when the user (``session_id`` ``None``) or their sessions were forgotten.
        ``summary`` is ``None`` when the session has none.

    Raises:
        InvalidInputError: ``user_id`` is not a valid id.
        StoreUnavailableError: the store cannot be reached.

    Example:
        >>> from memory_chains.stores import InMemoryStore
        >>> export_user(InMemoryStore(), "nobody")["documents"]
        []
    """
    validate_id(user_id, "user_id")
    sessions = []
    for session_id in store.list_sessions(user_id):
        turns = store.turns_after(user_id, session_id)
        summary = store.get_summary(user_id, session_id)
        sessions.append(
            {
                "session_id": session_id,
                "turns": [
                    {
                        "seq": t.seq,
                        "human": t.human,
                        "ai": t.ai,
                        "created_at": t.created_at,
                        "metadata": dict(t.metadata),
                    }
                    for t in turns
                ],
                "summary": None
                if summary.version == 0 or (not summary.text and summary.upto_seq == 0)
                else {
                    "text": summary.text,
                    "upto_seq": summary.upto_seq,
                    "data": dict(summary.data),
                    "version": summary.version,
                    "updated_at": summary.updated_at,
                },
            }
        )
    documents = [
        {
            "namespace": list(d.namespace),
            "key": d.key,
            "value": dict(d.value),
            "created_at": d.created_at,
            "updated_at": d.updated_at,
        }
        for d in _user_documents(store, user_id)
    ]
    return {
        "format": EXPORT_FORMAT,
        "user_id": user_id,
        "exported_at": time.time(),
        "sessions": sessions,
        "documents": documents,
        "tombstones": [
            {"session_id": t.session_id, "forgotten_at": t.forgotten_at}
            for t in store.tombstones(user_id)
        ],
    }


def forget_user(store: BaseStore, user_id: str) -> ForgetResult:
    """Delete everything ``store`` holds about ``user_id`` — sessions, turns, summaries and
    the user's documents — after leaving a tombstone, so that nothing can be written for
    them again until :func:`readmit_user`.

    The tombstone comes first: a write still in flight either lands before it (and is
    erased here) or sees it and raises :class:`~memory_chains.errors.ForgottenError`, on
    every backend and across processes. Idempotent: call it again after an error.

    Raises:
        InvalidInputError: ``user_id`` is not a valid id.
        StoreUnavailableError: the store cannot be reached.

    Example:
        >>> from memory_chains.stores import InMemoryStore
        >>> forget_user(InMemoryStore(), "nobody")
        ForgetResult(sessions=0, turns=0, documents=0)
    """
    validate_id(user_id, "user_id")
    store.add_tombstone(user_id)
    sessions = store.list_sessions(user_id)
    turns = sum(store.delete_session(user_id, s) for s in sessions)
    documents = sum(store.delete(d.namespace, d.key) for d in _user_documents(store, user_id))
    store._after_erasure()  # no stale copy of the bytes either (SQLite: VACUUM)
    return ForgetResult(sessions=len(sessions), turns=turns, documents=documents)


def forget_session(
    store: BaseStore, user_id: str, session_id: str, *, tombstone: bool = True
) -> ForgetResult:
    """Delete one session of ``user_id``: turns, summary, metadata and per-session documents.

    Args:
        tombstone: leave a tombstone first, so that nothing can be written to that session
            again until :func:`readmit_session` (the default, for an erasure); ``False``
            for housekeeping (purging expired sessions).

    Returns:
        ``sessions`` is 1 when the session existed (turns, summary or metadata), else 0;
        ``documents`` counts the metadata document and the per-session documents.

    Raises:
        InvalidInputError: ``user_id`` or ``session_id`` is not a valid id.
        StoreUnavailableError: the store cannot be reached.

    Example:
        >>> from memory_chains.stores import InMemoryStore
        >>> store = InMemoryStore()
        >>> _ = store.append_turn("alice", "s1", "q", "a")
        >>> _ = store.append_turn("alice", "s2", "q", "a")
        >>> forget_session(store, "alice", "s1")
        ForgetResult(sessions=1, turns=1, documents=0)
        >>> store.list_sessions("alice")
        ['s2']
    """
    validate_id(user_id, "user_id")
    validate_id(session_id, "session_id")
    if tombstone:
        store.add_tombstone(user_id, session_id)
    existed = session_id in store.list_sessions(user_id)
    turns = store.delete_session(user_id, session_id)
    documents = int(store.delete((_SESSIONS, user_id), session_id))
    for doc in store.list((_SESSIONS, user_id, session_id)):
        documents += store.delete(doc.namespace, doc.key)
    if tombstone:  # an erasure, not housekeeping: no stale copy of the bytes either
        store._after_erasure()
    return ForgetResult(sessions=int(existed or documents > 0), turns=turns, documents=documents)


def readmit_user(store: BaseStore, user_id: str) -> int:
    """Allow data about a forgotten user to be stored again: remove their tombstone and
    those of their sessions. Returns how many tombstones were removed (0: none).

    Only for a user who came back and agreed again: the erased data stays erased.

    Raises:
        InvalidInputError: ``user_id`` is not a valid id.

    Example:
        >>> from memory_chains.stores import InMemoryStore
        >>> store = InMemoryStore()
        >>> _ = forget_user(store, "bob")
        >>> readmit_user(store, "bob"), readmit_user(store, "bob")
        (1, 0)
    """
    validate_id(user_id, "user_id")
    return store.remove_tombstones(user_id)


def readmit_session(store: BaseStore, user_id: str, session_id: str) -> int:
    """Allow a forgotten session to be written again (its tombstone is removed; a
    tombstone of the whole user stays). Returns 1 if there was one, else 0.

    Example:
        >>> from memory_chains.stores import InMemoryStore
        >>> store = InMemoryStore()
        >>> _ = forget_session(store, "bob", "s1")
        >>> readmit_session(store, "bob", "s1")
        1
    """
    validate_id(user_id, "user_id")
    validate_id(session_id, "session_id")
    return store.remove_tombstones(user_id, session_id)
