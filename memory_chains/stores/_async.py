"""The async flavours of every :class:`~memory_chains.stores.BaseStore` method, written
once: each runs the sync method in a worker thread (the drivers block). A backend with a
native async driver overrides them.

Example:
    >>> import asyncio
    >>> from memory_chains.stores import InMemoryStore
    >>> store = InMemoryStore()
    >>> asyncio.run(store.aappend_turn("alice", "s1", "Bonjour", "Salut")).seq
    1
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from memory_chains.stores._base import BaseStore
    from memory_chains.stores._values import Document, SummaryState, Turn

__all__ = ["AsyncFlavours"]


def _store(mixin: object) -> BaseStore:
    """The store this mixin is part of (only ever mixed into BaseStore)."""
    return cast("BaseStore", mixin)


class AsyncFlavours:
    """Mixin of :class:`~memory_chains.stores.BaseStore`: ``a``-prefixed async methods."""

    async def asetup(self) -> None:
        """Async :meth:`setup`."""
        await asyncio.to_thread(_store(self).setup)

    async def aappend_turn(
        self,
        user_id: str,
        session_id: str,
        human: str,
        ai: str,
        metadata: Mapping[str, Any] | None = None,
    ) -> Turn:
        """Async :meth:`append_turn`."""
        return await asyncio.to_thread(
            _store(self).append_turn, user_id, session_id, human, ai, metadata
        )

    async def alast_turns(self, user_id: str, session_id: str, n: int) -> builtins.list[Turn]:
        """Async :meth:`last_turns`."""
        return await asyncio.to_thread(_store(self).last_turns, user_id, session_id, n)

    async def aturns_after(
        self,
        user_id: str,
        session_id: str,
        after_seq: int = 0,
        *,
        last: int | None = None,
    ) -> builtins.list[Turn]:
        """Async :meth:`turns_after`."""
        return await asyncio.to_thread(
            _store(self).turns_after, user_id, session_id, after_seq, last=last
        )

    async def acount_turns(self, user_id: str, session_id: str) -> int:
        """Async :meth:`count_turns`."""
        return await asyncio.to_thread(_store(self).count_turns, user_id, session_id)

    async def adelete_session(self, user_id: str, session_id: str) -> int:
        """Async :meth:`delete_session`."""
        return await asyncio.to_thread(_store(self).delete_session, user_id, session_id)

    async def aget_summary(self, user_id: str, session_id: str) -> SummaryState:
        """Async :meth:`get_summary`."""
        return await asyncio.to_thread(_store(self).get_summary, user_id, session_id)

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
            _store(self).replace_summary,
            user_id,
            session_id,
            text,
            upto_seq,
            data,
            expected_version=expected_version,
        )

    async def aput(self, namespace: Sequence[str], key: str, value: Mapping[str, Any]) -> None:
        """Async :meth:`put`."""
        await asyncio.to_thread(_store(self).put, namespace, key, value)

    async def aget(self, namespace: Sequence[str], key: str) -> Document | None:
        """Async :meth:`get`."""
        return await asyncio.to_thread(_store(self).get, namespace, key)

    async def alist(
        self, namespace_prefix: Sequence[str] = (), *, limit: int | None = None
    ) -> builtins.list[Document]:
        """Async :meth:`list`."""
        return await asyncio.to_thread(_store(self).list, namespace_prefix, limit=limit)

    async def adelete(self, namespace: Sequence[str], key: str) -> bool:
        """Async :meth:`delete`."""
        return await asyncio.to_thread(_store(self).delete, namespace, key)
