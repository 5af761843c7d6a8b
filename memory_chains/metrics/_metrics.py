"""Measuring a conversation: :class:`ConversationMetrics` → :class:`ConversationReport`.

Everything but the embeddings call is pure and shared by the sync and async flavours. A
conversation is a sequence of exchanges: :class:`~memory_chains.stores.Turn` values (as a
store returns them), ``(human, ai)`` pairs, or ``(human, ai, memory_context)`` triples.
The *memory context* of a turn is the memory text the prompt of that turn was given; for
a stored :class:`~memory_chains.stores.Turn` it is read from ``metadata["memory_context"]``
(:data:`MEMORY_CONTEXT_KEY`) when the application recorded it there.

Example:
    >>> from memory_chains.testing import word_counter
    >>> metrics = ConversationMetrics(coherence=False, token_counter=word_counter)
    >>> report = metrics.measure([
    ...     ("Je cherche un Dell XPS 15", "Il coûte 1 599 €."),
    ...     ("Et sa garantie ?", "La garantie du Dell XPS 15 est de 2 ans.",
    ...      "Human: Je cherche un Dell XPS 15"),
    ... ])
    >>> report.turns, report.user_tokens_mean, report.memory_usage
    (2, 5.0, 0.75)
"""

from __future__ import annotations

import asyncio
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memory_chains.errors import InvalidInputError, MalformedOutputError, ModelCallError
from memory_chains.metrics._clarify import is_clarification_request
from memory_chains.metrics._report import ConversationReport
from memory_chains.metrics._usage import memory_usage
from memory_chains.stores import BaseStore, Turn, open_store, validate_id

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

__all__ = ["MEMORY_CONTEXT_KEY", "ConversationMetrics", "TurnLike"]

#: Turn metadata key holding the memory context the prompt of that turn was given.
MEMORY_CONTEXT_KEY = "memory_context"

TurnLike = Turn | tuple[str, str] | tuple[str, str, str | None]


@dataclass(frozen=True)
class _Exchange:
    human: str
    ai: str
    context: str | None


