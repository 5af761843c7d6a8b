"""Every memory of one conversation, assembled per request: :class:`SessionMemory`.

For a ``(user, session)`` the app reads and writes:

* the session's **window** and running **summary** (a
  :class:`~memory_chains.memory.SummaryCore` over the session's turn log);
* the user's **entities** (:class:`~memory_chains.entities.EntityTracker`, rules only);
* the user's **profile** and **facts** (:class:`~memory_chains.longterm.LongTermMemory`,
  rules only: no model call per turn);
* **recalled turns** of the user's *other* sessions (:class:`PastTurns` over one shared
  :class:`~memory_chains.recall.TurnIndex`: the current session is already in the window).

They meet in one :class:`~memory_chains.context.ContextBuilder` under one token budget, as
the ``memory`` of the RAG chain (:class:`WebMemory`, a
:class:`~memory_chains.context.ContextMemory` that times its work and records an exchange in
every memory only once the answer is complete). The objects are cheap to build: constructors
do no I/O, and the shared pieces (store, index, extractors, embeddings) live in
:class:`~memory_chains.web.ChatService`.

Example:
    >>> import asyncio
    >>> from memory_chains.stores import InMemoryStore
    >>> from memory_chains.testing import HashEmbeddings
    >>> shared = MemoryParts(InMemoryStore(), HashEmbeddings())
    >>> memory = SessionMemory(shared, "alice", "s1")
    >>> _ = asyncio.run(memory.memory.asave_context(
    ...     {"question": "Mon IBAN est FR7630006000011234567890189"}, {"answer": "Noté."}))
    >>> memory.short.context().turns[0].human
    'Mon IBAN est [IBAN]'
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from langchain_core.embeddings import Embeddings
from pydantic import PrivateAttr

from memory_chains.context import (
    BuiltContext,
    ContextBuilder,
    ContextMemory,
    EntitySource,
    RecallSource,
    long_term_sources,
    short_term_sources,
)
from memory_chains.entities import EntityTracker, RuleEntityExtractor
from memory_chains.errors import InvalidInputError, StoreUnavailableError
from memory_chains.longterm import LongTermMemory, RuleLongTermExtractor
from memory_chains.memory import LLMSummarizer, SummaryCore, SummaryData
from memory_chains.protocol import MemoryBlock, block_name, check_budget
from memory_chains.providers import approximate_token_count
from memory_chains.recall import Episode, RecalledTurn, TurnIndex, UserRecall
from memory_chains.sessions import SessionManager
from memory_chains.stores import BaseStore, ResilientStore, Turn
from memory_chains.web._config import WebConfig

__all__ = ["MemoryParts", "MemoryWork", "PastTurns", "SessionMemory", "WebMemory"]

TokenCounter = Callable[[str], int]


class KeepDetails:
    """A summarizer without a model: the folded turns' names, numbers and dates are kept
    as their own sentences by :class:`~memory_chains.memory.SummaryCore` itself."""

    def summarize(self, previous: SummaryData, turns: Sequence[Turn]) -> SummaryData:
        """The previous summary unchanged (the core adds the folded turns' details)."""
        return previous


@dataclass
class MemoryParts:
    """What every conversation shares: the store, the recall index, extractors, counters.

    Args:
        store: where everything persists (a :class:`~memory_chains.stores.ResilientStore`
            to answer statelessly while it is down).
        embeddings: for the facts and the recall index.
        config: memory sizes and budget.
        llm: the chat model (used only by ``summarizer="model"``).
        token_counter: counts the budget's tokens.

    Example:
        >>> from memory_chains.stores import InMemoryStore
        >>> from memory_chains.testing import HashEmbeddings
        >>> MemoryParts(InMemoryStore(), HashEmbeddings()).dropped_writes()
        0
    """

    store: BaseStore
    embeddings: Embeddings
    config: WebConfig = field(default_factory=WebConfig)
    llm: Any = None
    token_counter: TokenCounter = approximate_token_count
    index: TurnIndex = field(init=False)
    sessions: SessionManager = field(init=False)
    entity_extractor: RuleEntityExtractor = field(init=False)
    fact_extractor: RuleLongTermExtractor = field(init=False)

    def __post_init__(self) -> None:
        self.index = TurnIndex(self.embeddings, self.store, token_counter=self.token_counter)
        self.sessions = SessionManager(self.store)
        self.entity_extractor = RuleEntityExtractor(use_spacy=False)
        self.fact_extractor = RuleLongTermExtractor()

    def summarizer(self) -> Any:
        """The summary's summarizer for :attr:`WebConfig.summarizer`."""
        if self.config.summarizer == "model":
            return LLMSummarizer(self.llm)
        return KeepDetails()

    def dropped_writes(self) -> int:
        """Writes the store dropped so far (0 for a store that never drops any)."""
        return self.store.stats().dropped_writes if isinstance(self.store, ResilientStore) else 0

    def available(self) -> bool:
        """False while a resilient store is in an outage."""
        return not isinstance(self.store, ResilientStore) or self.store.available


def _past(
    turns: Sequence[RecalledTurn], session_id: str, limit: int, max_tokens: int, count: TokenCounter
) -> MemoryBlock:
    lines: list[str] = []
    cited: list[str] = []
    used = 0
    for turn in turns:
        if turn.session == session_id or len(cited) >= limit:
            continue
        line = f"({turn.turn_id}) {turn.speaker}: {turn.text}"
        cost = count(line)
        if used + cost > max_tokens:
            continue
        lines.append(line)
        cited.append(turn.turn_id)
        used += cost
    return MemoryBlock("recalled", tuple(lines), cited_ids=tuple(cited), title=_PAST_TITLE)


_PAST_TITLE = "From past conversations"


class PastTurns(UserRecall):
    """The user's turns of their *other* sessions recalled for the question: the
    ``recalled`` block (:class:`~memory_chains.protocol.ConversationMemory`).

    Like :class:`~memory_chains.recall.TurnIndex` itself, it brings the best ``limit``
    turns whatever their score: ranking scores are relative, not a relevance threshold. It
    records nothing (:meth:`SessionMemory.record` feeds the index).

    Example:
        >>> index = TurnIndex()
        >>> index.add("ann", "s1:1:user", "Mon vélo est rouge", speaker="User", session="s1")
        >>> index.add("ann", "s2:1:user", "Mon vélo est bleu", speaker="User", session="s2")
        >>> block = PastTurns(index, "ann", "s2").context_block("vélo ?", 50)
        >>> block.items, block.cited_ids
        (('(s1:1:user) User: Mon vélo est rouge',), ('s1:1:user',))
    """

    def __init__(
        self,
        index: TurnIndex,
        user_id: str,
        session_id: str,
        limit: int = 4,
        token_counter: TokenCounter = approximate_token_count,
    ) -> None:
        super().__init__(index, user_id)
        self.session_id = session_id
        self.limit = limit
        self.token_counter = token_counter

    def _k(self) -> int:
        return 4 * self.limit + 8  # room for the current session's own turns, filtered out

    def context_block(self, question: str, max_tokens: int, name: str | None = None) -> MemoryBlock:
        """The best past turns of other sessions that fit in ``max_tokens``, cited."""
        block_name(self, name)
        if not question.strip() or check_budget(max_tokens) < 1:
            return MemoryBlock("recalled", title=_PAST_TITLE)
        turns = self.index.search(self.user_id, question, k=self._k())
        return _past(turns, self.session_id, self.limit, max_tokens, self.token_counter)

    async def acontext_block(
        self, question: str, max_tokens: int, name: str | None = None
    ) -> MemoryBlock:
        """Async :meth:`context_block` (the query embedding awaited)."""
        block_name(self, name)
        if not question.strip() or check_budget(max_tokens) < 1:
            return MemoryBlock("recalled", title=_PAST_TITLE)
        turns = await self.index.asearch(self.user_id, question, k=self._k())
        return _past(turns, self.session_id, self.limit, max_tokens, self.token_counter)


@dataclass
class MemoryWork:
    """What one request did with memory: seconds spent, and whether it was stored.

    Attributes:
        session_s: opening the session (its metadata read, or written for a new one).
        load_s: building the context (every memory read).
        save_s: recording the exchange in every memory.
        cpu_s: the CPU time of all three (``time.thread_time``: without the waits for
            another thread or process, so comparable on a busy machine).
        stored: the exchange reached the store (False: the store was down, or the answer
            failed).
        degraded: the store was unreachable during the request (the answer had no memory).
        built: the context the answer was given.

    Example:
        >>> MemoryWork(session_s=0.001, load_s=0.002, save_s=0.001).total_ms
        4.0
    """

    session_s: float = 0.0
    load_s: float = 0.0
    save_s: float = 0.0
    cpu_s: float = 0.0
    stored: bool = False
    degraded: bool = False
    built: BuiltContext | None = None

    @property
    def total_ms(self) -> float:
        """All the memory work of the request, in milliseconds."""
        return 1000.0 * (self.session_s + self.load_s + self.save_s)


class _RecordingBuilder(ContextBuilder):
    """A builder that keeps the last context it built (what the answer was given)."""

    last: BuiltContext | None = None

    def build(self, question: str) -> BuiltContext:
        self.last = super().build(question)
        return self.last


class WebMemory(ContextMemory):
    """The chain's memory: the session's :class:`ContextMemory`, timed, recording once.

    Loading is :class:`~memory_chains.context.ContextMemory`'s. Saving writes the exchange
    in the window (PII masked there), the entity and long-term memories and the recall
    index, in that order, and only when the chain calls it: after a complete answer. A
    store outage leaves the answer intact and marks the work not stored.
    """

    session: Any = None
    _work: MemoryWork = PrivateAttr(default_factory=MemoryWork)

    @property
    def work(self) -> MemoryWork:
        """This request's memory work so far."""
        return self._work

    def load_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """Open the session (see :meth:`SessionMemory.open`), then build the context."""
        cpu, started = time.thread_time(), time.perf_counter()
        try:
            self.session.open()
        except StoreUnavailableError:
            self._work.degraded = True
        self._work.session_s += time.perf_counter() - started
        started = time.perf_counter()
        try:
            return super().load_memory_variables(inputs)
        finally:
            self._work.load_s += time.perf_counter() - started
            self._work.cpu_s += time.thread_time() - cpu
            if isinstance(self.builder, _RecordingBuilder):
                self._work.built = self.builder.last

    async def aload_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """The sync load in one worker thread: the reads are short and sequential, one
        thread hop costs less than one per source (``ContextBuilder.abuild``)."""
        return await asyncio.to_thread(self.load_memory_variables, inputs)

    def _exchange(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> tuple[str, str]:
        return str(inputs[self.input_key]), str(outputs[self.output_key])

    def save_context(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        """Record the exchange in every memory (see the class docstring)."""
        human, ai = self._exchange(inputs, outputs)
        cpu, started = time.thread_time(), time.perf_counter()
        try:
            self._work.stored = self.session.record(human, ai)
        finally:
            self._work.save_s += time.perf_counter() - started
            self._work.cpu_s += time.thread_time() - cpu

    async def asave_context(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        """Async :meth:`save_context` (the store calls run in a thread)."""
        await asyncio.to_thread(self.save_context, inputs, outputs)


class SessionMemory:
    """The memories of one ``(user, session)`` and the chain memory over them.

    Args:
        parts: the shared pieces (:class:`MemoryParts`).
        user_id, session_id: the conversation (already validated ids).

    Example:
        >>> from memory_chains.stores import InMemoryStore
        >>> from memory_chains.testing import HashEmbeddings
        >>> memory = SessionMemory(MemoryParts(InMemoryStore(), HashEmbeddings()), "bob", "s1")
        >>> memory.record("Je cherche le Dell XPS 15.", "Il coûte 1599 €.")
        True
        >>> memory.entities.entities()[0].name, memory.short.stats().turns
        ('Dell XPS 15', 1)
    """

    def __init__(self, parts: MemoryParts, user_id: str, session_id: str) -> None:
        config = parts.config
        count = parts.token_counter
        self.parts = parts
        self.user_id = user_id
        self.session_id = session_id
        self.short = SummaryCore(
            summarizer=parts.summarizer(),
            max_turns=config.summarize_after,
            keep_last=config.keep_last,
            background=False,
            store=parts.store,
            user_id=user_id,
            session_id=session_id,
            token_counter=count,
            max_chars=config.max_message_chars * 4,  # answers are longer than questions
            on_overflow="truncate",
        )
        self.entities = EntityTracker(
            parts.entity_extractor, user_id=user_id, store=parts.store, token_counter=count
        )
        self.longterm = LongTermMemory(
            parts.store,
            user_id,
            parts.embeddings,
            extractor=parts.fact_extractor,
            token_counter=count,
        )
        self.recall = PastTurns(parts.index, user_id, session_id, config.recall_turns, count)
        sources = [
            *long_term_sources(self.longterm),
            EntitySource(self.entities),
            *short_term_sources(self.short),
        ]
        if config.recall_turns:
            sources.append(RecallSource(self.recall))
        self.builder = _RecordingBuilder(sources, config.context_tokens, count, topic=True)
        self.memory = WebMemory(builder=self.builder, session=self)

    def open(self) -> None:
        """Register the session with the :class:`~memory_chains.sessions.SessionManager`
        when it is new (so it is listed, expires and is exported); an existing one needs
        nothing: the turn appended after the answer is its activity.

        Raises:
            StoreUnavailableError: the store is down (the answer goes on without memory).
        """
        sessions = self.parts.sessions
        if sessions.get(self.user_id, self.session_id) is not None:
            return
        try:
            sessions.create(self.user_id, session_id=self.session_id)
        except InvalidInputError:
            if sessions.get(self.user_id, self.session_id) is None:
                raise  # not a concurrent creation: a real refusal

    def record(self, human: str, ai: str) -> bool:
        """Write one exchange in every memory; False when the store dropped it.

        The window masks PII before storage; the other memories get the masked text (the
        entity and long-term memories mask again, idempotently).
        """
        dropped = self.parts.dropped_writes()
        try:
            turn = self.short.add_exchange(human, ai)
            if turn.seq == 0 or not self.parts.available():
                return False
            self.entities.observe(turn.human, turn.ai)
            self.longterm.observe(turn.human, turn.ai, session_id=self.session_id, seq=turn.seq)
            if self.parts.config.recall_turns:
                self.parts.index.add_many(self.user_id, self._episodes(turn))
        except StoreUnavailableError:
            return False
        return self.parts.dropped_writes() == dropped

    def _episodes(self, turn: Turn) -> list[Episode]:
        when = datetime.fromtimestamp(turn.created_at or time.time(), UTC)
        base = f"{self.session_id}:{turn.seq}"
        episodes = [Episode(f"{base}:user", turn.human, "User", when, self.session_id)]
        if turn.ai:
            episodes.append(Episode(f"{base}:ai", turn.ai, "Assistant", when, self.session_id))
        return episodes
