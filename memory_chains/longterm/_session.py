"""One session's view of the long-term memory: :class:`LongTermSession`.

What :meth:`LongTermMemory.session <memory_chains.longterm.LongTermMemory.session>`
returns: the same memory, whose recorded exchanges are filed under one session id (and
a sequence number, when given), so facts and profile values keep their provenance; it
reads the same profile and facts blocks as the memory itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from memory_chains.protocol import MemoryBase, MemoryBlock

if TYPE_CHECKING:
    from memory_chains.longterm._memory import LongTermMemory

__all__ = ["LongTermSession"]


class LongTermSession(MemoryBase):
    """A :class:`LongTermMemory` that records the exchanges of one session
    (:meth:`LongTermMemory.session`); it reads the same profile and facts.

    Example:
        >>> from memory_chains.longterm import LongTermMemory
        >>> from memory_chains.stores import InMemoryStore
        >>> from memory_chains.testing import HashEmbeddings
        >>> mem = LongTermMemory(InMemoryStore(), "ann", HashEmbeddings())
        >>> s = mem.session("s2")
        >>> s.memory is mem, s.session_id, s.block_names
        (True, 's2', ('profile', 'facts'))
    """

    block_names: ClassVar[tuple[str, ...]] = ("profile", "facts")

    def __init__(
        self,
        memory: LongTermMemory,
        session_id: str,
        seq: Callable[[], int | None] | None = None,
    ) -> None:
        self.memory = memory
        self.session_id = session_id
        self.seq = seq

    def record(self, human: str, ai: str) -> None:
        """:meth:`LongTermMemory.observe` under this session."""
        seq = self.seq() if self.seq is not None else None
        self.memory.observe(human, ai, session_id=self.session_id, seq=seq)

    async def arecord(self, human: str, ai: str) -> None:
        """Async :meth:`record`."""
        seq = self.seq() if self.seq is not None else None
        await self.memory.aobserve(human, ai, session_id=self.session_id, seq=seq)

    def context_block(self, question: str, max_tokens: int, name: str | None = None) -> MemoryBlock:
        """:meth:`LongTermMemory.context_block`."""
        return self.memory.context_block(question, max_tokens, name)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, LongTermSession)
            and other.memory is self.memory
            and other.session_id == self.session_id
        )

    def __hash__(self) -> int:
        return hash((id(self.memory), self.session_id))

    def __repr__(self) -> str:
        return f"LongTermSession(user_id={self.memory.user_id!r}, session_id={self.session_id!r})"