class ConversationMetrics:
    """Computes a :class:`ConversationReport` over a list of turns or a stored session.

    Args:
        embeddings: LangChain ``Embeddings`` used for topic coherence; default: the
            project's embeddings (:class:`~memory_chains.providers.E5Embeddings` offline),
            created on first use.
        coherence: ``False`` skips topic coherence (no embeddings call at all).
        token_counter: ``str -> int`` for the token means; default: the project's offline
            approximation (:func:`~memory_chains.providers.get_token_counter`).
        history_window: for turns without a recorded memory context, assume the prompt was
            given the ``N`` previous exchanges verbatim (what ``WindowMemory(k=N)``
            injects); ``None`` (default) leaves such turns out of the memory measures.

    Example:
        >>> from memory_chains.testing import HashEmbeddings
        >>> m = ConversationMetrics(embeddings=HashEmbeddings(), history_window=1)
        >>> r = m.measure([("Horaires du Pilates ?", "Le mardi à 18 h."),
        ...                ("Pouvez-vous répéter ?", "Pouvez-vous préciser le jour ?")])
        >>> r.clarification_requests, r.clarification_turns, r.turns_with_memory
        (1, (2,), 1)
    """

    def __init__(
        self,
        *,
        embeddings: Embeddings | None = None,
        coherence: bool = True,
        token_counter: Callable[[str], int] | None = None,
        history_window: int | None = None,
    ) -> None:
        if token_counter is not None and not callable(token_counter):
            raise InvalidInputError("token_counter must be a callable str -> int")
        if history_window is not None and (
            isinstance(history_window, bool)
            or not isinstance(history_window, int)
            or history_window < 0
        ):
            raise InvalidInputError(
                f"history_window must be None or a non-negative integer, got {history_window!r}"
            )
        self._embeddings = embeddings
        self.coherence = bool(coherence)
        self._token_counter = token_counter
        self.history_window = history_window

    # -- collaborators, resolved on first use -------------------------------------------

    @property
    def embeddings(self) -> Embeddings:
        """The embeddings used for topic coherence (the default is created on first use)."""
        if self._embeddings is None:
            from memory_chains.providers import get_embeddings

            self._embeddings = get_embeddings()
        return self._embeddings

    @property
    def token_counter(self) -> Callable[[str], int]:
        """The token counter used for the token means."""
        if self._token_counter is None:
            from memory_chains.providers import get_token_counter

            self._token_counter = get_token_counter(None)
        return self._token_counter

    # -- public API ----------------------------------------------------------------------

    def measure(
        self, turns: Sequence[TurnLike], contexts: Sequence[str | None] | None = None
    ) -> ConversationReport:
        """Measure a conversation given as turns.

        Args:
            turns: ``Turn`` values, ``(human, ai)`` pairs or ``(human, ai, context)``
                triples, oldest first.
            contexts: optional memory context of each turn (same length as ``turns``);
                overrides what the turns carry.

        Raises:
            InvalidInputError: no turns, a malformed turn, or ``contexts`` of another length.
            ModelCallError: the embeddings call failed (pass ``coherence=False`` to skip it).

        Example:
            >>> from memory_chains.testing import word_counter
            >>> ConversationMetrics(coherence=False, token_counter=word_counter).measure(
            ...     [("a b", "c d e")]).assistant_tokens_mean
            3.0
        """
        exchanges = self._prepare(turns, contexts)
        vectors = self._embed(exchanges) if self.coherence else None
        return self._report(exchanges, vectors)

    async def ameasure(
        self, turns: Sequence[TurnLike], contexts: Sequence[str | None] | None = None
    ) -> ConversationReport:
        """Async :meth:`measure` (uses the embeddings' ``aembed_documents``).

        Example:
            >>> import asyncio
            >>> m = ConversationMetrics(coherence=False)
            >>> asyncio.run(m.ameasure([("Bonjour", "Bonjour !")])).turns
            1
        """
        exchanges = self._prepare(turns, contexts)
        vectors = None
        if self.coherence:
            messages = _messages(exchanges)
            try:
                raw = await self.embeddings.aembed_documents(messages)
            except Exception as exc:
                raise _embedding_error(exc) from exc
            vectors = _check_vectors(raw, len(messages))
        return self._report(exchanges, vectors)

    def measure_session(
        self, store: BaseStore | str, user_id: str, session_id: str
    ) -> ConversationReport:
        """Measure every turn a store holds for one user's session.

        Args:
            store: a :class:`~memory_chains.stores.BaseStore` or a store URL.
            user_id, session_id: the session to measure.

        Raises:
            InvalidInputError: a bad id, or the session has no turns (the message lists the
                user's sessions).
            StoreError: the store failed.

        Example:
            >>> from memory_chains.stores import InMemoryStore
            >>> s = InMemoryStore()
            >>> _ = s.append_turn("alice", "s1", "Bonjour", "Que voulez-vous dire ?")
            >>> ConversationMetrics(coherence=False).measure_session(s, "alice", "s1")\\
            ...     .clarification_requests
            1
        """
        return self.measure(_session_turns(store, user_id, session_id))

    async def ameasure_session(
        self, store: BaseStore | str, user_id: str, session_id: str
    ) -> ConversationReport:
        """Async :meth:`measure_session` (the store is read in a worker thread).

        Example:
            >>> import asyncio
            >>> from memory_chains.stores import InMemoryStore
            >>> s = InMemoryStore()
            >>> _ = s.append_turn("bob", "s1", "Salut", "Bonjour Bob.")
            >>> m = ConversationMetrics(coherence=False)
            >>> asyncio.run(m.ameasure_session(s, "bob", "s1")).turns
            1
        """
        turns = await asyncio.to_thread(_session_turns, store, user_id, session_id)
        return await self.ameasure(turns)

    # -- shared logic --------------------------------------------------------------------

    def _prepare(
        self, turns: Sequence[TurnLike], contexts: Sequence[str | None] | None
    ) -> list[_Exchange]:
        if isinstance(turns, (str, bytes)) or not isinstance(turns, Sequence):
            raise InvalidInputError(
                "turns must be a list of Turn values or (human, ai[, context]) tuples"
            )
        if not turns:
            raise InvalidInputError("there are no turns to measure: pass at least one exchange")
        if contexts is not None and len(contexts) != len(turns):
            raise InvalidInputError(
                f"contexts has {len(contexts)} items for {len(turns)} turns: give one "
                "context (or None) per turn"
            )
        exchanges = [_exchange(t, i) for i, t in enumerate(turns, start=1)]
        if contexts is not None:
            for i, ctx in enumerate(contexts):
                if ctx is not None and not isinstance(ctx, str):
                    raise InvalidInputError(
                        f"contexts[{i}] must be a string or None, got {type(ctx).__name__}"
                    )
            exchanges = [
                _Exchange(e.human, e.ai, c) for e, c in zip(exchanges, contexts, strict=True)
            ]
        if self.history_window:
            exchanges = _assume_window(exchanges, self.history_window)
        return exchanges

    def _embed(self, exchanges: list[_Exchange]) -> list[list[float]]:
        messages = _messages(exchanges)
        try:
            raw = self.embeddings.embed_documents(messages)
        except Exception as exc:  # any embeddings backend: mapped, never swallowed
            raise _embedding_error(exc) from exc
        return _check_vectors(raw, len(messages))

    def _report(
        self, exchanges: list[_Exchange], vectors: list[list[float]] | None
    ) -> ConversationReport:
        count = self.token_counter
        n = len(exchanges)
        clarifications = tuple(
            i for i, e in enumerate(exchanges, start=1) if is_clarification_request(e.ai)
        )
        coherence = min_coherence = None
        if vectors is not None and len(vectors) >= 2:
            sims = [_cosine(a, b) for a, b in itertools.pairwise(vectors)]
            coherence, min_coherence = sum(sims) / len(sims), min(sims)
        used = offered = with_memory = answers_used = 0
        for e in exchanges:
            if not e.context:
                continue
            u, o = memory_usage(e.context, e.human, e.ai)
            if o:
                with_memory += 1
                used, offered = used + u, offered + o
                answers_used += u > 0
        return ConversationReport(
            turns=n,
            user_chars_mean=sum(len(e.human) for e in exchanges) / n,
            assistant_chars_mean=sum(len(e.ai) for e in exchanges) / n,
            user_tokens_mean=sum(count(e.human) if e.human else 0 for e in exchanges) / n,
            assistant_tokens_mean=sum(count(e.ai) if e.ai else 0 for e in exchanges) / n,
            clarification_requests=len(clarifications),
            clarification_turns=clarifications,
            topic_coherence=coherence,
            min_coherence=min_coherence,
            turns_with_memory=with_memory,
            memory_usage=used / offered if offered else None,
            answers_using_memory=answers_used / with_memory if with_memory else None,
        )


