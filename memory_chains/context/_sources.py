"""Adapters turning our memories into context sources (:class:`ContextSource`).

==========================  =====================================  ============  ===========
adapter                     reads                                  default name  priority
==========================  =====================================  ============  ===========
:class:`ProfileSource`      ``longterm.profile_block(max_tokens)``  ``profile``   70
:class:`FactsSource`        ``longterm.facts_block(q, max_tokens)`` ``facts``     65
:class:`RecentTurnsSource`  a short-term memory's ``context()``    ``recent``    80
:class:`SummarySource`      the same, its running summary          ``summary``   50
:class:`EntitySource`       ``tracker.context(q, max_tokens=…)``   ``entities``  60
:class:`RecallSource`       ``recall.context(user, q, max_tokens)`` ``recalled``  40
:class:`DocumentsSource`    documents, or a retriever              ``documents`` 30
:class:`TextSource`         a fixed text                           (given)       0
==========================  =====================================  ============  ===========

Long-term memory and recall are duck-typed: any object with those methods works. Every
adapter has ``ablock`` (the memory's async method when it has one, else a thread), and
``target`` (the memory it reads) with ``record`` / ``arecord`` (how that memory learns an
exchange: ``add_exchange`` for short-term memories, ``observe`` for the entity tracker, and
``observe(…, session_id=…)`` for a long-term memory given a ``session_id``), used by
:class:`~memory_chains.context.ContextMemory`. Recall indexes turns on its own: its adapter
does not record.

Example:
    >>> from memory_chains.memory import WindowCore
    >>> mem = WindowCore(k=2)
    >>> _ = mem.add_exchange("Bonjour", "Bonjour !")
    >>> RecentTurnsSource(mem).block("Ça va ?", 100).items
    ('Human: Bonjour\\nAI: Bonjour !',)
"""

from __future__ import annotations

import asyncio
import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from memory_chains.context._block import ContextBlock, Shrink
from memory_chains.errors import InvalidInputError

__all__ = [
    "DocumentsSource",
    "EntitySource",
    "FactsSource",
    "ProfileSource",
    "RecallSource",
    "RecentTurnsSource",
    "SummarySource",
    "TextSource",
    "long_term_sources",
    "short_term_sources",
]


def _require(obj: Any, *methods: str) -> None:
    missing = [m for m in methods if not callable(getattr(obj, m, None))]
    if missing:
        raise InvalidInputError(
            f"{type(obj).__name__} has no {', '.join(missing)}(): pass the memory object "
            "this adapter reads"
        )


async def _call(obj: Any, name: str, *args: Any, **kwargs: Any) -> Any:
    """``obj.a<name>(...)`` when it exists (awaited), else ``obj.<name>(...)`` in a thread."""
    async_method = getattr(obj, "a" + name, None)
    if async_method is not None and inspect.iscoroutinefunction(async_method):
        return await async_method(*args, **kwargs)
    return await asyncio.to_thread(getattr(obj, name), *args, **kwargs)


def _lines(text: str, *, header: bool = False) -> tuple[str, ...]:
    """Non-blank lines; with ``header``, a first line ending with ``:`` (the memory's own
    title, such as "User profile:") is left out: the block has its heading."""
    lines = [line for line in (text or "").strip().splitlines() if line.strip()]
    if header and lines and lines[0].rstrip().endswith(":") and not lines[0].startswith("- "):
        lines = lines[1:]
    return tuple(lines)


@dataclass(eq=False, repr=False, kw_only=True)
class _Source(ABC):
    """Shared fields: the memory read (``target``), name, priority, heading, cap, and how
    blocks shrink. Subclasses state only their defaults and what they read."""

    target: Any = field(kw_only=False)
    name: str = ""
    priority: int = 0
    title: str = ""
    max_tokens: int | None = None
    min_tokens: int = 0
    shrink: Shrink = field(default="drop_last", init=False)

    reads: ClassVar[tuple[str, ...]] = ()
    """Methods the target must have."""

    def __post_init__(self) -> None:
        self._check_target()
        if self.max_tokens is not None and (
            isinstance(self.max_tokens, bool) or self.max_tokens < 0
        ):
            raise InvalidInputError(f"max_tokens must be None or >= 0, got {self.max_tokens!r}")

    def _check_target(self) -> None:
        _require(self.target, *self.reads)

    @property
    def records(self) -> bool:
        """True when :meth:`record` teaches the target something."""
        return callable(getattr(self.target, "add_exchange", None)) or callable(
            getattr(self.target, "observe", None)
        )

    def _recorder(self) -> tuple[str, dict[str, Any]]:
        if callable(getattr(self.target, "add_exchange", None)):
            return "add_exchange", {}
        return "observe", {}

    def record(self, human: str, ai: str) -> None:
        """Give the exchange to the target (nothing when :attr:`records` is False)."""
        if self.records:
            method, kwargs = self._recorder()
            getattr(self.target, method)(human, ai, **kwargs)

    async def arecord(self, human: str, ai: str) -> None:
        """Async :meth:`record` (the target's ``a…`` method when it has one)."""
        if self.records:
            method, kwargs = self._recorder()
            await _call(self.target, method, human, ai, **kwargs)

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


