"""The context builder: :class:`ContextBuilder`, :class:`ContextSource`, :class:`TopicPolicy`,
and its immutable result :class:`BuiltContext` (with one :class:`BlockReport` per source).

``build(question)`` asks every source for its block, applies the topic policy (a question
that changes the subject drops or demotes the previous topic's blocks; the recent turns are
cut where the current topic began), then fits everything into one token budget
(:func:`~memory_chains.context._allocate.allocate`). ``abuild`` differs only in how the
blocks are fetched; the assembly is the same code.

Example:
    >>> from memory_chains.context import ContextBlock, TextSource
    >>> words = lambda t: len(t.split())
    >>> builder = ContextBuilder(
    ...     [TextSource("profile", "Alice, lives in Lyon.", priority=2),
    ...      TextSource("notes", "A long low-priority note about many things.", priority=1)],
    ...     max_tokens=12, token_counter=words)
    >>> ctx = builder.build("Where do I live?")
    >>> ctx.kept, ctx.shrunk, ctx.total_tokens
    (('profile',), ('notes',), 12)
    >>> print(ctx.render())
    ## profile
    Alice, lives in Lyon.
    <BLANKLINE>
    ## notes
    A long low-priority […]
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Literal, Protocol, runtime_checkable

from memory_chains.context._allocate import allocate
from memory_chains.context._block import ContextBlock, TokenCounter, keep_last, total_render
from memory_chains.context._topic import TopicChange, TopicTracker
from memory_chains.errors import InvalidInputError
from memory_chains.protocol import implements

__all__ = [
    "BlockReport",
    "BlockStatus",
    "BuiltContext",
    "ContextBuilder",
    "ContextSource",
    "TopicAction",
    "TopicPolicy",
    "recording_sources",
]

BlockStatus = Literal["kept", "shrunk", "dropped", "empty"]
TopicAction = Literal["drop", "demote", "keep"]
_ACTIONS = ("drop", "demote", "keep")


@runtime_checkable
class ContextSource(Protocol):
    """Anything that contributes one block: a name, a priority and ``block()``.

    ``block(question, max_tokens)`` returns the source's :class:`ContextBlock` for the
    question, at most ``max_tokens`` long if the source can size itself (the builder shrinks
    it further when needed). A source may also define ``async ablock(question, max_tokens)``
    and an int ``max_tokens`` attribute capping its block.
    """

    name: str
    priority: int

    def block(self, question: str, max_tokens: int) -> ContextBlock:
        """The source's block for ``question``."""
        ...


def _default_on_change() -> Mapping[str, TopicAction]:
    return MappingProxyType({"recent": "drop", "summary": "demote", "entities": "demote"})


@dataclass(frozen=True)
class TopicPolicy:
    """What the builder does about topic changes.

    Attributes:
        tracker: the :class:`TopicTracker` deciding (give it embeddings to use them).
        on_change: block name -> ``"drop"``, ``"demote"`` (below every other block) or
            ``"keep"``, applied when the question opens a new subject. Default: drop the
            recent turns, demote the summary and the entities.
        cut_history: within a topic, keep only the turns since that topic began.

    Example:
        >>> TopicPolicy(on_change={"recent": "demote"}).on_change["recent"]
        'demote'
    """

    tracker: TopicTracker = field(default_factory=TopicTracker)
    on_change: Mapping[str, TopicAction] = field(default_factory=_default_on_change)
    cut_history: bool = True

    def __post_init__(self) -> None:
        bad = {k: v for k, v in self.on_change.items() if v not in _ACTIONS}
        if bad:
            raise InvalidInputError(f"on_change actions must be one of {_ACTIONS}, got {bad}")
        object.__setattr__(self, "on_change", MappingProxyType(dict(self.on_change)))


@dataclass(frozen=True)
class BlockReport:
    """What happened to one source's block.

    Attributes:
        name: the block.
        priority: its priority (after a topic demotion).
        status: ``kept`` whole, ``shrunk``, ``dropped`` or ``empty`` (nothing to say).
        need: tokens the block asked for (after a topic cut or demotion).
        tokens: tokens it got (0 when dropped).
        reason: why it was shrunk, cut, demoted or dropped (``""`` when kept as is).

    Example:
        >>> BlockReport("recent", 80, "dropped", 120, 0, "topic change").status
        'dropped'
    """

    name: str
    priority: int
    status: BlockStatus
    need: int
    tokens: int
    reason: str = ""


