"""The memories one exchange reads and writes, whatever LangChain API drives them.

:class:`Memories` groups the memories of one conversation (a short-term memory, an entity
tracker, a long-term memory, memories of your own, or a context builder) and gives the
adapters of this package two operations, each written once over the memory protocol
(:class:`~memory_chains.protocol.ConversationMemory`):

* :meth:`Memories.view`: what the memories say about the next question, as a frozen
  :class:`MemoryView` (history turns, summary, named text blocks, entity names);
* :meth:`Memories.record`: store one successful exchange in every memory that records, once.

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
from memory_chains.protocol import (
    MemoryBlock,
    acontext_block,
    arecord,
    as_memory,
    check_budget,
    implements,
)
from memory_chains.rag import default_entity_source, render_history

__all__ = ["ContextProvider", "Memories", "MemoryView", "as_memories"]

_SUMMARY_PREFIX = "Summary of the earlier conversation"
_TITLES = {"entities": "Known entities", "profile": "User profile", "facts": "Relevant facts"}
"""The headings of the view's blocks (a memory's own title for other blocks)."""


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
        short_term: a short-term memory (``WindowCore``, ``SummaryCore``…), one of the
            ``BaseMemory`` shells (``BufferMemory``…; its ``core`` is used), or any memory
            giving a ``recent`` block (and optionally ``summary``); None for none. Its
            ``session_id`` is the session the long-term memory files exchanges under.
        entities: an ``EntityTracker`` (or an ``EntityMemory``; its ``tracker`` is used).
        long_term: a ``LongTermMemory`` (its profile and facts; it records through
            ``long_term.session(...)`` when it has that method), or any memory with the
            ``profile`` and ``facts`` blocks.
        memories: more memories (:class:`~memory_chains.protocol.ConversationMemory`): each
            of their blocks is shown under its own title, and each records.
        context: a context builder: ``build(question)`` returns an object with ``render()``.
            When given, its rendering replaces the memories' blocks and the history (the
            builder is expected to hold them); its recording memories record too.
        max_tokens: budget of each block (entities, profile, facts, yours).
        entity_hints: give the rewriter the names of the entity tracker (``entities``, else
            one among the ``context`` builder's sources), ordered for the question by
            :func:`memory_chains.rewrite.entity_source` as ``build_chain`` does; False
            for none.

    Attributes:
        entity_source: the ``question -> names`` function behind
            :attr:`MemoryView.entity_names` (None: no names).
        recorders: the memories :meth:`record` writes, each once, in order.

    Raises:
        InvalidInputError: an argument is not a memory of the protocol (or a builder).

    Example:
        >>> from memory_chains.memory import BufferMemory
        >>> from memory_chains.protocol import MemoryBase, MemoryBlock
        >>> class Rules(MemoryBase):
        ...     block_names = ("rules",)
        ...     def record(self, human, ai): pass
        ...     def context_block(self, question, max_tokens, name=None):
        ...         return MemoryBlock("rules", ("Tutoyer le client.",), title="House rules")
        >>> mem = Memories(BufferMemory(), memories=[Rules()])
        >>> type(mem.short_term).__name__, mem.view("Salut").blocks
        ('BufferCore', (('House rules', 'Tutoyer le client.'),))
    """

    def __init__(
        self,
        short_term: Any = None,
        *,
        entities: Any = None,
        long_term: Any = None,
        memories: Sequence[Any] = (),
        context: Any = None,
        max_tokens: int = 256,
        entity_hints: bool = True,
    ) -> None:
        self.short_term: Any = _short_term(short_term)
        self.entities = None if entities is None else _tracker(entities)
        self.long_term = None if long_term is None else _long_term(long_term)
        self.memories = tuple(as_memory(m, "each of memories") for m in memories)
        if context is not None and not implements(context, ContextProvider):
            raise InvalidInputError(
                f"context must have build(question), got {type(context).__name__}"
            )
        self.context = context
        self.max_tokens = check_budget(max_tokens)
        self.entity_source = (
            default_entity_source(self.entities if self.entities is not None else context)
            if entity_hints
            else None
        )
        self.recorders = self._recorders()

    def _readers(self) -> list[tuple[Any, str]]:
        """(memory, block name) of every block the view shows besides the history."""
        readers: list[tuple[Any, str]] = []
        if self.entities is not None:
            readers.append((self.entities, "entities"))
        if self.long_term is not None:
            readers += [(self.long_term, "profile"), (self.long_term, "facts")]
        readers += [(m, name) for m in self.memories for name in m.block_names]
        return readers

    def _recorders(self) -> tuple[Any, ...]:
        chosen: list[Any] = []
        long_term: Any = self.long_term
        session = getattr(long_term, "session", None)
        if callable(session):
            st = self.short_term
            seq = None
            if isinstance(st, ShortTermMemory):
                seq = lambda: st.store.count_turns(st.user_id, st.session_id)  # noqa: E731
            long_term = session(getattr(st, "session_id", "default"), seq=seq)
        sources = getattr(self.context, "sources", ())
        if isinstance(sources, (list, tuple)):
            from memory_chains.context import recording_sources

            builder_memories = [s.target for s in recording_sources(sources)]
        else:
            builder_memories = []
        candidates = [self.short_term, self.entities, long_term, *self.memories]
        for memory in (*candidates, *builder_memories):
            if memory is None or not getattr(memory, "records", True):
                continue
            if not any(m is memory or m == memory for m in chosen):
                chosen.append(memory)
        return tuple(chosen)

    # -- reading ---------------------------------------------------------------------------

    def _history(self, recent: MemoryBlock | None, summary: MemoryBlock | None) -> dict[str, Any]:
        turns = () if recent is None else recent.turns
        return {
            "turns": tuple(p for h, a in turns for p in (("human", h), ("ai", a))),
            "summary": "" if summary is None else summary.text(),
        }

    def _view(
        self, question: str, history: dict[str, Any], found: Sequence[MemoryBlock]
    ) -> MemoryView:
        names = tuple(self.entity_source(question)) if self.entity_source is not None else ()
        if self.context is not None:
            rendered = str(self.context.build(question).render()).strip()
            blocks: tuple[tuple[str, str], ...] = (("Memory", rendered),) if rendered else ()
            return MemoryView(
                question, **history, blocks=blocks, entity_names=names, history_in_blocks=True
            )
        blocks = tuple(
            (_TITLES.get(b.name) or b.title or b.name, b.text().strip())
            for b in found
            if b.text().strip()
        )
        return MemoryView(question, **history, blocks=blocks, entity_names=names)

    def view(self, question: str) -> MemoryView:
        """What the memories say for ``question`` (reads only; nothing is stored)."""
        st = self.short_term
        history = self._history(
            st.context_block(question, self.max_tokens, "recent") if st else None,
            st.context_block(question, self.max_tokens, "summary") if _summarises(st) else None,
        )
        found = (
            []
            if self.context is not None
            else [m.context_block(question, self.max_tokens, n) for m, n in self._readers()]
        )
        return self._view(question, history, found)

    async def aview(self, question: str) -> MemoryView:
        """Async :meth:`view` (each memory's ``acontext_block``, concurrently)."""
        st = self.short_term
        readers = [] if self.context is not None else self._readers()
        history_blocks = (
            [] if st is None else ["recent", "summary"] if _summarises(st) else ["recent"]
        )
        readers = [(st, name) for name in history_blocks] + readers
        blocks = await asyncio.gather(
            *(acontext_block(m, question, self.max_tokens, n) for m, n in readers)
        )
        n = len(history_blocks)
        history = self._history(*blocks[:n], *[None] * (2 - n))
        found = list(blocks[n:])
        if self.context is not None:
            return await asyncio.to_thread(self._view, question, history, found)
        return self._view(question, history, found)

    # -- writing ---------------------------------------------------------------------------

    def record(self, question: str, answer: str) -> None:
        """Store one successful exchange in every memory of :attr:`recorders`, in order
        (the short-term memory first: the long-term memory files the turn's number).

        Raises:
            InvalidInputError: the question is empty (nothing is stored).
            StoreError: a store failed.
        """
        for memory in self.recorders:
            memory.record(question, answer)

    async def arecord(self, question: str, answer: str) -> None:
        """Async :meth:`record` (each memory's ``arecord`` where it has one)."""
        for memory in self.recorders:
            await arecord(memory, question, answer)


def _giving(obj: Any, what: str, needed: tuple[str, ...], kind: str) -> Any:
    """``obj`` as a protocol memory giving every block of ``needed``."""
    memory = as_memory(obj, what)
    if not set(needed) <= set(memory.block_names):
        blocks = " and ".join(f"'{n}'" for n in needed)
        raise InvalidInputError(
            f"{what} must give the {blocks} block{'s' if len(needed) > 1 else ''} ({kind}); "
            f"{type(obj).__name__} gives {list(memory.block_names)}"
        )
    return memory


def _short_term(memory: Any) -> Any:
    if memory is None:
        return None
    return _giving(memory, "short_term", ("recent",), "a short-term memory: WindowCore…")


def _summarises(short_term: Any) -> bool:
    return short_term is not None and "summary" in short_term.block_names


def _tracker(entities: Any) -> Any:
    return _giving(entities, "entities", ("entities",), "an EntityTracker or an EntityMemory")


def _long_term(long_term: Any) -> Any:
    return _giving(long_term, "long_term", ("profile", "facts"), "a LongTermMemory")


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
