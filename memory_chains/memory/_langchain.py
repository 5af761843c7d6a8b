"""LangChain classic ``BaseMemory`` shells over our memories: :class:`BufferMemory`,
:class:`WindowMemory`, :class:`TokenBudgetMemory` and :class:`SummaryMemory`.

The only module of :mod:`memory_chains.memory` that imports ``langchain_classic``. Each
shell builds one core (:mod:`memory_chains.memory._core`, :mod:`._summary`) and translates
between chain inputs/outputs and the core. Defaults fit ``ConversationalRetrievalChain``
with no configuration: memory key ``chat_history``, input key ``question``, output key
``answer`` (other output keys such as ``source_documents`` are ignored), messages out.

Example:
    >>> mem = BufferMemory()
    >>> mem.save_context({"question": "Bonjour"}, {"answer": "Salut !", "source_documents": []})
    >>> [m.type for m in mem.load_memory_variables({})["chat_history"]]
    ['human', 'ai']
"""

from __future__ import annotations

from abc import abstractmethod
from collections import OrderedDict
from typing import Any

from langchain_classic.base_memory import BaseMemory
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import PrivateAttr

from memory_chains._pydantic import TypedValidation
from memory_chains.errors import InvalidInputError
from memory_chains.memory._core import (
    BufferCore,
    MemoryContext,
    MemoryStats,
    ShortTermMemory,
    TokenBudgetCore,
    WindowCore,
)
from memory_chains.memory._summary import SummaryCore
from memory_chains.memory._text import DEFAULT_MAX_CHARS

__all__ = ["BufferMemory", "SummaryMemory", "TokenBudgetMemory", "WindowMemory"]

_SUMMARY_PREFIX = "Summary of the earlier conversation"
_MESSAGE_CACHE = 256