@dataclass(frozen=True)
class BuiltContext:
    """The assembled context: the blocks kept (whole or shrunk) and a report per source.

    Attributes:
        question: the question it was built for.
        blocks: the blocks kept, in source order (the rendering order).
        reports: one :class:`BlockReport` per source, in source order.
        max_tokens: the budget.
        total_tokens: tokens of :meth:`render` (never more than ``max_tokens``).
        topic: the topic decision, or None without a topic policy.

    Example:
        >>> ctx = BuiltContext("q", (ContextBlock("facts", ("Lyon",)),), (), 10, 3)
        >>> ctx.get("facts").items, ctx.get("recent")
        (('Lyon',), None)
    """

    question: str
    blocks: tuple[ContextBlock, ...]
    reports: tuple[BlockReport, ...]
    max_tokens: int
    total_tokens: int
    topic: TopicChange | None = None

    def _names(self, *statuses: str) -> tuple[str, ...]:
        return tuple(r.name for r in self.reports if r.status in statuses)

    @property
    def kept(self) -> tuple[str, ...]:
        """Blocks kept whole."""
        return self._names("kept")

    @property
    def shrunk(self) -> tuple[str, ...]:
        """Blocks kept but shrunk."""
        return self._names("shrunk")

    @property
    def dropped(self) -> tuple[str, ...]:
        """Blocks left out (budget, ``min_tokens`` or topic change)."""
        return self._names("dropped")

    @property
    def tokens(self) -> dict[str, int]:
        """Tokens per block (0 for dropped and empty ones)."""
        return {r.name: r.tokens for r in self.reports}

    @property
    def turns(self) -> tuple[tuple[str, str], ...]:
        """The ``(human, ai)`` exchanges of the kept blocks (the chat history to show)."""
        return tuple(t for b in self.blocks for t in b.turns)

    @property
    def cited_ids(self) -> tuple[str, ...]:
        """Ids of the stored records quoted by the kept blocks."""
        return tuple(i for b in self.blocks for i in b.cited_ids)

    def get(self, name: str) -> ContextBlock | None:
        """The kept block called ``name``, or None."""
        return next((b for b in self.blocks if b.name == name), None)

    def render(self, exclude: Sequence[str] = ()) -> str:
        """The kept blocks as ``## heading`` sections separated by blank lines."""
        return total_render([b for b in self.blocks if b.name not in exclude])


