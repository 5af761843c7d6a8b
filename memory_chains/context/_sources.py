"""Context sources: a memory's named block (:class:`MemorySource`), documents, fixed text.

Every memory implements :class:`~memory_chains.protocol.ConversationMemory`, so one adapter
reads them all: :class:`MemorySource` turns the block a memory gives for the question into
a :class:`ContextBlock` with a priority, a heading and a way to shrink, and forwards the
exchanges it records. The named classes only choose the block and its defaults:

==========================  ==================================  ============  ========
adapter                     block of                            name          priority
==========================  ==================================  ============  ========
:class:`RecentTurnsSource`  a short-term memory                 ``recent``    80
:class:`ProfileSource`      a long-term memory                  ``profile``   70
:class:`FactsSource`        a long-term memory                  ``facts``     65
:class:`EntitySource`       an ``EntityTracker``                ``entities``  60
:class:`SummarySource`      a short-term memory (its summary)   ``summary``   50
:class:`RecallSource`       ``TurnIndex.for_user(user_id)``     ``recalled``  40
:class:`DocumentsSource`    documents, or a retriever           ``documents`` 30
:class:`TextSource`         a fixed text                        (given)       0
==========================  ==================================  ============  ========

:func:`memory_sources` gives one source per block of any memory, yours included.

Example:
    >>> from memory_chains.memory import WindowCore
    >>> mem = WindowCore(k=2)
    >>> _ = mem.add_exchange("Bonjour", "Bonjour !")
    >>> RecentTurnsSource(mem).block("Ça va ?", 100).items
    ('Human: Bonjour\\nAI: Bonjour !',)
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar, get_args

from memory_chains.context._block import ContextBlock, Shrink
from memory_chains.errors import InvalidInputError
from memory_chains.protocol import (
    MemoryBlock,
    acontext_block,
    arecord,
    as_memory,
    block_name,
)

__all__ = [
    "BLOCK_LAYOUT",
    "EntitySource",
    "FactsSource",
    "MemorySource",
    "ProfileSource",
    "RecallSource",
    "RecentTurnsSource",
    "SummarySource",
    "long_term_sources",
    "memory_sources",
    "short_term_sources",
]

BLOCK_LAYOUT: MappingProxyType[str, tuple[int, Shrink, int | None]] = MappingProxyType(
    {
        "recent": (80, "drop_oldest", None),
        "profile": (70, "drop_last", None),
        "facts": (65, "drop_last", None),
        "entities": (60, "drop_last", 256),
        "summary": (50, "truncate", None),
        "recalled": (40, "drop", 400),
    }
)
"""Block name -> default (priority, shrink, cap in tokens) of its :class:`MemorySource`.
A block of another name gets priority 55, ``drop_last`` and no cap. The recalled turns are
kept whole or dropped: their lines cite turn ids, and a cut would cite turns it no longer
shows."""

_OTHER: tuple[int, Shrink, int | None] = (55, "drop_last", None)


@dataclass(eq=False, repr=False, kw_only=True)
class _Source(ABC):
    """Shared fields: the object read (``target``), name, priority, heading, cap, and how
    blocks shrink."""

    target: Any = field(kw_only=False)
    name: str = ""
    priority: int = 0
    title: str = ""
    max_tokens: int | None = None
    min_tokens: int = 0
    shrink: Shrink = field(default="drop_last", init=False)

    def __post_init__(self) -> None:
        self._check_target()
        if self.max_tokens is not None and (
            isinstance(self.max_tokens, bool) or self.max_tokens < 0
        ):
            raise InvalidInputError(f"max_tokens must be None or >= 0, got {self.max_tokens!r}")

    def _check_target(self) -> None:  # noqa: B027 - optional hook
        """Refuse a target the source cannot read."""

    @property
    def records(self) -> bool:
        """True when :meth:`record` teaches the target something."""
        return False

    def record(self, human: str, ai: str) -> None:  # noqa: B027 - nothing by default
        """Give the exchange to the target (nothing when :attr:`records` is False)."""

    async def arecord(self, human: str, ai: str) -> None:  # noqa: B027 - nothing by default
        """Async :meth:`record`."""

    @abstractmethod
    def block(self, question: str, max_tokens: int) -> ContextBlock:
        """The source's block for ``question``."""

    def _make(self, items: Sequence[str], **extra: Any) -> ContextBlock:
        return ContextBlock(
            self.name,
            tuple(items),
            priority=self.priority,
            title=self.title,
            shrink=self.shrink,
            min_tokens=self.min_tokens,
            **extra,
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, priority={self.priority})"


