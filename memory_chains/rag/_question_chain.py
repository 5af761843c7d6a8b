"""The adapter that puts :class:`~memory_chains.rewrite.QueryRewriter` into the classic chain.

``ConversationalRetrievalChain.question_generator`` must be an ``LLMChain`` (the field is
type-checked), called with ``question`` and the history rendered as one string.
:class:`RewriteQuestionChain` is an ``LLMChain`` only in name: it parses that string back into
turns (see :mod:`memory_chains.rag._history`) and delegates everything to the rewriter. It
remembers the search queries of its recent rewrites (:meth:`RewriteQuestionChain.queries_for`)
for the chain's retrieval step, which only receives the standalone question.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from langchain_classic.chains import LLMChain
from langchain_core.callbacks import (
    AsyncCallbackManagerForChainRun,
    CallbackManagerForChainRun,
)
from langchain_core.prompts import PromptTemplate
from pydantic import ConfigDict, PrivateAttr

from memory_chains.rag._history import normalise_history

__all__ = ["RewriteQuestionChain", "Rewriter"]

EntitySource = Callable[[str], Sequence[str]]


class Rewriter(Protocol):
    """What the chain needs from a rewriter (``QueryRewriter`` satisfies it)."""

    def rewrite(self, question: str, history: Any, *, entities: Sequence[str] = ()) -> Any:
        """Return an object with a ``standalone`` attribute."""

    async def arewrite(self, question: str, history: Any, *, entities: Sequence[str] = ()) -> Any:
        """Async twin of :meth:`rewrite`."""


# Rewrites whose queries are kept for the retrieval step (which follows each rewrite at
# once; a few cover concurrent conversations on one chain).
_REMEMBERED = 64

_PLACEHOLDER_PROMPT = PromptTemplate.from_template(
    "Rewrite the follow-up question as a standalone question.\n{chat_history}\n{question}"
)


class RewriteQuestionChain(LLMChain):
    """Question generator for ``ConversationalRetrievalChain`` backed by a query rewriter.

    Args:
        rewriter: the rewriter (``QueryRewriter`` or anything with ``rewrite``/``arewrite``).
        entity_source: optional function of the question returning entity names, best
            first (e.g. :func:`memory_chains.rewrite.entity_source`); passed to the rewriter.
        llm: the rewriter's model (kept because ``LLMChain`` requires one; not called here).

    Example:
        >>> from memory_chains.testing import ScriptedChatModel
        >>> class Upper:
        ...     def rewrite(self, question, history, *, entities=()):
        ...         return type("R", (), {"standalone": question.upper()})()
        ...     async def arewrite(self, question, history, *, entities=()):
        ...         return self.rewrite(question, history)
        >>> chain = RewriteQuestionChain(rewriter=Upper(), llm=ScriptedChatModel())
        >>> chain.run(question="et lui ?", chat_history="Human: a\\nAssistant: b")
        'ET LUI ?'
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    rewriter: Any
    entity_source: Any = None
    prompt: Any = _PLACEHOLDER_PROMPT
    _queries: OrderedDict[str, tuple[str, ...]] = PrivateAttr(default_factory=OrderedDict)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def _entities(self, question: str) -> Sequence[str]:
        source: EntitySource | None = self.entity_source
        return tuple(source(question)) if source else ()

    def _record(self, result: Any) -> dict[str, str]:
        standalone = str(result.standalone)
        queries = tuple(getattr(result, "queries", ()) or (standalone,))
        with self._lock:
            self._queries[standalone] = queries
            self._queries.move_to_end(standalone)
            while len(self._queries) > _REMEMBERED:
                self._queries.popitem(last=False)
        return {self.output_key: standalone}

    def queries_for(self, standalone: str) -> tuple[str, ...]:
        """The search queries of the latest rewrite that gave ``standalone``.

        ``(standalone,)`` for a question this chain did not rewrite.
        """
        with self._lock:
            return self._queries.get(standalone, (standalone,))

    def _call(
        self,
        inputs: dict[str, Any],
        run_manager: CallbackManagerForChainRun | None = None,
    ) -> dict[str, str]:
        question = inputs["question"]
        history = normalise_history(inputs.get("chat_history"))
        result = self.rewriter.rewrite(question, history, entities=self._entities(question))
        return self._record(result)

    async def _acall(
        self,
        inputs: dict[str, Any],
        run_manager: AsyncCallbackManagerForChainRun | None = None,
    ) -> dict[str, str]:
        question = inputs["question"]
        history = normalise_history(inputs.get("chat_history"))
        result = await self.rewriter.arewrite(question, history, entities=self._entities(question))
        return self._record(result)