_Request = tuple[str, tuple[Any, ...], dict[str, Any]]


class _ReadingSource(_Source):
    """A source whose block is one call to a method of its target: :meth:`_request` names
    the call, :meth:`_from` turns its result into the block; ``block`` and ``ablock`` differ
    only in how the call is made."""

    @abstractmethod
    def _request(self, question: str, max_tokens: int) -> _Request | None:
        """``(method, args, kwargs)`` to call on the target; None for an empty block."""

    @abstractmethod
    def _from(self, result: Any) -> ContextBlock:
        """The block made of what the target returned."""

    def block(self, question: str, max_tokens: int) -> ContextBlock:
        """The source's block for ``question`` (one item per line, entity or turn)."""
        request = self._request(question, max_tokens)
        if request is None:
            return self._make(())
        method, args, kwargs = request
        return self._from(getattr(self.target, method)(*args, **kwargs))

    async def ablock(self, question: str, max_tokens: int) -> ContextBlock:
        """Async :meth:`block` (the target's ``a…`` method when it has one, else a thread)."""
        request = self._request(question, max_tokens)
        if request is None:
            return self._make(())
        method, args, kwargs = request
        return self._from(await _call(self.target, method, *args, **kwargs))


@dataclass(eq=False, repr=False, kw_only=True)
class RecentTurnsSource(_ReadingSource):
    """The verbatim recent exchanges of a short-term memory (oldest dropped first).

    Args:
        target: a :class:`~memory_chains.memory.ShortTermMemory` (``WindowCore``,
            ``TokenBudgetCore``, ``SummaryCore``…) or anything whose ``context()`` has
            ``turns`` with ``human`` / ``ai``.
        name, priority, title, max_tokens, min_tokens: see :class:`ContextBlock`.

    Example:
        >>> from memory_chains.memory import BufferCore
        >>> mem = BufferCore()
        >>> _ = mem.add_exchange("q1", "a1"); _ = mem.add_exchange("q2", "a2")
        >>> RecentTurnsSource(mem).block("", 100).turns
        (('q1', 'a1'), ('q2', 'a2'))
    """

    name: str = "recent"
    priority: int = 80
    title: str = "Recent conversation"
    shrink: Shrink = field(default="drop_oldest", init=False)
    reads: ClassVar[tuple[str, ...]] = ("context",)

    def _request(self, question: str, max_tokens: int) -> _Request:
        return "context", (), {}

    def _from(self, result: Any) -> ContextBlock:
        human = getattr(self.target, "human_prefix", "Human")
        ai = getattr(self.target, "ai_prefix", "AI")
        turns = tuple((t.human, t.ai) for t in result.turns)
        return self._make([f"{human}: {h}\n{ai}: {a}" for h, a in turns], turns=turns)


@dataclass(eq=False, repr=False, kw_only=True)
class SummarySource(_ReadingSource):
    """The running summary of a short-term memory (empty for memories without one).

    Example:
        >>> from memory_chains.memory import WindowCore
        >>> SummarySource(WindowCore()).block("", 100).empty
        True
    """

    name: str = "summary"
    priority: int = 50
    title: str = "Summary of the earlier conversation"
    shrink: Shrink = field(default="truncate", init=False)
    reads: ClassVar[tuple[str, ...]] = ("context",)

    def _request(self, question: str, max_tokens: int) -> _Request:
        return "context", (), {}

    def _from(self, result: Any) -> ContextBlock:
        return self._make(_lines(result.summary))


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


