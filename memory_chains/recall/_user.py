"""One user's recall as a memory of the protocol: :class:`UserRecall`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory_chains.protocol import MemoryBase, MemoryBlock, block_name, check_budget
from memory_chains.recall._types import RecalledContext

if TYPE_CHECKING:
    from memory_chains.recall._index import TurnIndex

__all__ = ["UserRecall", "recalled_block"]


def recalled_block(recalled: RecalledContext) -> MemoryBlock:
    """A :class:`~memory_chains.recall.RecalledContext` as the ``recalled`` block: one
    item per line, the cited turn ids carried along."""
    lines = tuple(line for line in recalled.text.strip().splitlines() if line.strip())
    return MemoryBlock(
        "recalled", lines, cited_ids=recalled.turn_ids, title="From past conversations"
    )


class UserRecall(MemoryBase):
    """Past turns of one user recalled for the question (``TurnIndex.for_user``).

    It records nothing (``records`` is False): the index is fed with
    :meth:`~memory_chains.recall.TurnIndex.add` from the stored conversation.

    Args:
        index: the :class:`~memory_chains.recall.TurnIndex`.
        user_id: whose turns.

    Example:
        >>> from memory_chains.recall import TurnIndex
        >>> index = TurnIndex()
        >>> index.add("ann", "s1#4", "Ma commande 4821 est en retard", speaker="User")
        >>> block = index.for_user("ann").context_block("commande ?", 50)
        >>> block.cited_ids
        ('s1#4',)
    """

    block_names = ("recalled",)
    records = False

    def __init__(
        self,
        index: TurnIndex,
        user_id: str,
    ) -> None:
        self.index = index
        self.user_id = user_id

    def record(self, human: str, ai: str) -> None:
        """Nothing: the index is fed from the store."""

    async def arecord(self, human: str, ai: str) -> None:
        """Nothing."""

    def context_block(self, question: str, max_tokens: int, name: str | None = None) -> MemoryBlock:
        """The best past turns for ``question`` that fit in ``max_tokens``, cited (empty for
        an empty question or no budget)."""
        check_budget(max_tokens)
        block_name(self, name)
        if not question.strip() or max_tokens < 1:
            return MemoryBlock("recalled", title="From past conversations")
        return recalled_block(self.index.context(self.user_id, question, max_tokens))

    async def acontext_block(
        self, question: str, max_tokens: int, name: str | None = None
    ) -> MemoryBlock:
        """Async :meth:`context_block` (the query embedding awaited)."""
        check_budget(max_tokens)
        block_name(self, name)
        if not question.strip() or max_tokens < 1:
            return MemoryBlock("recalled", title="From past conversations")
        return recalled_block(await self.index.acontext(self.user_id, question, max_tokens))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(user_id={self.user_id!r})"
