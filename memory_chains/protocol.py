"""The one interface every memory implements: :class:`ConversationMemory`.

A memory does two things: it **records** an exchange (``record(human, ai)``) and it gives a
**context block** for a question under a token budget (``context_block(question,
max_tokens, name=None)``). A memory that keeps several kinds of context (a short-term
memory's running summary and recent turns, a long-term memory's profile and facts) names
them in ``block_names`` and gives each by name; ``name=None`` is its first.

The context builder, the classic ``ContextMemory`` shell and the LangChain 1.x adapters
read memories through this protocol only, so a memory of your own plugs into all of them.
Subclass :class:`MemoryBase` to get the async twins (:meth:`MemoryBase.arecord`,
:meth:`MemoryBase.acontext_block`) and input checks, or implement the two methods and the
attribute on any class.

====================================  =======================  ==============================
memory                                ``block_names``          ``record``
====================================  =======================  ==============================
``BufferCore``, ``WindowCore``,       ``summary``, ``recent``  stores the exchange
``TokenBudgetCore``, ``SummaryCore``
``EntityTracker``                     ``entities``             extracts entities, relations
``LongTermMemory``                    ``profile``, ``facts``   extracts profile and facts
``LongTermMemory.session(id)``        ``profile``, ``facts``   the same, filed under ``id``
``TurnIndex.for_user(user_id)``       ``recalled``             nothing (fed from the store)
====================================  =======================  ==============================

A :class:`~memory_chains.context.ContextBuilder` reads memories through
:class:`~memory_chains.context.MemorySource` (one block each) and records an exchange in
each memory behind its sources once (``builder.record``).

Example:
    >>> class Notes(MemoryBase):
    ...     '''Remembers the user's questions that mention a deadline.'''
    ...     block_names = ("deadlines",)
    ...     def __init__(self):
    ...         self.notes = []
    ...     def record(self, human, ai):
    ...         if "avant le" in human:
    ...             self.notes.append(human)
    ...     def context_block(self, question, max_tokens, name=None):
    ...         return MemoryBlock("deadlines", tuple(self.notes), title="Deadlines")
    >>> notes = Notes()
    >>> notes.record("Livraison possible avant le 12 mai ?", "Oui.")
    >>> isinstance(notes, ConversationMemory), notes.context_block("", 50).items
    (True, ('Livraison possible avant le 12 mai ?',))
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

from typing_extensions import get_protocol_members

from memory_chains.errors import InvalidInputError

__all__ = [
    "ConversationMemory",
    "MemoryBase",
    "MemoryBlock",
    "acontext_block",
    "arecord",
    "as_memory",
    "block_name",
    "check_budget",
    "implements",
]


@dataclass(frozen=True)
class MemoryBlock:
    """What one memory says about a question: named lines, and the exchanges it quotes.

    Attributes:
        name: the block (``recent``, ``summary``, ``entities``, ``profile``, ``facts``,
            ``recalled``, or a name of your own).
        items: its lines, most important first except for ``recent`` (oldest first); an
            entity's relations stay on its own item.
        turns: the verbatim ``(human, ai)`` exchanges it holds (``recent`` only).
        cited_ids: ids of the stored records it quotes (``recalled``).
        title: the memory's own heading for it (a context builder may set another).

    Example:
        >>> b = MemoryBlock("recent", ("Human: a\\nAI: b",), turns=(("a", "b"),))
        >>> b.empty, b.text()
        (False, 'Human: a\\nAI: b')
    """

    name: str
    items: tuple[str, ...] = ()
    turns: tuple[tuple[str, str], ...] = ()
    cited_ids: tuple[str, ...] = ()
    title: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise InvalidInputError(f"a memory block needs a name, got {self.name!r}")
        for field_name in ("items", "turns", "cited_ids"):
            value = getattr(self, field_name)
            if isinstance(value, str) or not isinstance(value, Sequence):
                raise InvalidInputError(
                    f"MemoryBlock.{field_name} must be a sequence, got {type(value).__name__}"
                )
            object.__setattr__(self, field_name, tuple(value))

    @property
    def empty(self) -> bool:
        """True when the block has nothing to say."""
        return not self.items and not self.turns

    def text(self) -> str:
        """The items, one per line."""
        return "\n".join(self.items)


@runtime_checkable
class ConversationMemory(Protocol):
    """A memory: records exchanges, gives named context blocks under a token budget.

    ``block_names`` lists the blocks it gives, in rendering order. ``context_block``
    returns the one called ``name`` (its first for None), sized to ``max_tokens`` as well
    as it can (a context builder shrinks it further when needed). ``record`` learns one
    successful exchange; it raises rather than half-writing.
    """

    block_names: Sequence[str]

    def record(self, human: str, ai: str) -> None:
        """Learn one exchange."""
        ...

    def context_block(self, question: str, max_tokens: int, name: str | None = None) -> MemoryBlock:
        """The block ``name`` (the first of :attr:`block_names` for None) for ``question``."""
        ...


class MemoryBase(ABC):
    """Base class of the memories: the async twins written once, and the block-name check.

    Subclasses define ``block_names``, :meth:`record` and :meth:`context_block`; a memory
    with native async work overrides :meth:`arecord` / :meth:`acontext_block`, the others
    get them run in a worker thread. ``records = False`` tells a context builder that
    :meth:`record` learns nothing (recall over a store fed elsewhere).
    """

    block_names: ClassVar[tuple[str, ...]] = ()
    records: ClassVar[bool] = True

    @abstractmethod
    def record(self, human: str, ai: str) -> None:
        """Learn one exchange."""

    @abstractmethod
    def context_block(self, question: str, max_tokens: int, name: str | None = None) -> MemoryBlock:
        """The block ``name`` for ``question`` within ``max_tokens``."""

    async def arecord(self, human: str, ai: str) -> None:
        """Async :meth:`record` (in a worker thread unless overridden)."""
        await asyncio.to_thread(self.record, human, ai)

    async def acontext_block(
        self, question: str, max_tokens: int, name: str | None = None
    ) -> MemoryBlock:
        """Async :meth:`context_block` (in a worker thread unless overridden)."""
        return await asyncio.to_thread(self.context_block, question, max_tokens, name)


def block_name(memory: Any, name: str | None) -> str:
    """``name`` checked against ``memory.block_names`` (the first one for None).

    Raises:
        InvalidInputError: the memory gives no block of that name.

    Example:
        >>> class M: block_names = ("profile", "facts")
        >>> block_name(M(), None), block_name(M(), "facts")
        ('profile', 'facts')
    """
    names = tuple(getattr(memory, "block_names", ()))
    if name is None:
        if not names:
            raise InvalidInputError(f"{type(memory).__name__} declares no block_names")
        return str(names[0])
    if name not in names:
        raise InvalidInputError(
            f"{type(memory).__name__} gives the blocks {list(names)}, not {name!r}"
        )
    return name


def check_budget(max_tokens: object) -> int:
    """``max_tokens`` as a non-negative int, else an :class:`InvalidInputError`.

    Example:
        >>> check_budget(12)
        12
    """
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 0:
        raise InvalidInputError(f"max_tokens must be an integer >= 0, got {max_tokens!r}")
    return max_tokens


@functools.cache
def _class_implements(cls: Any, protocol: Any) -> bool:
    return all(hasattr(cls, member) for member in get_protocol_members(protocol))


def implements(obj: Any, protocol: type) -> bool:
    """``isinstance(obj, protocol)`` for a runtime-checkable Protocol, answered once per
    class when the class itself has every member (a plain ``isinstance`` on a Protocol
    looks up each member again on every call; the context builder asks per request).

    Example:
        >>> class M:
        ...     block_names = ("n",)
        ...     def record(self, h, a): pass
        ...     def context_block(self, q, n, name=None): pass
        >>> implements(M(), ConversationMemory), implements(object(), ConversationMemory)
        (True, False)
    """
    cls: Any = type(obj)
    return _class_implements(cls, protocol) or isinstance(obj, protocol)


def as_memory(obj: Any, what: str = "memory") -> Any:
    """``obj`` if it implements :class:`ConversationMemory`; a classic shell gives its core
    (``.core``, ``.tracker``). Anything else is an :class:`InvalidInputError`.

    Example:
        >>> from memory_chains.memory import BufferMemory
        >>> type(as_memory(BufferMemory())).__name__
        'BufferCore'
        >>> try:
        ...     as_memory(object())
        ... except InvalidInputError as exc:
        ...     print(str(exc)[:46])
        memory must implement ConversationMemory (bloc
    """
    for candidate in (obj, getattr(obj, "core", None), getattr(obj, "tracker", None)):
        if candidate is not None and implements(candidate, ConversationMemory):
            return candidate
    raise InvalidInputError(
        f"{what} must implement ConversationMemory (block_names, record, context_block); "
        f"got {type(obj).__name__}"
    )


async def arecord(memory: Any, human: str, ai: str) -> None:
    """``await memory.arecord(...)`` when it has one, else :meth:`record` in a thread.

    Example:
        >>> class M:
        ...     block_names = ("n",)
        ...     def __init__(self): self.seen = []
        ...     def record(self, h, a): self.seen.append(h)
        ...     def context_block(self, q, n, name=None): return MemoryBlock("n")
        >>> m = M(); asyncio.run(arecord(m, "hi", "")); m.seen
        ['hi']
    """
    method = getattr(memory, "arecord", None)
    if method is not None and inspect.iscoroutinefunction(method):
        await method(human, ai)
    else:
        await asyncio.to_thread(memory.record, human, ai)


async def acontext_block(
    memory: Any, question: str, max_tokens: int, name: str | None = None
) -> MemoryBlock:
    """``await memory.acontext_block(...)`` when it has one, else a thread."""
    method = getattr(memory, "acontext_block", None)
    if method is not None and inspect.iscoroutinefunction(method):
        block: MemoryBlock = await method(question, max_tokens, name)
    else:
        block = await asyncio.to_thread(memory.context_block, question, max_tokens, name)
    return block