_UNSET = -(10**9)  # "take the default of BLOCK_LAYOUT"


@dataclass(eq=False, repr=False, kw_only=True)
class MemorySource(_Source):
    """One block of a memory (:class:`~memory_chains.protocol.ConversationMemory`) as a
    context source.

    Args:
        target: the memory (a classic shell gives its core or tracker).
        block_name: which of the memory's ``block_names`` (its first by default).
        name: the block's name in the context (``block_name`` by default).
        priority, max_tokens, shrink: default from :data:`BLOCK_LAYOUT`.
        title: the heading; default: the memory's own title for the block.
        min_tokens: see :class:`ContextBlock`.
        record_exchanges: forward exchanges to the memory (:meth:`record`); default: when
            the memory records (its ``records`` attribute, True when absent).

    Example:
        >>> from memory_chains.protocol import MemoryBase, MemoryBlock
        >>> class Notes(MemoryBase):
        ...     block_names = ("notes",)
        ...     def record(self, human, ai): pass
        ...     def context_block(self, question, max_tokens, name=None):
        ...         return MemoryBlock("notes", ("Livraison offerte dès 50 €.",))
        >>> source = MemorySource(Notes())
        >>> source.name, source.priority, source.block("livraison ?", 50).items
        ('notes', 55, ('Livraison offerte dès 50 €.',))
    """

    block_name: str | None = None
    priority: int = _UNSET
    max_tokens: int | None = _UNSET
    shrink: Shrink | None = None  # type: ignore[assignment]
    record_exchanges: bool | None = None

    default_block: ClassVar[str | None] = None

    def __post_init__(self) -> None:
        self.target = as_memory(self.target, f"{type(self).__name__}'s target")
        self.block_name = block_name(self.target, self.block_name or self.default_block)
        priority, shrink, cap = BLOCK_LAYOUT.get(self.block_name, _OTHER)
        self.name = self.name or self.block_name
        self.priority = priority if self.priority == _UNSET else self.priority
        self.max_tokens = cap if self.max_tokens == _UNSET else self.max_tokens
        self.shrink = self.shrink or shrink
        if self.shrink not in get_args(Shrink):
            raise InvalidInputError(
                f"shrink must be one of {get_args(Shrink)}, got {self.shrink!r}"
            )
        super().__post_init__()

    @property
    def records(self) -> bool:
        if self.record_exchanges is not None:
            return self.record_exchanges
        return bool(getattr(self.target, "records", True))

    def record(self, human: str, ai: str) -> None:
        """Give the exchange to the memory (``memory.record``) when :attr:`records`."""
        if self.records:
            self.target.record(human, ai)

    async def arecord(self, human: str, ai: str) -> None:
        """Async :meth:`record` (the memory's ``arecord`` when it has one)."""
        if self.records:
            await arecord(self.target, human, ai)

    def _from(self, block: Any) -> ContextBlock:
        if not isinstance(block, MemoryBlock):
            raise InvalidInputError(
                f"{type(self.target).__name__}.context_block returned "
                f"{type(block).__name__}, not a MemoryBlock"
            )
        return ContextBlock(
            self.name,
            block.items,
            priority=self.priority,
            title=self.title or block.title,
            shrink=self.shrink or "drop_last",
            min_tokens=self.min_tokens,
            turns=block.turns,
            cited_ids=block.cited_ids,
        )

    def block(self, question: str, max_tokens: int) -> ContextBlock:
        """The memory's block for ``question`` within ``max_tokens``."""
        return self._from(self.target.context_block(question, max_tokens, self.block_name))

    async def ablock(self, question: str, max_tokens: int) -> ContextBlock:
        """Async :meth:`block` (the memory's ``acontext_block`` when it has one)."""
        return self._from(await acontext_block(self.target, question, max_tokens, self.block_name))