@dataclass(eq=False, repr=False, kw_only=True)
class EntitySource(_ReadingSource):
    """The entities most relevant to the question (:class:`~memory_chains.entities.EntityTracker`).

    The tracker renders its block under the budget; items are entities (with their
    attributes and relations), most relevant first, so the least relevant go first.

    Args:
        target: an ``EntityTracker`` (anything with ``context(question, max_tokens=…,
            limit=…)``).
        limit: at most this many entities.
        name, priority, title, max_tokens, min_tokens: see :class:`ContextBlock`.

    Example:
        >>> from memory_chains.entities import EntityTracker, RuleEntityExtractor
        >>> t = EntityTracker(RuleEntityExtractor(use_spacy=False))
        >>> _ = t.observe("Je cherche le Dell XPS 15", "Il coûte 1599 €.")
        >>> print(EntitySource(t).block("Sa garantie ?", 100).items[0])
        - Dell XPS 15 [PRODUCT]; price: 1599 €
          relations: the user INTERESTED_IN it
    """

    name: str = "entities"
    priority: int = 60
    title: str = "Known entities (most relevant first)"
    max_tokens: int | None = 256
    limit: int = 12
    reads: ClassVar[tuple[str, ...]] = ("context",)

    def _request(self, question: str, max_tokens: int) -> _Request:
        return "context", (question,), {"max_tokens": max_tokens, "limit": self.limit}

    def _from(self, result: Any) -> ContextBlock:
        lines = _lines(result)
        if lines and not lines[0].startswith("- "):
            lines = lines[1:]  # the tracker's own header: the block has a heading
        items: list[str] = []
        for line in lines:
            if line.startswith("- ") or not items:
                items.append(line)
            else:
                items[-1] += "\n" + line  # an entity's relations line
        return self._make(items)


@dataclass(eq=False, repr=False, kw_only=True)
class _LongTermSource(_ReadingSource):
    """A long-term memory records (``observe(human, ai, session_id=…)``) only when it is
    given the ``session_id`` to file the exchange under. Its text starts with the memory's
    own title, left out (the block has its heading)."""

    session_id: str | None = None

    @property
    def records(self) -> bool:
        return self.session_id is not None and callable(getattr(self.target, "observe", None))

    def _recorder(self) -> tuple[str, dict[str, Any]]:
        return "observe", {"session_id": self.session_id}

    def _from(self, result: Any) -> ContextBlock:
        return self._make(_lines(result, header=True))


@dataclass(eq=False, repr=False, kw_only=True)
class ProfileSource(_LongTermSource):
    """The user's profile from a long-term memory (``profile_block(max_tokens) -> str``).

    Args:
        target: a :class:`~memory_chains.longterm.LongTermMemory` or any object with
            ``profile_block``.
        session_id: when given, :meth:`record` files exchanges with
            ``longterm.observe(human, ai, session_id=…)`` (one model call per turn).
        name, priority, title, max_tokens, min_tokens: see :class:`ContextBlock`.

    Example:
        >>> class LongTerm:
        ...     def profile_block(self, max_tokens):
        ...         return "User profile:\\n- name: Alice\\n- city: Lyon"
        >>> ProfileSource(LongTerm()).block("", 50).items
        ('- name: Alice', '- city: Lyon')
    """

    name: str = "profile"
    priority: int = 70
    title: str = "About the user"
    reads: ClassVar[tuple[str, ...]] = ("profile_block",)

    def _request(self, question: str, max_tokens: int) -> _Request:
        return "profile_block", (max_tokens,), {}


@dataclass(eq=False, repr=False, kw_only=True)
class FactsSource(_LongTermSource):
    """Facts recalled for the question from a long-term memory
    (``facts_block(question, max_tokens) -> str``, most relevant first).

    Args: as :class:`ProfileSource`.

    Example:
        >>> class LongTerm:
        ...     def facts_block(self, question, max_tokens):
        ...         return "- Ordered a Dell XPS 15 on 3 May.\\n- Prefers e-mail."
        >>> FactsSource(LongTerm()).block("ma commande ?", 50).items[0]
        '- Ordered a Dell XPS 15 on 3 May.'
    """

    name: str = "facts"
    priority: int = 65
    title: str = "What we know from earlier conversations"
    reads: ClassVar[tuple[str, ...]] = ("facts_block",)

    def _request(self, question: str, max_tokens: int) -> _Request | None:
        return ("facts_block", (question, max_tokens), {}) if question else None


def long_term_sources(
    longterm: Any,
    *,
    session_id: str | None = None,
    profile_priority: int = 70,
    facts_priority: int = 65,
) -> tuple[ProfileSource, FactsSource]:
    """The profile and the recalled facts of one long-term memory, in rendering order.

    Example:
        >>> class LongTerm:
        ...     def profile_block(self, max_tokens): return ""
        ...     def facts_block(self, question, max_tokens): return ""
        >>> [s.name for s in long_term_sources(LongTerm())]
        ['profile', 'facts']
    """
    return (
        ProfileSource(longterm, session_id=session_id, priority=profile_priority),
        FactsSource(longterm, session_id=session_id, priority=facts_priority),
    )


