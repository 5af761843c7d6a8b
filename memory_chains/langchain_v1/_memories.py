"""The memories one exchange reads and writes, whatever LangChain API drives them.

:class:`Memories` groups the memory objects of one conversation (a short-term memory, an
entity tracker, a long-term memory, a context builder) and gives the adapters of this
package two operations, each written once:

* :meth:`Memories.view`: what the memories say about the next question, as a frozen
  :class:`MemoryView` (history turns, summary, named text blocks, entity names);
* :meth:`Memories.record`: store one successful exchange in every memory that records.

The long-term memory and the context builder are duck-typed (``profile_block`` /
``facts_block`` / ``observe``, and ``build(question).render()``) so that any object with those
methods plugs in.

Example:
    >>> from memory_chains.memory import WindowCore
    >>> mem = Memories(WindowCore(k=3))
    >>> mem.record("Je cherche le Dell XPS 15.", "Nous l'avons en stock.")
    >>> view = mem.view("Quelle est sa garantie ?")
    >>> view.turns
    (('human', 'Je cherche le Dell XPS 15.'), ('ai', "Nous l'avons en stock."))
    >>> print(view.transcript())
    Human: Je cherche le Dell XPS 15.
    Assistant: Nous l'avons en stock.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from memory_chains.errors import InvalidInputError
from memory_chains.memory import ShortTermMemory
from memory_chains.rag import default_entity_source, render_history

__all__ = ["ContextProvider", "LongTermProvider", "Memories", "MemoryView", "as_memories"]

_SUMMARY_PREFIX = "Summary of the earlier conversation"


@runtime_checkable
class LongTermProvider(Protocol):
    """What is read from a long-term memory (``memory_chains.longterm.LongTermMemory``)."""

    def profile_block(self, max_tokens: int) -> str:
        """The user's profile as a short text block."""

    def facts_block(self, question: str, max_tokens: int) -> str:
        """The durable facts relevant to ``question`` as a short text block."""


@runtime_checkable
class ContextProvider(Protocol):
    """A context builder (``memory_chains.context.ContextBuilder``): ``build(q).render()``."""

    def build(self, question: str) -> Any:
        """An object whose ``render()`` is the whole memory block for ``question``."""


@dataclass(frozen=True)
class MemoryView:
    """What the memories give the model for one question.

    Attributes:
        question: the question the view was built for.
        turns: recent history as ``(role, text)`` pairs, ``role`` being ``human`` or ``ai``.
        summary: the running summary of older turns (empty if none).
        blocks: ``(title, text)`` blocks besides the history: entities, profile, facts, or
            the context builder's rendering.
        entity_names: entity names for the rewriter, best first
            (:func:`memory_chains.rewrite.entity_hints`).
        history_in_blocks: the blocks already hold the history (a context builder's
            rendering): :meth:`render` then leaves the transcript out.

    Example:
        >>> view = MemoryView("q", (("human", "a"), ("ai", "b")), "", (("User profile", "fr"),))
        >>> print(view.render())
        User profile:
        fr
        <BLANKLINE>
        Conversation so far:
        Human: a
        Assistant: b
    """

    question: str
    turns: tuple[tuple[str, str], ...] = ()
    summary: str = ""
    blocks: tuple[tuple[str, str], ...] = ()
    entity_names: tuple[str, ...] = ()
    history_in_blocks: bool = False

    def transcript(self) -> str:
        """The summary (if any) then the turns, as ``Human:`` / ``Assistant:`` lines."""
        parts = [f"{_SUMMARY_PREFIX}: {self.summary}"] if self.summary else []
        if self.turns:
            parts.append(render_history(self.turns))
        return "\n".join(parts)

    def chat_history(self) -> str:
        """The blocks then the transcript, for a prompt's ``chat_history`` variable.

        Example:
            >>> MemoryView("q", (("human", "a"), ("ai", "b"))).chat_history()
            'Human: a\\nAssistant: b'
        """
        sections = [f"{title}:\n{text}" for title, text in self.blocks]
        if not self.history_in_blocks:
            sections.append(self.transcript())
        return "\n\n".join(s for s in sections if s)

    def render(self, *, with_history: bool = True) -> str:
        """The blocks then, unless ``with_history`` is False, the transcript."""
        sections = [f"{title}:\n{text}" for title, text in self.blocks]
        history = self.transcript() if with_history and not self.history_in_blocks else ""
        if history:
            sections.append(f"Conversation so far:\n{history}")
        return "\n\n".join(sections)