class RecentTurnsSource(MemorySource):
    """The verbatim recent exchanges of a short-term memory (oldest dropped first).

    Example:
        >>> from memory_chains.memory import BufferCore
        >>> mem = BufferCore()
        >>> _ = mem.add_exchange("q1", "a1"); _ = mem.add_exchange("q2", "a2")
        >>> RecentTurnsSource(mem).block("", 100).turns
        (('q1', 'a1'), ('q2', 'a2'))
    """

    default_block = "recent"


class SummarySource(MemorySource):
    """The running summary of a short-term memory (empty for memories without one).

    Example:
        >>> from memory_chains.memory import WindowCore
        >>> SummarySource(WindowCore()).block("", 100).empty
        True
    """

    default_block = "summary"


def short_term_sources(
    memory: Any, *, recent_priority: int = 80, summary_priority: int = 50
) -> tuple[SummarySource, RecentTurnsSource]:
    """The summary and the recent turns of one short-term memory, in rendering order.

    Example:
        >>> from memory_chains.memory import WindowCore
        >>> [s.name for s in short_term_sources(WindowCore())]
        ['summary', 'recent']
    """
    return (
        SummarySource(memory, priority=summary_priority),
        RecentTurnsSource(memory, priority=recent_priority),
    )


class EntitySource(MemorySource):
    """The entities most relevant to the question (an
    :class:`~memory_chains.entities.EntityTracker`, or an ``EntityMemory``), most relevant
    first, so the least relevant go first when the budget is short.

    Example:
        >>> from memory_chains.entities import EntityTracker, RuleEntityExtractor
        >>> t = EntityTracker(RuleEntityExtractor(use_spacy=False))
        >>> _ = t.observe("Je cherche le Dell XPS 15", "Il coûte 1599 €.")
        >>> print(EntitySource(t).block("Sa garantie ?", 100).items[0])
        - Dell XPS 15 [PRODUCT]; price: 1599 €
          relations: the user INTERESTED_IN it
    """

    default_block = "entities"


@dataclass(eq=False, repr=False, kw_only=True)
class _LongTermSource(MemorySource):
    """A long-term memory records only when it is given the ``session_id`` to file the
    exchanges under (``longterm.session(session_id)``)."""

    session_id: str | None = None

    def __post_init__(self) -> None:
        session = getattr(self.target, "session", None)
        if self.session_id is not None:
            if not callable(session):
                raise InvalidInputError(
                    f"session_id needs a long-term memory with session(), got "
                    f"{type(self.target).__name__}"
                )
            self.target = session(self.session_id)
        if self.record_exchanges is None:
            self.record_exchanges = self.session_id is not None
        super().__post_init__()


class ProfileSource(_LongTermSource):
    """The user's profile from a :class:`~memory_chains.longterm.LongTermMemory`.

    With ``session_id``, :meth:`record` files exchanges under that session (one model call
    per turn); without, it records nothing.

    Example:
        >>> from memory_chains.protocol import MemoryBase, MemoryBlock
        >>> class LongTerm(MemoryBase):
        ...     block_names = ("profile", "facts")
        ...     def record(self, human, ai): pass
        ...     def context_block(self, question, max_tokens, name=None):
        ...         return MemoryBlock(name or "profile", ("- name: Alice", "- city: Lyon"))
        >>> ProfileSource(LongTerm()).block("", 50).items
        ('- name: Alice', '- city: Lyon')
    """

    default_block = "profile"


