"""The short-term memories' logic, free of LangChain classic: :class:`ShortTermMemory` and
its policies :class:`BufferCore`, :class:`WindowCore` and :class:`TokenBudgetCore`.

A memory owns one session's turn log in a :class:`~memory_chains.stores.BaseStore` and
decides what the next prompt sees (:class:`MemoryContext`). Every message goes through the
same gate before storage: normalisation (see :mod:`memory_chains.memory._text`), then PII
masking. Loading reads only what the policy needs (the last k turns, the turns after the
summary…), never the whole history, so a turn costs the same at turn 10 and turn 10,000 —
except for :class:`BufferCore`, whose job is to return everything.

Example:
    >>> mem = WindowCore(k=1)
    >>> _ = mem.add_exchange("Mon mail est jo@ex.fr", "Noté.")
    >>> _ = mem.add_exchange("Et mon IBAN ?", "Je ne le connais pas.")
    >>> [t.human for t in mem.context().turns]
    ['Et mon IBAN ?']
    >>> mem.stats().turns
    2
"""

from __future__ import annotations

import asyncio
import functools
from abc import abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from memory_chains.errors import InvalidInputError
from memory_chains.memory._text import (
    DEFAULT_MAX_CHARS,
    Overflow,
    TokenCounter,
    default_token_counter,
    normalize_message,
    render_turns,
    word_count,
)
from memory_chains.privacy import PIIOption, resolve_masker
from memory_chains.protocol import MemoryBase, MemoryBlock, block_name, check_budget
from memory_chains.stores import BaseStore, InMemoryStore, Turn, open_store, validate_id

__all__ = [
    "BufferCore",
    "MemoryContext",
    "MemoryStats",
    "PIIOption",
    "ShortTermMemory",
    "TokenBudgetCore",
    "WindowCore",
]


@dataclass(frozen=True)
class MemoryContext:
    """What a memory gives the next prompt: an optional summary, then verbatim turns.

    Example:
        >>> ctx = MemoryContext("Alice wants a laptop.", (Turn(5, "And the price?", "999 €"),))
        >>> print(ctx.render())
        Summary of the earlier conversation: Alice wants a laptop.
        Human: And the price?
        AI: 999 €
    """

    summary: str = ""
    turns: tuple[Turn, ...] = ()

    def render(
        self,
        human_prefix: str = "Human",
        ai_prefix: str = "AI",
        summary_prefix: str = "Summary of the earlier conversation",
    ) -> str:
        """The context as one string, summary first."""
        parts = []
        if self.summary:
            parts.append(f"{summary_prefix}: {self.summary}")
        if self.turns:
            parts.append(render_turns(self.turns, human_prefix, ai_prefix))
        return "\n".join(parts)


@dataclass(frozen=True)
class MemoryStats:
    """Counters of a memory (the seed's ``memory_counter``, extended).

    Attributes:
        turns: exchanges in the session's log (all of them, summarised or not).
        context_turns: exchanges the next prompt gets verbatim.
        words: words the memory adds to the next prompt (summary included).
        tokens: tokens the memory adds to the next prompt, by the memory's counter.
        compactions: summaries written for this session so far (persisted).
        compaction_failures: failed compactions in this process (nothing was lost).
        summary_tokens: tokens of the running summary alone.

    Example:
        >>> from memory_chains.testing import word_counter
        >>> mem = WindowCore(k=1, token_counter=word_counter)
        >>> _ = mem.add_exchange("un deux", "trois")
        >>> s = mem.stats()
        >>> s.turns, s.words, s.tokens
        (1, 5, 5)
    """

    turns: int
    context_turns: int
    words: int
    tokens: int
    compactions: int = 0
    compaction_failures: int = 0
    summary_tokens: int = 0


