"""The adapter that puts :class:`~memory_chains.rewrite.QueryRewriter` into the classic chain.

``ConversationalRetrievalChain.question_generator`` must be an ``LLMChain`` (the field is
type-checked), called with ``question`` and the history rendered as one string.
:class:`RewriteQuestionChain` is an ``LLMChain`` only in name: it parses that string back into
turns (see :mod:`memory_chains.rag._history`) and delegates everything to the rewriter.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from langchain_classic.chains import LLMChain
from langchain_core.callbacks import (
    AsyncCallbackManagerForChainRun,
    CallbackManagerForChainRun,
)
from langchain_core.prompts import PromptTemplate
from pydantic import ConfigDict

from memory_chains.rag._history import normalise_history

__all__ = ["RewriteQuestionChain", "Rewriter"]

EntitySource = Callable[[str], Sequence[str]]


class Rewriter(Protocol):
    """What the chain needs from a rewriter (``QueryRewriter`` satisfies it)."""

    def rewrite(self, question: str, history: Any, *, entities: Sequence[str] = ()) -> Any:
        """Return an object with a ``standalone`` attribute."""

    async def arewrite(self, question: str, history: Any, *, entities: Sequence[str] = ()) -> Any:
        """Async twin of :meth:`rewrite`."""


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

    def _entities(self, question: str) -> Sequence[str]:
        source: EntitySource | None = self.entity_source
        return tuple(source(question)) if source else ()

    def _call(
        self,
        inputs: dict[str, Any],
        run_manager: CallbackManagerForChainRun | None = None,
    ) -> dict[str, str]:
        question = inputs["question"]
        history = normalise_history(inputs.get("chat_history"))
        result = self.rewriter.rewrite(question, history, entities=self._entities(question))
        return {self.output_key: result.standalone}

    async def _acall(
        self,
        inputs: dict[str, Any],
        run_manager: AsyncCallbackManagerForChainRun | None = None,
    ) -> dict[str, str]:
        question = inputs["question"]
        history = normalise_history(inputs.get("chat_history"))
        result = await self.rewriter.arewrite(question, history, entities=self._entities(question))
        return {self.output_key: result.standalone}