class ContextBuilder:
    """Assembles named blocks from several sources under one token budget.

    Args:
        sources: :class:`ContextSource` objects (adapters in :mod:`memory_chains.context`);
            their order is the rendering order, their priorities decide who shrinks.
        max_tokens: the budget of the whole rendering.
        token_counter: ``str -> int``; default: the project's offline counter
            (:func:`memory_chains.providers.get_token_counter`).
        topic: a :class:`TopicPolicy`, ``True`` for the default one, or None (no topic
            handling).

    Example:
        >>> from memory_chains.context import RecentTurnsSource
        >>> from memory_chains.memory import WindowCore
        >>> from memory_chains.testing import word_counter
        >>> mem = WindowCore(k=3, token_counter=word_counter)
        >>> _ = mem.add_exchange("Quels sont les horaires du cours de Pilates ?", "Mardi 12h30.")
        >>> builder = ContextBuilder([RecentTurnsSource(mem)], 100, word_counter, topic=True)
        >>> builder.build("Et pour le samedi ?").kept
        ('recent',)
        >>> ctx = builder.build("Quelle est la garantie du Dell XPS 15 ?")
        >>> ctx.topic.changed, ctx.dropped
        (True, ('recent',))
    """

    def __init__(
        self,
        sources: Sequence[ContextSource],
        max_tokens: int = 1500,
        token_counter: TokenCounter | None = None,
        *,
        topic: TopicPolicy | bool | None = None,
    ) -> None:
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 0:
            raise InvalidInputError(f"max_tokens must be an integer >= 0, got {max_tokens!r}")
        if token_counter is not None and not callable(token_counter):
            raise InvalidInputError("token_counter must be a callable str -> int")
        sources = tuple(sources)
        for s in sources:
            if not implements(s, ContextSource):
                raise InvalidInputError(
                    f"{type(s).__name__} is not a context source: it needs name, priority "
                    "and block(question, max_tokens) (see memory_chains.context adapters)"
                )
        names = [s.name for s in sources]
        if len(set(names)) != len(names):
            raise InvalidInputError(f"source names must be unique, got {names}: pass name=...")
        if topic is True:
            topic = TopicPolicy()
        elif topic is False:
            topic = None
        if topic is not None and not isinstance(topic, TopicPolicy):
            raise InvalidInputError("topic must be a TopicPolicy, True, False or None")
        self.sources = sources
        self.max_tokens = max_tokens
        self.topic = topic
        self._token_counter = token_counter

    @property
    def token_counter(self) -> TokenCounter:
        """The counter used for the budget (resolved on first use)."""
        if self._token_counter is None:
            from memory_chains.providers import get_token_counter

            self._token_counter = get_token_counter()
        return self._token_counter

    def count(self, text: str) -> int:
        """Tokens of ``text`` (0 for an empty text)."""
        return int(self.token_counter(text)) if text else 0

    # -- recording ------------------------------------------------------------------------

    def record(self, human: str, ai: str) -> None:
        """Give one exchange to every memory behind the sources that records, each once
        (:func:`recording_sources`)."""
        for source in recording_sources(self.sources):
            source.record(human, ai)

    async def arecord(self, human: str, ai: str) -> None:
        """Async :meth:`record` (each memory's ``arecord``, one after the other)."""
        for source in recording_sources(self.sources):
            await source.arecord(human, ai)

    # -- building -------------------------------------------------------------------------

    def build(self, question: str) -> BuiltContext:
        """The context for ``question`` (deterministic for the same sources' content).

        Raises:
            InvalidInputError: the question is not a string, or a source misbehaved.
        """
        q = _question(question)
        blocks = [s.block(q, self._cap(s)) for s in self.sources]
        return self._assemble(q, blocks)

    async def abuild(self, question: str) -> BuiltContext:
        """Async :meth:`build`: sources are read concurrently (``ablock`` when they have it)."""
        q = _question(question)
        blocks = await asyncio.gather(*(self._ablock(s, q) for s in self.sources))
        return await asyncio.to_thread(self._assemble, q, list(blocks))

    def _cap(self, source: ContextSource) -> int:
        cap = getattr(source, "max_tokens", None)
        return min(cap, self.max_tokens) if isinstance(cap, int) else self.max_tokens

    async def _ablock(self, source: ContextSource, question: str) -> ContextBlock:
        ablock = getattr(source, "ablock", None)
        if ablock is not None:
            block: ContextBlock = await ablock(question, self._cap(source))
            return block
        return await asyncio.to_thread(source.block, question, self._cap(source))

    def _assemble(self, question: str, raw: list[ContextBlock]) -> BuiltContext:
        for source, block in zip(self.sources, raw, strict=True):
            if not isinstance(block, ContextBlock):
                raise InvalidInputError(
                    f"source {source.name!r} returned {type(block).__name__}, not a ContextBlock"
                )
        names = [b.name for b in raw]
        if len(set(names)) != len(names):
            raise InvalidInputError(f"blocks must have unique names, got {names}")
        topic, blocks, notes = self._apply_topic(question, raw)
        fitted = allocate(blocks, self.max_tokens, self.count)
        reports = []
        for original, block, final in zip(raw, blocks, fitted, strict=True):
            note = notes.get(block.name, "")
            # a block the topic policy emptied still reports what it asked for
            need = self.count((original if note == "topic change" else block).render())
            if block.empty:
                status: BlockStatus = "dropped" if note == "topic change" else "empty"
            elif final is None:
                status, note = "dropped", _join(note, "budget")
            elif final is not block:
                status, note = "shrunk", _join(note, "budget")
            else:
                status = "kept"
            tokens = self.count(final.render()) if final is not None else 0
            reports.append(BlockReport(block.name, block.priority, status, need, tokens, note))
        kept = tuple(b for b in fitted if b is not None)
        return BuiltContext(
            question=question,
            blocks=kept,
            reports=tuple(reports),
            max_tokens=self.max_tokens,
            total_tokens=self.count(total_render(kept)),
            topic=topic,
        )

    def _apply_topic(
        self, question: str, blocks: list[ContextBlock]
    ) -> tuple[TopicChange | None, list[ContextBlock], dict[str, str]]:
        policy = self.topic
        if policy is None:
            return None, blocks, {}
        turns = [t for b in blocks for t in b.turns]
        change = policy.tracker.detect(turns, question)
        floor = min((b.priority for b in blocks), default=0) - 1
        out: list[ContextBlock] = []
        notes: dict[str, str] = {}
        for b in blocks:
            action = policy.on_change.get(b.name, "keep") if change.changed else "keep"
            if action == "drop" and not b.empty:
                b = replace(b, items=(), turns=())
                notes[b.name] = "topic change"
            elif action == "demote" and not b.empty:
                b = replace(b, priority=floor)
                notes[b.name] = "demoted: topic change"
            elif b.turns and policy.cut_history:
                start = policy.tracker.topic_start(b.turns)
                if start:
                    b = keep_last(b, len(b.turns) - start)
                    notes[b.name] = f"cut at topic start ({start} earlier turns left out)"
            out.append(b)
        return change, out, notes


def recording_sources(sources: Sequence[object]) -> list[Any]:
    """The sources that record, one per memory behind them (``target``), in source order.

    Two sources reading the same memory (its summary and its recent turns) record it once.

    Example:
        >>> from memory_chains.context import short_term_sources, TextSource
        >>> from memory_chains.memory import WindowCore
        >>> sources = [*short_term_sources(WindowCore()), TextSource("rules", "Be kind.")]
        >>> [s.name for s in recording_sources(sources)]
        ['summary']
    """
    chosen: list[Any] = []
    targets: list[Any] = []
    for source in sources:
        if not getattr(source, "records", False) or not callable(getattr(source, "record", None)):
            continue
        target = getattr(source, "target", source)
        if not any(t is target or t == target for t in targets):
            targets.append(target)
            chosen.append(source)
    return chosen


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def _question(question: object) -> str:
    if not isinstance(question, str):
        raise InvalidInputError(
            f"question must be a string, got {type(question).__name__}: pass the user's text"
        )
    return question.strip()