class FactsSource(_LongTermSource):
    """Facts recalled for the question from a long-term memory, most relevant first.

    Example:
        >>> from memory_chains.protocol import MemoryBase, MemoryBlock
        >>> class LongTerm(MemoryBase):
        ...     block_names = ("profile", "facts")
        ...     def record(self, human, ai): pass
        ...     def context_block(self, question, max_tokens, name=None):
        ...         return MemoryBlock("facts", ("- Ordered a Dell XPS 15 on 3 May.",))
        >>> FactsSource(LongTerm()).block("ma commande ?", 50).items[0]
        '- Ordered a Dell XPS 15 on 3 May.'
    """

    default_block = "facts"


def long_term_sources(
    longterm: Any,
    *,
    session_id: str | None = None,
    profile_priority: int = 70,
    facts_priority: int = 65,
) -> tuple[ProfileSource, FactsSource]:
    """The profile and the recalled facts of one long-term memory, in rendering order.

    With ``session_id`` the profile source records the exchanges (once, not twice).

    Example:
        >>> from memory_chains.longterm import LongTermMemory
        >>> from memory_chains.stores import InMemoryStore
        >>> from memory_chains.testing import HashEmbeddings
        >>> mem = LongTermMemory(InMemoryStore(), "alice", HashEmbeddings())
        >>> [(s.name, s.records) for s in long_term_sources(mem, session_id="s1")]
        [('profile', True), ('facts', False)]
    """
    return (
        ProfileSource(longterm, session_id=session_id, priority=profile_priority),
        FactsSource(
            longterm, session_id=session_id, priority=facts_priority, record_exchanges=False
        ),
    )


@dataclass(eq=False, repr=False, kw_only=True)
class RecallSource(MemorySource):
    """Past turns recalled for the question (``TurnIndex.for_user(user_id)``, or any memory
    giving a ``recalled`` block); the cited ids travel with the block.

    The block is kept whole or dropped (its lines cite turn ids). It never records: the
    index is fed from the store.

    Args:
        target: a :class:`~memory_chains.recall.UserRecall`, or a
            :class:`~memory_chains.recall.TurnIndex` with ``user_id``.
        user_id: with a ``TurnIndex``: whose turns.

    Example:
        >>> from memory_chains.recall import TurnIndex
        >>> index = TurnIndex()
        >>> index.add("alice", "s1#4", "Ma commande 4821 ?", speaker="Human")
        >>> b = RecallSource(index, user_id="alice").block("commande ?", 50)
        >>> b.cited_ids
        ('s1#4',)
    """

    user_id: str | None = None
    default_block = "recalled"

    def __post_init__(self) -> None:
        if self.user_id is not None:
            for_user = getattr(self.target, "for_user", None)
            if not callable(for_user):
                raise InvalidInputError(
                    f"user_id needs a TurnIndex (for_user), got {type(self.target).__name__}"
                )
            self.target = for_user(self.user_id)
        self.record_exchanges = False
        super().__post_init__()


def memory_sources(memory: Any, **priorities: int) -> tuple[MemorySource, ...]:
    """One :class:`MemorySource` per block of ``memory``, in its order; the first records.

    Args:
        memory: any :class:`~memory_chains.protocol.ConversationMemory`.
        **priorities: block name -> priority, overriding :data:`BLOCK_LAYOUT`.

    Example:
        >>> from memory_chains.memory import SummaryCore
        >>> from memory_chains.testing import ScriptedChatModel
        >>> mem = SummaryCore(ScriptedChatModel())
        >>> [(s.name, s.priority, s.records) for s in memory_sources(mem, recent=90)]
        [('summary', 50, True), ('recent', 90, False)]
    """
    target = as_memory(memory)
    sources = []
    for i, name in enumerate(target.block_names):
        extra: dict[str, Any] = {} if i == 0 else {"record_exchanges": False}
        if name in priorities:
            extra["priority"] = priorities[name]
        sources.append(MemorySource(target, block_name=name, **extra))
    return tuple(sources)