def _exchange(turn: object, position: int) -> _Exchange:
    if isinstance(turn, Turn):
        ctx = turn.metadata.get(MEMORY_CONTEXT_KEY) if turn.metadata else None
        return _Exchange(turn.human, turn.ai, ctx if isinstance(ctx, str) else None)
    if isinstance(turn, tuple) and len(turn) in (2, 3):
        human, ai = turn[0], turn[1]
        ctx = turn[2] if len(turn) == 3 else None
        if isinstance(human, str) and isinstance(ai, str) and (ctx is None or isinstance(ctx, str)):
            return _Exchange(human, ai, ctx)
    raise InvalidInputError(
        f"turn {position} must be a Turn or a (human, ai[, context]) tuple of strings, "
        f"got {turn!r:.80}"
    )


def _assume_window(exchanges: list[_Exchange], k: int) -> list[_Exchange]:
    out = []
    for i, e in enumerate(exchanges):
        if e.context is None:
            previous = exchanges[max(0, i - k) : i]
            ctx = "\n".join(f"Human: {p.human}\nAI: {p.ai}" for p in previous)
            e = _Exchange(e.human, e.ai, ctx)
        out.append(e)
    return out


def _messages(exchanges: list[_Exchange]) -> list[str]:
    # An empty message (a failed answer stored as "") has no topic: it is not embedded,
    # and coherence compares the messages on either side of it.
    return [m for e in exchanges for m in (e.human, e.ai) if m.strip()]


def _check_vectors(raw: Any, expected: int) -> list[list[float]]:
    if not isinstance(raw, list) or len(raw) != expected:
        got = len(raw) if isinstance(raw, list) else type(raw).__name__
        raise MalformedOutputError(
            f"the embeddings returned {got} vectors for {expected} messages: check the "
            "embeddings object passed to ConversationMetrics"
        )
    vectors = [list(map(float, v)) for v in raw]
    if len({len(v) for v in vectors}) > 1:
        raise MalformedOutputError(
            "the embeddings returned vectors of different sizes: check the embeddings "
            "object passed to ConversationMetrics"
        )
    return vectors


def _embedding_error(exc: Exception) -> ModelCallError:
    return ModelCallError(
        f"embedding the messages for topic coherence failed ({exc}); pass coherence=False "
        "(or --no-coherence) to measure without embeddings"
    )


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def _session_turns(store: BaseStore | str, user_id: str, session_id: str) -> list[Turn]:
    validate_id(user_id, "user_id")
    validate_id(session_id, "session_id")
    if isinstance(store, str):
        opened = open_store(store)
        try:
            return _session_turns(opened, user_id, session_id)
        finally:
            opened.close()
    if not isinstance(store, BaseStore):
        raise InvalidInputError(
            f"store must be a BaseStore or a store URL, got {type(store).__name__}"
        )
    turns = store.turns_after(user_id, session_id)
    if not turns:
        sessions = store.list_sessions(user_id)
        known = ", ".join(sessions[:20]) if sessions else "none"
        raise InvalidInputError(
            f"user {user_id!r} has no turns in session {session_id!r} of this store "
            f"(sessions of this user: {known}); check the store URL, user and session"
        )
    return turns