class ShortTermMemory(MemoryBase):
    """Base of the short-term memories: one session's turn log and a loading policy.

    Args:
        store: a :class:`~memory_chains.stores.BaseStore`, a store URL
            (``"sqlite:///memory.sqlite3"``), or ``None`` for a fresh in-memory store.
        user_id: owner of the session (1-64 of ``A-Z a-z 0-9 _ - . : @``).
        session_id: the conversation (same charset).
        pii: ``True`` (default) masks e-mails, IBANs, card numbers and phone numbers
            with :class:`~memory_chains.privacy.PIIMasker` before storage; a masker or any
            ``str -> str`` callable to customise; ``False``/``None`` stores text as given.
        token_counter: ``str -> int``; default: the project's offline counter
            (``memory_chains.providers.get_token_counter()``).
        max_chars: longest message accepted (after normalisation).
        on_overflow: ``"error"`` (default) refuses longer messages, ``"truncate"`` cuts them.
        human_prefix, ai_prefix: labels used when the context is rendered as a string.

    Input rules: ``None`` and non-strings raise
    :class:`~memory_chains.errors.InvalidInputError`; text is NFC-normalised, newlines
    unified, control characters removed and whitespace stripped; an empty question is
    refused, an empty answer stored as ``""``. Both messages are validated before either is
    written, and an exchange is stored atomically.

    Example:
        >>> mem = BufferCore(user_id="alice")
        >>> _ = mem.add_exchange("Carte 4111 1111 1111 1111", "Merci.")
        >>> mem.context().turns[0].human
        'Carte [CARD]'
    """

    def __init__(
        self,
        store: BaseStore | str | None = None,
        *,
        user_id: str = "default",
        session_id: str = "default",
        pii: PIIOption = True,
        token_counter: TokenCounter | None = None,
        max_chars: int = DEFAULT_MAX_CHARS,
        on_overflow: Overflow = "error",
        human_prefix: str = "Human",
        ai_prefix: str = "AI",
    ) -> None:
        self.user_id = validate_id(user_id, "user_id")
        self.session_id = validate_id(session_id, "session_id")
        if store is None:
            store = InMemoryStore()
        elif isinstance(store, str):
            store = open_store(store, setup=False)
        if not isinstance(store, BaseStore):
            raise InvalidInputError(
                f"store must be a BaseStore or a store URL, got {type(store).__name__}"
            )
        self.store: BaseStore = store
        self.masker: Callable[[str], str] | None = resolve_masker(pii)
        if token_counter is not None and not callable(token_counter):
            raise InvalidInputError("token_counter must be a callable str -> int")
        self._token_counter = token_counter
        if isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < 1:
            raise InvalidInputError(f"max_chars must be a positive integer, got {max_chars!r}")
        if on_overflow not in ("error", "truncate"):
            raise InvalidInputError(
                f"on_overflow must be 'error' or 'truncate', got {on_overflow!r}"
            )
        self.max_chars = max_chars
        self.on_overflow: Overflow = on_overflow
        self.human_prefix = human_prefix
        self.ai_prefix = ai_prefix

    # -- tokens --------------------------------------------------------------------------

    @property
    def token_counter(self) -> TokenCounter:
        """The counter used for budgets and statistics (resolved on first use)."""
        if self._token_counter is None:
            self._token_counter = default_token_counter()
        return self._token_counter

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` by :attr:`token_counter` (0 for an empty text)."""
        return int(self.token_counter(text)) if text else 0

    # -- writing -------------------------------------------------------------------------

    def prepare(self, human: object, ai: object) -> tuple[str, str]:
        """Normalise and mask an exchange exactly as :meth:`add_exchange` would store it."""
        h = normalize_message(
            human, "human message", max_chars=self.max_chars, on_overflow=self.on_overflow
        )
        a = normalize_message(
            ai,
            "ai message",
            allow_empty=True,
            max_chars=self.max_chars,
            on_overflow=self.on_overflow,
        )
        if self.masker is not None:
            h, a = self.masker(h), self.masker(a)
        return h, a

    def add_exchange(
        self, human: object, ai: object, metadata: Mapping[str, Any] | None = None
    ) -> Turn:
        """Validate, normalise, mask and append one exchange; return the stored turn.

        Raises:
            InvalidInputError: see the input rules above; nothing is written.
            StoreError: the store failed; nothing is written.
        """
        h, a = self.prepare(human, ai)
        turn = self.store.append_turn(self.user_id, self.session_id, h, a, metadata)
        self._after_append(turn)
        return turn

    async def aadd_exchange(
        self, human: object, ai: object, metadata: Mapping[str, Any] | None = None
    ) -> Turn:
        """Async :meth:`add_exchange` (the store call runs in a thread)."""
        return await asyncio.to_thread(self.add_exchange, human, ai, metadata)

    def _after_append(self, turn: Turn) -> None:
        """Hook for policies that react to new turns (summary compaction)."""

    def clear(self) -> None:
        """Forget this session: its turns and its summary."""
        self.store.delete_session(self.user_id, self.session_id)

    async def aclear(self) -> None:
        """Async :meth:`clear`."""
        await asyncio.to_thread(self.clear)

    # -- reading -------------------------------------------------------------------------

    @abstractmethod
    def context(self) -> MemoryContext:
        """What the next prompt should see."""

    async def acontext(self) -> MemoryContext:
        """Async :meth:`context`."""
        return await asyncio.to_thread(self.context)

    # -- the memory protocol (memory_chains.protocol) -------------------------------------

    block_names = ("summary", "recent")

    def record(self, human: str, ai: str) -> None:
        """:meth:`add_exchange` (the protocol's name for it)."""
        self.add_exchange(human, ai)

    async def arecord(self, human: str, ai: str) -> None:
        """Async :meth:`record`."""
        await self.aadd_exchange(human, ai)

    def context_block(self, question: str, max_tokens: int, name: str | None = None) -> MemoryBlock:
        """The running summary (``summary``, empty without one) or the verbatim recent
        turns (``recent``, oldest first) of :meth:`context`; the question is not used.

        Example:
            >>> mem = WindowCore(k=2)
            >>> _ = mem.add_exchange("Bonjour", "Bonjour !")
            >>> mem.context_block("Ça va ?", 100, "recent").items
            ('Human: Bonjour\\nAI: Bonjour !',)
        """
        check_budget(max_tokens)
        chosen = block_name(self, name)
        ctx = self.context()
        if chosen == "summary":
            lines = tuple(line for line in ctx.summary.strip().splitlines() if line.strip())
            return MemoryBlock("summary", lines, title="Summary of the earlier conversation")
        turns = tuple((t.human, t.ai) for t in ctx.turns)
        items = tuple(f"{self.human_prefix}: {h}\n{self.ai_prefix}: {a}" for h, a in turns)
        return MemoryBlock("recent", items, turns=turns, title="Recent conversation")

    def render(self) -> str:
        """:meth:`context` as one string (``Human: …`` / ``AI: …`` lines, summary first)."""
        return self.context().render(self.human_prefix, self.ai_prefix)

    def stats(self) -> MemoryStats:
        """Counters: turns in the log, and words/tokens the next prompt gets."""
        ctx = self.context()
        text = ctx.render(self.human_prefix, self.ai_prefix)
        return MemoryStats(
            turns=self.store.count_turns(self.user_id, self.session_id),
            context_turns=len(ctx.turns),
            words=word_count(text),
            tokens=self.count_tokens(text),
            summary_tokens=self.count_tokens(ctx.summary),
        )


class BufferCore(ShortTermMemory):
    """The whole history, verbatim (reads the full session: use it for short sessions).

    Example:
        >>> mem = BufferCore()
        >>> _ = mem.add_exchange("q1", "a1"); _ = mem.add_exchange("q2", "a2")
        >>> len(mem.context().turns)
        2
    """

    def context(self) -> MemoryContext:
        return MemoryContext("", tuple(self.store.turns_after(self.user_id, self.session_id, 0)))


class WindowCore(ShortTermMemory):
    """The last ``k`` exchanges verbatim; ``k = 0`` keeps none (every turn is still logged).

    Args:
        k: exchanges to keep (0 or more).
        **kwargs: see :class:`ShortTermMemory`.

    Example:
        >>> mem = WindowCore(k=0)
        >>> _ = mem.add_exchange("q", "a")
        >>> mem.context().turns, mem.stats().turns
        ((), 1)
    """

    def __init__(self, k: int = 5, **kwargs: Any) -> None:
        # bounded like every count a store reads (2**31): a larger one overflows drivers
        if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= 2**31:
            raise InvalidInputError(f"k must be an integer in 0 … 2**31, got {k!r:.40}")
        super().__init__(**kwargs)
        self.k = k

    def context(self) -> MemoryContext:
        # last_turns(0) is [] by contract: no [-0:] slicing anywhere
        return MemoryContext(
            "", tuple(self.store.last_turns(self.user_id, self.session_id, self.k))
        )


class TokenBudgetCore(ShortTermMemory):
    """The most recent exchanges whose rendering fits ``max_tokens``.

    Turns are read newest first in growing pages (doubling) until the budget is full, so
    the cost depends on the budget, not on the history. An exchange that alone exceeds the
    budget is left out (with everything older than it).

    Args:
        max_tokens: budget for the rendered history (``Human: …`` / ``AI: …`` lines).
        **kwargs: see :class:`ShortTermMemory` (``token_counter`` sets how tokens count).

    Example:
        >>> from memory_chains.testing import word_counter
        >>> mem = TokenBudgetCore(max_tokens=6, token_counter=word_counter)
        >>> _ = mem.add_exchange("one two", "three"); _ = mem.add_exchange("four", "five")
        >>> [t.human for t in mem.context().turns]
        ['four']
    """

    def __init__(self, max_tokens: int = 1000, **kwargs: Any) -> None:
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 0:
            raise InvalidInputError(f"max_tokens must be an integer >= 0, got {max_tokens!r}")
        super().__init__(**kwargs)
        self.max_tokens = max_tokens
        self._turn_cost = functools.lru_cache(maxsize=4096)(self._cost)
        self._page_hint = 16

    def _cost(self, human: str, ai: str) -> int:
        # one rendered exchange plus the newline joining it to the next
        return self.count_tokens(
            render_turns([Turn(0, human, ai)], self.human_prefix, self.ai_prefix) + "\n"
        )

    def context(self) -> MemoryContext:
        if self.max_tokens == 0:
            return MemoryContext()
        # start from what fitted last time (plus a margin): usually one small read
        page = self._page_hint
        while True:
            turns = self.store.last_turns(self.user_id, self.session_id, page)
            chosen: list[Turn] = []
            used = 0
            for t in reversed(turns):
                cost = self._turn_cost(t.human, t.ai)
                if used + cost > self.max_tokens:
                    break
                used += cost
                chosen.append(t)
            if len(chosen) < len(turns) or len(turns) < page:
                break
            page *= 2
        chosen.reverse()
        self._page_hint = max(4, len(chosen) + 2)
        # the per-turn sum is an estimate for sub-word tokenizers: check the real rendering
        while (
            chosen
            and self.count_tokens(render_turns(chosen, self.human_prefix, self.ai_prefix))
            > self.max_tokens
        ):
            chosen.pop(0)
        return MemoryContext("", tuple(chosen))
