"""The per-user episodic index over past turns: :class:`TurnIndex`.

Every turn a user had is indexed once (BM25 term counts of ``"Speaker: text"`` + an e5
``passage:`` vector of the bare text after the turn before it, see :func:`passage_texts`:
the speaker is BM25's and the speaker boost's job) and
persisted in a :class:`~memory_chains.stores.BaseStore` under ``("episodes", user_id, …)``
(see :mod:`memory_chains.recall._persist`); an in-process cache keeps the arrays ready and
is refreshed when the store's state document says another writer (or
:func:`~memory_chains.stores.forget_user`) changed them. Questions are ranked by
:func:`memory_chains.recall._rank.rank_scores`; :meth:`TurnIndex.context` renders the best
turns within a token budget, each line citing its turn id and date.

Example:
    >>> from memory_chains.testing import HashEmbeddings
    >>> index = TurnIndex(HashEmbeddings())
    >>> index.add("alice", "s1:1", "I adopted a puppy named Luna", speaker="Alice", session="s1")
    >>> index.add("alice", "s1:2", "Work has been hectic", speaker="Alice", session="s1")
    >>> [t.turn_id for t in index.search("alice", "What is the puppy called?", k=1)]
    ['s1:1']
    >>> index.context("alice", "puppy", max_tokens=40).turn_ids[0]
    's1:1'
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime

import numpy as np
import numpy.typing as npt
from langchain_core.embeddings import Embeddings

from memory_chains._terms import terms
from memory_chains.errors import InvalidInputError, ModelCallError
from memory_chains.providers import approximate_token_count
from memory_chains.recall._fusion import top_k
from memory_chains.recall._persist import (
    META_KEY,
    decode_turn,
    encode_turn,
    meta_namespace,
    turns_namespace,
)
from memory_chains.recall._rank import dense_question, rank_scores
from memory_chains.recall._state import EpisodeSet
from memory_chains.recall._types import Episode, RecallConfig, RecalledContext, RecalledTurn
from memory_chains.recall._user import UserRecall
from memory_chains.stores import BaseStore, InMemoryStore, validate_id

__all__ = ["TurnIndex", "indexed_text", "passage_texts", "render_context"]

TokenCounter = Callable[[str], int]

# How much of the turn before a turn its vector reads (its last words).
_CONTEXT_WORDS = 64

# How many ranked turns the context builder considers before giving up on the budget.
_CONTEXT_CANDIDATES = 200


def indexed_text(episode: Episode) -> str:
    """The text that BM25 indexes and the context shows for a turn: ``"Speaker: text"``.

    Example:
        >>> indexed_text(Episode("t1", "Hi!", "Caroline"))
        'Caroline: Hi!'
    """
    return f"{episode.speaker}: {episode.text}" if episode.speaker else episode.text


def passage_texts(batch: Sequence[Episode], before: Episode | None = None) -> list[str]:
    r"""What the vector of each turn of ``batch`` embeds: the turn after the one before it.

    A reply rarely names its topic ("Yeah, I play the clarinet!" answers "Do you play
    anything?"); embedding it after the end of the previous turn of the same session (its
    last 64 words) lets the question find it. ``before`` is the turn stored just before the
    batch, if any; a new session starts without context. BM25 still reads the turn alone.

    Example:
        >>> ask = Episode("1", "Do you play an instrument?", "Bob", session="s1")
        >>> passage_texts([Episode("2", "Yes, the clarinet", "Ann", session="s1"),
        ...                Episode("3", "Hello again", "Ann", session="s2")], before=ask)
        ['Do you play an instrument?\nYes, the clarinet', 'Hello again']
    """
    texts = []
    previous = before
    for episode in batch:
        if previous is not None and previous.session == episode.session:
            context = " ".join(previous.text.split()[-_CONTEXT_WORDS:])
            texts.append(f"{context}\n{episode.text}")
        else:
            texts.append(episode.text)
        previous = episode
    return texts


def _header(episode: Episode) -> str:
    if episode.when is not None:
        return f"[{episode.when:%d %B %Y}, session {episode.session}]"
    return f"[session {episode.session}]" if episode.session else "[earlier]"


def render_context(turns: Sequence[tuple[int, Episode]]) -> str:
    """Render ``(position, episode)`` pairs grouped by session, in conversation order.

    Example:
        >>> print(render_context([(4, Episode("b", "Yes", "Ann", None, "2")),
        ...                       (1, Episode("a", "Hi", "Bob", None, "1"))]))
        [session 1]
        (a) Bob: Hi
        [session 2]
        (b) Ann: Yes
    """
    lines: list[str] = []
    current: str | None = None
    for _, episode in sorted(turns, key=lambda pair: pair[0]):
        header = _header(episode)
        if header != current:
            lines.append(header)
            current = header
        lines.append(f"({episode.turn_id}) {indexed_text(episode)}")
    return "\n".join(lines)


def _as_vector(values: Sequence[float]) -> npt.NDArray[np.float32]:
    return np.asarray(values, dtype=np.float32)


class TurnIndex:
    """Hybrid (BM25 + dense) episodic recall over a user's past turns, with citations.

    Args:
        embeddings: any LangChain embeddings (e.g.
            :class:`~memory_chains.providers.E5Embeddings`: ``embed_documents`` for turns,
            ``embed_query`` for questions); ``None`` ranks with BM25 only.
        store: where turns, term counts and vectors are persisted (default: a fresh
            :class:`~memory_chains.stores.InMemoryStore`).
        config: ranking knobs (:class:`RecallConfig`).
        token_counter: counts the tokens of :meth:`context` (default
            :func:`~memory_chains.providers.approximate_token_count`; pass
            ``get_token_counter(model)`` for the exact count of the embedded model).

    Example:
        >>> index = TurnIndex()  # lexical only
        >>> index.add_many("bob", [Episode("1", "We went camping in Oregon", "Bob"),
        ...                        Episode("2", "I bought a guitar", "Bob")])
        2
        >>> index.search("bob", "Where did Bob go camping?", k=1)[0].text
        'We went camping in Oregon'
    """

    def __init__(
        self,
        embeddings: Embeddings | None = None,
        store: BaseStore | None = None,
        *,
        config: RecallConfig | None = None,
        token_counter: TokenCounter | None = None,
    ) -> None:
        self.embeddings = embeddings
        self.store = store if store is not None else InMemoryStore()
        self.config = config or RecallConfig()
        self.token_counter = token_counter or approximate_token_count
        self._cache: dict[str, tuple[str, EpisodeSet]] = {}
        self._lock = threading.RLock()  # writers and cache loads (held across store I/O)
        self._ranking = threading.Lock()  # in-memory arrays: appends vs. ranking, never I/O

    # ------------------------------------------------------------------ loading

    def _episodes(self, user_id: str) -> EpisodeSet:
        """The user's turns, from the cache if the store's state still matches it."""
        meta = self.store.get(meta_namespace(user_id), META_KEY)
        with self._lock:
            if meta is None:
                self._cache.pop(user_id, None)
                return EpisodeSet(self.config)
            generation = str(meta.value.get("generation", ""))
            cached = self._cache.get(user_id)
            if cached is not None and cached[0] == generation:
                return cached[1]
            rows = [
                decode_turn(doc.key, doc.value) for doc in self.store.list(turns_namespace(user_id))
            ]
            episodes = EpisodeSet(self.config)
            for _order, episode, counts, vector in sorted(rows, key=lambda row: row[0]):
                episodes.add(episode, counts, vector)
            self._cache[user_id] = (generation, episodes)
            return episodes

    # ------------------------------------------------------------------ adding

    def _check_batch(self, user_id: str, batch: Sequence[Episode]) -> EpisodeSet:
        validate_id(user_id, "user_id")
        existing = self._episodes(user_id)
        seen: set[str] = set()
        for episode in batch:
            if not isinstance(episode, Episode):
                raise InvalidInputError(f"expected Episode values, got {type(episode).__name__}")
            if not isinstance(episode.text, str) or not episode.text.strip():
                raise InvalidInputError(f"turn {episode.turn_id!r} has no text to index")
            if not isinstance(episode.turn_id, str) or not episode.turn_id:
                raise InvalidInputError("every turn needs a non-empty string turn_id")
            if episode.turn_id in existing or episode.turn_id in seen:
                raise InvalidInputError(
                    f"turn {episode.turn_id!r} is already indexed for {user_id!r}; "
                    "give every turn a unique id such as 'session:seq'"
                )
            seen.add(episode.turn_id)
        return existing

    def _passages(self, existing: EpisodeSet, batch: Sequence[Episode]) -> list[str]:
        """:func:`passage_texts` of ``batch`` after the last turn ``existing`` holds.

        Read without the writers' lock: a batch of the same session added meanwhile by
        another thread is not its context (the vector then reads the turn alone or an
        older neighbour; the ranking still works, a little less well for that turn).
        """
        with self._ranking:
            before = existing.episodes[-1] if len(existing) else None
        return passage_texts(batch, before)

    def _commit(
        self,
        user_id: str,
        batch: Sequence[Episode],
        vectors: Sequence[Sequence[float]] | None,
    ) -> int:
        if vectors is not None and len(vectors) != len(batch):
            raise ModelCallError(
                f"the embeddings returned {len(vectors)} vectors for {len(batch)} texts"
            )
        with self._lock:  # one writer at a time: the store's order is the index's order
            # checked again under the lock: a concurrent add of the same id, or a forget()
            # while this batch was embedded, is seen here and not undone in the cache
            existing = self._check_batch(user_id, batch)
            start = len(existing)
            written = []
            for offset, episode in enumerate(batch):
                counts = dict(Counter(terms(indexed_text(episode))))
                vector = _as_vector(vectors[offset]) if vectors is not None else None
                self.store.put(
                    turns_namespace(user_id),
                    episode.turn_id,
                    encode_turn(episode, start + offset, counts, vector),
                )
                written.append((episode, counts, vector))
            generation = uuid.uuid4().hex
            self.store.put(
                meta_namespace(user_id),
                META_KEY,
                {"count": start + len(written), "generation": generation},
            )
            with self._ranking:  # searches never see a half-added batch
                for episode, counts, vector in written:
                    existing.add(episode, counts, vector)
                self._cache[user_id] = (generation, existing)
        return len(batch)

    def add_many(self, user_id: str, episodes: Iterable[Episode]) -> int:
        """Index several turns at once (one embeddings call); returns how many.

        Raises:
            InvalidInputError: bad user id, empty text, or a turn id already indexed.
            ModelCallError: the embeddings failed (nothing is stored then).
            StoreError: the store failed.
        """
        batch = list(episodes)
        existing = self._check_batch(user_id, batch)  # fail before paying for the vectors
        if not batch:
            return 0
        vectors = None
        if self.embeddings is not None:
            vectors = self.embeddings.embed_documents(self._passages(existing, batch))
        return self._commit(user_id, batch, vectors)

    async def aadd_many(self, user_id: str, episodes: Iterable[Episode]) -> int:
        """Async :meth:`add_many` (native async embeddings, store I/O in a thread)."""
        batch = list(episodes)
        existing = await asyncio.to_thread(self._check_batch, user_id, batch)
        if not batch:
            return 0
        vectors = None
        if self.embeddings is not None:
            vectors = await self.embeddings.aembed_documents(self._passages(existing, batch))
        return await asyncio.to_thread(self._commit, user_id, batch, vectors)

    def add(
        self,
        user_id: str,
        turn_id: str,
        text: str,
        *,
        speaker: str = "",
        when: datetime | None = None,
        session: str = "",
    ) -> None:
        """Index one turn (see :meth:`add_many`)."""
        self.add_many(user_id, [Episode(turn_id, text, speaker, when, session)])

    async def aadd(
        self,
        user_id: str,
        turn_id: str,
        text: str,
        *,
        speaker: str = "",
        when: datetime | None = None,
        session: str = "",
    ) -> None:
        """Async :meth:`add`."""
        await self.aadd_many(user_id, [Episode(turn_id, text, speaker, when, session)])

    # ------------------------------------------------------------------ searching

    def _scores(
        self, episodes: EpisodeSet, question: str, vector: Sequence[float] | None
    ) -> npt.NDArray[np.float64]:
        query_vector = _as_vector(vector) if vector is not None else None
        with self._ranking:
            return rank_scores(episodes, question, query_vector, self.config)

    @staticmethod
    def _check_question(user_id: str, question: str) -> None:
        validate_id(user_id, "user_id")
        if not isinstance(question, str) or not question.strip():
            raise InvalidInputError("the question must be a non-empty string")

    @staticmethod
    def _turns(episodes: EpisodeSet, scores: npt.NDArray[np.float64], k: int) -> list[RecalledTurn]:
        if k < 1:
            raise InvalidInputError(f"k must be at least 1, got {k}")
        out = []
        for index in top_k(scores, k):
            e = episodes.episodes[index]
            out.append(
                RecalledTurn(e.turn_id, e.text, e.speaker, e.when, e.session, float(scores[index]))
            )
        return out

    def _needs_vector(self, episodes: EpisodeSet) -> bool:
        if self.embeddings is None:
            return False
        with self._ranking:  # matrix() caches: not while a batch is being appended
            return len(episodes) > 0 and episodes.matrix() is not None

    def _ranked(self, user_id: str, question: str) -> tuple[EpisodeSet, npt.NDArray[np.float64]]:
        """The user's turns and their scores for ``question``."""
        self._check_question(user_id, question)
        episodes = self._episodes(user_id)
        vector = None
        if self._needs_vector(episodes):
            assert self.embeddings is not None
            vector = self.embeddings.embed_query(dense_question(question, episodes.speakers()))
        return episodes, self._scores(episodes, question, vector)

    async def _aranked(
        self, user_id: str, question: str
    ) -> tuple[EpisodeSet, npt.NDArray[np.float64]]:
        """Async :meth:`_ranked` (native async embeddings, store I/O in a thread)."""
        self._check_question(user_id, question)
        episodes = await asyncio.to_thread(self._episodes, user_id)
        vector = None
        if self._needs_vector(episodes):
            assert self.embeddings is not None
            vector = await self.embeddings.aembed_query(
                dense_question(question, episodes.speakers())
            )
        return episodes, self._scores(episodes, question, vector)

    def search(self, user_id: str, question: str, k: int = 10) -> list[RecalledTurn]:
        """The ``k`` past turns most likely to answer ``question``, best first.

        Raises:
            InvalidInputError: bad user id, empty question or ``k < 1``.
            ModelCallError: the embeddings failed.
            StoreError: the store failed.
        """
        return self._turns(*self._ranked(user_id, question), k)

    async def asearch(self, user_id: str, question: str, k: int = 10) -> list[RecalledTurn]:
        """Async :meth:`search`."""
        return self._turns(*await self._aranked(user_id, question), k)

    def _context(
        self, episodes: EpisodeSet, scores: npt.NDArray[np.float64], max_tokens: int
    ) -> RecalledContext:
        if max_tokens < 1:
            raise InvalidInputError(f"max_tokens must be at least 1, got {max_tokens}")
        chosen: list[tuple[int, Episode]] = []
        headers: set[str] = set()
        used = 0
        for index in top_k(scores, _CONTEXT_CANDIDATES):
            episode = episodes.episodes[index]
            header = _header(episode)
            cost = self.token_counter(f"({episode.turn_id}) {indexed_text(episode)}")
            cost += 0 if header in headers else self.token_counter(header)
            if used + cost > max_tokens:
                continue
            chosen.append((index, episode))
            headers.add(header)
            used += cost
        text = render_context(chosen)
        tokens = self.token_counter(text) if text else 0
        while chosen and tokens > max_tokens:  # per-line counts can undercount the whole
            chosen.pop()
            text = render_context(chosen)
            tokens = self.token_counter(text) if text else 0
        return RecalledContext(text, tuple(e.turn_id for _, e in chosen), tokens)

    def context(self, user_id: str, question: str, max_tokens: int = 1500) -> RecalledContext:
        """The best turns for ``question`` that fit in ``max_tokens``, rendered with citations.

        Turns are taken in relevance order while they fit; the text groups them by session
        in conversation order under a ``[date, session]`` header, each line starting with
        its turn id in parentheses.

        Raises:
            InvalidInputError: bad user id, empty question or ``max_tokens < 1``.
            ModelCallError: the embeddings failed.
            StoreError: the store failed.
        """
        return self._context(*self._ranked(user_id, question), max_tokens)

    async def acontext(
        self, user_id: str, question: str, max_tokens: int = 1500
    ) -> RecalledContext:
        """Async :meth:`context`."""
        return self._context(*await self._aranked(user_id, question), max_tokens)

    def for_user(self, user_id: str) -> UserRecall:
        """One user's recall as a memory (:class:`~memory_chains.protocol.ConversationMemory`)."""
        return UserRecall(self, validate_id(user_id, "user_id"))

    def search_and_context(
        self, user_id: str, question: str, k: int = 10, max_tokens: int = 1500
    ) -> tuple[list[RecalledTurn], RecalledContext]:
        """:meth:`search` and :meth:`context` with one ranking (one query embedding).

        Example:
            >>> index = TurnIndex()
            >>> index.add("ann", "1", "I love pottery", speaker="Ann")
            >>> turns, ctx = index.search_and_context("ann", "pottery?", k=1, max_tokens=50)
            >>> turns[0].turn_id, ctx.turn_ids
            ('1', ('1',))
        """
        episodes, scores = self._ranked(user_id, question)
        return self._turns(episodes, scores, k), self._context(episodes, scores, max_tokens)

    def forget(self, user_id: str) -> int:
        """Delete the user's indexed turns from the store and the cache; returns how many.

        Example:
            >>> index = TurnIndex()
            >>> index.add("ann", "1", "hello")
            >>> index.forget("ann"), index.search("ann", "hello")
            (1, [])
        """
        validate_id(user_id, "user_id")
        with self._lock:
            docs = self.store.list(turns_namespace(user_id))
            for doc in docs:
                self.store.delete(doc.namespace, doc.key)
            self.store.delete(meta_namespace(user_id), META_KEY)
            self._cache.pop(user_id, None)
        return len(docs)

    def forget_session(self, user_id: str, session: str) -> int:
        """Delete the user's turns of one session; returns how many.

        The other turns keep their relative order (renumbered without gaps), so new turns
        still come after them.

        Example:
            >>> index = TurnIndex()
            >>> index.add("ann", "a", "hello", session="s1")
            >>> index.add("ann", "b", "hello again", session="s2")
            >>> index.forget_session("ann", "s1"), [t.turn_id for t in index.search("ann", "hello")]
            (1, ['b'])
        """
        validate_id(user_id, "user_id")
        with self._lock:
            docs = sorted(self.store.list(turns_namespace(user_id)), key=lambda d: d.value["order"])
            gone = [doc for doc in docs if doc.value.get("session") == session]
            if not gone:
                return 0
            for doc in gone:
                self.store.delete(doc.namespace, doc.key)
            kept = [doc for doc in docs if doc.value.get("session") != session]
            for order, doc in enumerate(kept):
                if doc.value["order"] != order:
                    self.store.put(doc.namespace, doc.key, {**doc.value, "order": order})
            meta = {"count": len(kept), "generation": uuid.uuid4().hex}
            self.store.put(meta_namespace(user_id), META_KEY, meta)
            self._cache.pop(user_id, None)
        return len(gone)