@dataclass(eq=False, repr=False, kw_only=True)
class RecallSource(_ReadingSource):
    """Past turns recalled for the question (``recall.context(user_id, question, max_tokens)``
    returning a ``RecalledContext`` or a ``(text, cited_ids)`` pair); the cited ids travel
    with the block.

    The recall index sizes its text to the budget it is given and its lines cite turn ids,
    so by default the block is kept whole or dropped (``shrink="drop"``): a cut would cite
    turns it no longer shows. It never records (the index is fed from the store).

    Example:
        >>> class Recall:
        ...     def context(self, user_id, question, max_tokens):
        ...         return "(s1#4) Human: Ma commande 4821 ?", ["s1#4"]
        >>> b = RecallSource(Recall(), user_id="alice").block("commande ?", 50)
        >>> b.items, b.cited_ids
        (('(s1#4) Human: Ma commande 4821 ?',), ('s1#4',))
    """

    user_id: str
    name: str = "recalled"
    priority: int = 40
    title: str = "From past conversations"
    max_tokens: int | None = 400
    shrink: Shrink = "drop"
    reads: ClassVar[tuple[str, ...]] = ("context",)

    @property
    def records(self) -> bool:
        return False

    def _request(self, question: str, max_tokens: int) -> _Request | None:
        if not question or max_tokens < 1:
            return None
        return "context", (self.user_id, question, max_tokens), {}

    def _from(self, result: Any) -> ContextBlock:
        if hasattr(result, "text") and hasattr(result, "turn_ids"):
            text, cited = result.text, result.turn_ids
        else:
            try:
                text, cited = result
            except (TypeError, ValueError) as exc:
                raise InvalidInputError(
                    "recall.context must return a RecalledContext or (text, cited_ids), "
                    f"got {type(result).__name__}"
                ) from exc
        return self._make(_lines(text), cited_ids=tuple(str(c) for c in cited))


@dataclass(eq=False, repr=False, kw_only=True)
class DocumentsSource(_Source):
    """Retrieved documents: a fixed list, a retriever (``invoke``) or a function of the
    question; the lowest-ranked documents go first.

    Example:
        >>> from langchain_core.documents import Document
        >>> docs = [Document("Retours sous 30 jours.", metadata={"source": "retours.md"})]
        >>> DocumentsSource(docs).block("retours ?", 50).items
        ('[retours.md] Retours sous 30 jours.',)
    """

    name: str = "documents"
    priority: int = 30
    title: str = "Documents"

    def _check_target(self) -> None:
        docs = self.target
        if not (callable(docs) or hasattr(docs, "invoke") or isinstance(docs, (list, tuple))):
            raise InvalidInputError(
                "documents must be a list of Documents, a retriever or a function of the question"
            )

    def _fetch(self, question: str) -> Any:
        docs = self.target
        if isinstance(docs, (list, tuple)):
            return docs
        if hasattr(docs, "invoke"):
            return docs.invoke(question)
        fetch: Callable[[str], Any] = docs
        return fetch(question)

    def _from(self, docs: Any) -> ContextBlock:
        items = []
        for d in docs:
            source = d.metadata.get("source")
            text = " ".join(d.page_content.split())
            items.append(f"[{source}] {text}" if source else text)
        return self._make(items)

    def block(self, question: str, max_tokens: int) -> ContextBlock:
        """The documents, one item each, ``[source] text``."""
        return self._from(self._fetch(question))

    async def ablock(self, question: str, max_tokens: int) -> ContextBlock:
        """Async :meth:`block` (``ainvoke`` for a retriever)."""
        if hasattr(self.target, "ainvoke"):
            return self._from(await self.target.ainvoke(question))
        return await asyncio.to_thread(self.block, question, max_tokens)


class TextSource(_Source):
    """A fixed text (instructions, notes), truncated when the budget is short.

    Example:
        >>> TextSource("rules", "Answer in French.").block("", 10).items
        ('Answer in French.',)
    """

    def __init__(
        self,
        name: str,
        text: str,
        *,
        priority: int = 0,
        title: str = "",
        min_tokens: int = 0,
    ) -> None:
        if not isinstance(text, str):
            raise InvalidInputError(f"text must be a string, got {type(text).__name__}")
        super().__init__(None, name=name, priority=priority, title=title, min_tokens=min_tokens)
        self.shrink = "truncate"
        self.text = text

    def block(self, question: str, max_tokens: int) -> ContextBlock:
        """The text as one item."""
        return self._make((self.text.strip(),))