class _ShellMemory(TypedValidation, BaseMemory):
    """Shared plumbing: keys, message/string rendering, delegation to the core.

    A bad argument raises :class:`~memory_chains.errors.InvalidInputError` (pydantic's
    ``ValidationError`` is mapped), like every other constructor of the library.
    """

    store: Any = None
    user_id: str = "default"
    session_id: str = "default"
    memory_key: str = "chat_history"
    input_key: str = "question"
    output_key: str = "answer"
    return_messages: bool = True
    pii: Any = True
    token_counter: Any = None
    human_prefix: str = "Human"
    ai_prefix: str = "AI"
    max_chars: int = DEFAULT_MAX_CHARS
    on_overflow: str = "error"

    _core: ShortTermMemory = PrivateAttr()
    # (seq, human, ai) -> the two messages: building pydantic messages is most of a load
    _messages: OrderedDict[tuple[int, str, str], tuple[BaseMessage, BaseMessage]] = PrivateAttr(
        default_factory=OrderedDict
    )

    def model_post_init(self, context: Any, /) -> None:
        self._core = self._make_core(
            store=self.store,
            user_id=self.user_id,
            session_id=self.session_id,
            pii=self.pii,
            token_counter=self.token_counter,
            max_chars=self.max_chars,
            on_overflow=self.on_overflow,
            human_prefix=self.human_prefix,
            ai_prefix=self.ai_prefix,
        )
        self.store = self._core.store

    @abstractmethod
    def _make_core(self, **kwargs: Any) -> ShortTermMemory: ...

    @property
    def core(self) -> ShortTermMemory:
        """The LangChain-free memory doing the work."""
        return self._core

    @property
    def memory_variables(self) -> list[str]:
        return [self.memory_key]

    def _format(self, ctx: MemoryContext) -> dict[str, Any]:
        if not self.return_messages:
            return {self.memory_key: ctx.render(self.human_prefix, self.ai_prefix, _SUMMARY_PREFIX)}
        messages: list[BaseMessage] = []
        if ctx.summary:
            messages.append(SystemMessage(content=f"{_SUMMARY_PREFIX}: {ctx.summary}"))
        cache = self._messages
        for t in ctx.turns:
            key = (t.seq, t.human, t.ai)
            pair = cache.get(key)
            if pair is None:
                pair = (HumanMessage(content=t.human), AIMessage(content=t.ai))
                cache[key] = pair
                if len(cache) > _MESSAGE_CACHE:
                    cache.popitem(last=False)
            messages.extend(pair)
        return {self.memory_key: messages}

    def load_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """``{memory_key: [messages]}`` (or a string with ``return_messages=False``)."""
        return self._format(self._core.context())

    async def aload_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        return self._format(await self._core.acontext())

    def _pick(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> tuple[Any, Any]:
        if self.input_key in inputs:
            question = inputs[self.input_key]
        else:
            keys = [k for k in inputs if k not in (self.memory_key, "stop")]
            if len(keys) != 1:
                raise InvalidInputError(
                    f"input key {self.input_key!r} not in the chain inputs {sorted(inputs)}: "
                    "pass input_key= to the memory"
                )
            question = inputs[keys[0]]
        if self.output_key in outputs:
            answer = outputs[self.output_key]
        elif len(outputs) == 1:
            answer = next(iter(outputs.values()))
        else:
            raise InvalidInputError(
                f"output key {self.output_key!r} not in the chain outputs {sorted(outputs)}: "
                "pass output_key= to the memory"
            )
        return question, answer

    def save_context(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        """Store the exchange (masked); only ``input_key`` and ``output_key`` are read."""
        question, answer = self._pick(inputs, outputs)
        self._core.add_exchange(question, answer)

    async def asave_context(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        question, answer = self._pick(inputs, outputs)
        await self._core.aadd_exchange(question, answer)

    def clear(self) -> None:
        """Forget this session (turns and summary)."""
        self._core.clear()

    async def aclear(self) -> None:
        await self._core.aclear()

    def stats(self) -> MemoryStats:
        """Counters: turns, words and tokens in memory, compactions."""
        return self._core.stats()


class BufferMemory(_ShellMemory):
    """The whole conversation, persisted per session, PII masked (``BaseMemory``).

    Args:
        store: a :class:`~memory_chains.stores.BaseStore`, a URL such as
            ``"sqlite:///memory.sqlite3"``, or None (in-memory).
        user_id, session_id: which conversation this memory holds.
        memory_key, input_key, output_key: defaults fit ``ConversationalRetrievalChain``.
        return_messages: messages (default) or one string.
        pii: True masks e-mails, IBANs, cards and phones before storage; False keeps text.

    Example:
        >>> mem = BufferMemory(return_messages=False)
        >>> mem.save_context({"question": "Mon mail: jo@ex.fr"}, {"answer": "Noté"})
        >>> mem.load_memory_variables({})["chat_history"]
        'Human: Mon mail: [EMAIL]\\nAI: Noté'
    """

    def _make_core(self, **kwargs: Any) -> ShortTermMemory:
        return BufferCore(**kwargs)


class WindowMemory(_ShellMemory):
    """The last ``k`` exchanges (``k = 0``: none), persisted per session (``BaseMemory``).

    Example:
        >>> mem = WindowMemory(k=1)
        >>> mem.save_context({"question": "q1"}, {"answer": "a1"})
        >>> mem.save_context({"question": "q2"}, {"answer": "a2"})
        >>> [m.content for m in mem.load_memory_variables({})["chat_history"]]
        ['q2', 'a2']
    """

    k: int = 5

    def _make_core(self, **kwargs: Any) -> ShortTermMemory:
        return WindowCore(k=self.k, **kwargs)


class TokenBudgetMemory(_ShellMemory):
    """The most recent exchanges fitting ``max_tokens`` (``BaseMemory``).

    Example:
        >>> from memory_chains.testing import word_counter
        >>> mem = TokenBudgetMemory(max_tokens=4, token_counter=word_counter)
        >>> mem.save_context({"question": "un deux trois"}, {"answer": "quatre"})
        >>> mem.save_context({"question": "cinq"}, {"answer": "six"})
        >>> [m.content for m in mem.load_memory_variables({})["chat_history"]]
        ['cinq', 'six']
    """

    max_tokens: int = 1000

    def _make_core(self, **kwargs: Any) -> ShortTermMemory:
        return TokenBudgetCore(max_tokens=self.max_tokens, **kwargs)


class SummaryMemory(_ShellMemory):
    """A running structured summary plus the last ``keep_last`` exchanges (``BaseMemory``).

    Compaction runs in a background thread once the unsummarised turns pass a threshold
    (``max_turns``, ``max_tokens`` or ``max_words``); call :meth:`wait_idle` (or
    ``await await_idle()``) to wait for it. See :class:`~memory_chains.memory.SummaryCore`.

    Example:
        >>> from memory_chains.testing import ScriptedChatModel
        >>> llm = ScriptedChatModel(default='{"add_facts": ["Alice ordered 3 laptops."]}')
        >>> mem = SummaryMemory(llm=llm, max_turns=2, keep_last=1)
        >>> for q in ("Alice here: 3 laptops, please.", "Delivery?", "Thanks"):
        ...     mem.save_context({"question": q}, {"answer": "Done."})
        >>> mem.wait_idle()
        True
        >>> mem.load_memory_variables({})["chat_history"][0].content
        'Summary of the earlier conversation: Key facts: Alice ordered 3 laptops.'
    """

    llm: Any = None
    summarizer: Any = None
    max_turns: int | None = None
    max_tokens: int | None = None
    max_words: int | None = None
    keep_last: int = 4
    max_summary_tokens: int = 600
    background: bool = True

    def _make_core(self, **kwargs: Any) -> ShortTermMemory:
        return SummaryCore(
            llm=self.llm,
            summarizer=self.summarizer,
            max_turns=self.max_turns,
            max_tokens=self.max_tokens,
            max_words=self.max_words,
            keep_last=self.keep_last,
            max_summary_tokens=self.max_summary_tokens,
            background=self.background,
            **kwargs,
        )

    @property
    def summary_core(self) -> SummaryCore:
        """The core, typed as :class:`SummaryCore`."""
        core = self._core
        assert isinstance(core, SummaryCore)
        return core

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait for a running compaction; False if ``timeout`` passed first."""
        return self.summary_core.wait_idle(timeout)

    async def await_idle(self, timeout: float | None = None) -> bool:
        """Async :meth:`wait_idle`."""
        return await self.summary_core.await_idle(timeout)