class Memories:
    """The memories of one conversation, read and written together.

    Args:
        short_term: a short-term memory (``WindowCore``, ``SummaryCore``…) or one of the
            ``BaseMemory`` shells (``BufferMemory``…; its ``core`` is used); None for none.
        entities: an ``EntityTracker`` (or an ``EntityMemory``; its ``tracker`` is used).
        long_term: anything with ``profile_block(max_tokens)`` and
            ``facts_block(question, max_tokens)``; recorded through ``observe`` if it has it.
        context: a context builder: ``build(question)`` returns an object with ``render()``.
            When given, its rendering replaces the entity/profile/facts blocks and the
            history (the builder is expected to hold them).
        max_tokens: budget of each block (entities, profile, facts).
        entity_hints: give the rewriter the names of the entity tracker (``entities``, else
            one among the ``context`` builder's sources), ordered for the question by
            :func:`memory_chains.rewrite.entity_source` as ``build_chain`` does; False
            for none.

    Attributes:
        entity_source: the ``question -> names`` function behind
            :attr:`MemoryView.entity_names` (None: no names).

    Raises:
        InvalidInputError: an argument does not have the methods it needs.

    Example:
        >>> from memory_chains.memory import BufferMemory
        >>> mem = Memories(BufferMemory())
        >>> type(mem.short_term).__name__
        'BufferCore'
    """

    def __init__(
        self,
        short_term: Any = None,
        *,
        entities: Any = None,
        long_term: Any = None,
        context: Any = None,
        max_tokens: int = 256,
        entity_hints: bool = True,
    ) -> None:
        self.short_term: ShortTermMemory | None = _short_term(short_term)
        self.entities = _tracker(entities)
        if long_term is not None and not isinstance(long_term, LongTermProvider):
            raise InvalidInputError(
                f"long_term must have profile_block(max_tokens) and facts_block(question, "
                f"max_tokens), got {type(long_term).__name__}"
            )
        if context is not None and not isinstance(context, ContextProvider):
            raise InvalidInputError(
                f"context must have build(question), got {type(context).__name__}"
            )
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 0:
            raise InvalidInputError(f"max_tokens must be an integer >= 0, got {max_tokens!r}")
        self.long_term = long_term
        self.context = context
        self.max_tokens = max_tokens
        self.entity_source = (
            default_entity_source(self.entities if self.entities is not None else context)
            if entity_hints
            else None
        )

    # -- reading ---------------------------------------------------------------------------

    def view(self, question: str) -> MemoryView:
        """What the memories say for ``question`` (reads only; nothing is stored)."""
        turns: tuple[tuple[str, str], ...] = ()
        summary = ""
        if self.short_term is not None:
            ctx = self.short_term.context()
            summary = ctx.summary
            turns = tuple(p for t in ctx.turns for p in (("human", t.human), ("ai", t.ai)))
        names = tuple(self.entity_source(question)) if self.entity_source is not None else ()
        if self.context is not None:
            rendered = str(self.context.build(question).render()).strip()
            blocks: tuple[tuple[str, str], ...] = (("Memory", rendered),) if rendered else ()
            return MemoryView(question, turns, summary, blocks, names, history_in_blocks=True)
        found: list[tuple[str, str]] = []
        if self.entities is not None:
            block = self.entities.context(question, max_tokens=self.max_tokens)
            found.append(("Known entities", block))
        if self.long_term is not None:
            found.append(("User profile", self.long_term.profile_block(self.max_tokens)))
            found.append(("Relevant facts", self.long_term.facts_block(question, self.max_tokens)))
        blocks = tuple((title, text.strip()) for title, text in found if text and text.strip())
        return MemoryView(question, turns, summary, blocks, names)

    async def aview(self, question: str) -> MemoryView:
        """Async :meth:`view` (the reads run in a thread: stores and trackers are sync)."""
        return await asyncio.to_thread(self.view, question)

    # -- writing ---------------------------------------------------------------------------

    def record(self, question: str, answer: str) -> None:
        """Store one successful exchange in every memory that records.

        Raises:
            InvalidInputError: the question is empty (nothing is stored).
            StoreError: a store failed.
        """
        turn = self.short_term.add_exchange(question, answer) if self.short_term else None
        if self.entities is not None:
            self.entities.observe(question, answer)
        observe = getattr(self.long_term, "observe", None)
        if observe is not None:
            observe(question, answer, **self._long_term_keys(turn))

    async def arecord(self, question: str, answer: str) -> None:
        """Async :meth:`record` (native async extraction calls where the memory has them)."""
        turn = await self.short_term.aadd_exchange(question, answer) if self.short_term else None
        if self.entities is not None:
            await self.entities.aobserve(question, answer)
        aobserve = getattr(self.long_term, "aobserve", None)
        observe = getattr(self.long_term, "observe", None)
        if aobserve is not None:
            await aobserve(question, answer, **self._long_term_keys(turn))
        elif observe is not None:
            await asyncio.to_thread(lambda: observe(question, answer, **self._long_term_keys(turn)))

    def _long_term_keys(self, turn: Any) -> dict[str, Any]:
        session = self.short_term.session_id if self.short_term is not None else "default"
        return {"session_id": session, "seq": getattr(turn, "seq", None)}


def _short_term(memory: Any) -> ShortTermMemory | None:
    if memory is None or isinstance(memory, ShortTermMemory):
        return memory
    core = getattr(memory, "core", None)
    if isinstance(core, ShortTermMemory):
        return core
    raise InvalidInputError(
        f"short_term must be a memory_chains short-term memory (WindowCore, BufferMemory…), "
        f"got {type(memory).__name__}"
    )


def _tracker(entities: Any) -> Any:
    if entities is None:
        return None
    tracker = getattr(entities, "tracker", entities)
    needed = ("entities", "context", "observe", "aobserve")
    missing = [name for name in needed if not callable(getattr(tracker, name, None))]
    if missing:
        raise InvalidInputError(
            f"entities must be an EntityTracker or an EntityMemory; "
            f"{type(entities).__name__} lacks {', '.join(missing)}"
        )
    return tracker


def as_memories(memory: Any) -> Memories:
    """Accept a :class:`Memories`, a short-term memory, or anything with ``memories``.

    Example:
        >>> from memory_chains.memory import WindowCore
        >>> as_memories(WindowCore()).entities is None
        True
    """
    if isinstance(memory, Memories):
        return memory
    inner = getattr(memory, "memories", None)
    if isinstance(inner, Memories):
        return inner
    return Memories(memory)


def history_messages(turns: Sequence[tuple[str, str]]) -> list[Any]:
    """``(role, text)`` turns as LangChain ``HumanMessage`` / ``AIMessage`` objects.

    Example:
        >>> [m.type for m in history_messages([("human", "a"), ("ai", "b")])]
        ['human', 'ai']
    """
    from langchain_core.messages import AIMessage, HumanMessage

    return [HumanMessage(content=t) if r == "human" else AIMessage(content=t) for r, t in turns]
