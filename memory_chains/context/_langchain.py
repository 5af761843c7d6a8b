"""LangChain classic shell: :class:`ContextMemory`, a ``BaseMemory`` over a
:class:`~memory_chains.context.ContextBuilder`, plus :data:`CONTEXT_QA_PROMPT` and
:func:`build_context_chain`.

The only module of :mod:`memory_chains.context` that imports ``langchain_classic``. It gives
a chain two variables built under one budget:

* ``chat_history``: the recent exchanges the builder kept (cut at the topic boundary), as
  messages, so that ``ConversationalRetrievalChain``'s rewriter and answer step see a
  normal history;
* ``memory_context``: every other block (profile, facts, entities, summary, recalled turns)
  as named sections. The stock answer prompt has no slot for it: use
  :data:`CONTEXT_QA_PROMPT` (``build_context_chain`` does).

``save_context`` forwards the exchange to every memory behind the sources that records
(its protocol ``record``), each once.

Example:
    >>> from memory_chains.context import ContextBuilder, short_term_sources
    >>> from memory_chains.memory import WindowCore
    >>> from memory_chains.testing import word_counter
    >>> builder = ContextBuilder(short_term_sources(WindowCore(k=2)), 200, word_counter)
    >>> memory = ContextMemory(builder=builder)
    >>> memory.save_context({"question": "Bonjour"}, {"answer": "Salut !"})
    >>> [m.content for m in memory.load_memory_variables({"question": "Ça va ?"})["chat_history"]]
    ['Bonjour', 'Salut !']
"""

from __future__ import annotations

from typing import Any

from langchain_classic.base_memory import BaseMemory
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.prompts import ChatPromptTemplate
from pydantic import ConfigDict

from memory_chains._pydantic import TypedValidation
from memory_chains.context._builder import BuiltContext, ContextBuilder, recording_sources
from memory_chains.errors import InvalidInputError
from memory_chains.rag import answer_instructions, find_entity_tracker

__all__ = ["CONTEXT_QA_PROMPT", "ContextMemory", "build_context_chain"]

_SYSTEM = answer_instructions(
    "the context documents, what you know about the user and the conversation so far"
)

_REMINDER = "Answer from the documents; if they say that what is asked does not exist, say so."

CONTEXT_QA_PROMPT = ChatPromptTemplate.from_messages(
    [
        ("system", _SYSTEM),
        (
            "human",
            "What you know:\n{memory_context}\n\nConversation so far:\n{chat_history}\n\n"
            "Context documents:\n{context}\n\n" + _REMINDER + "\nQuestion: {question}",
        ),
    ]
)
"""Answer prompt with ``memory_context``, ``chat_history``, ``context`` and ``question``.

Its last instruction is repeated just before the question: with the memory blocks in
front of the documents, a small model otherwise reads past a document's "there is no X
on Saturday" and answers with the next thing it finds there."""


class ContextMemory(TypedValidation, BaseMemory):
    """All our memories at once, under one token budget, as a ``BaseMemory``.

    Args:
        builder: the :class:`~memory_chains.context.ContextBuilder` (its sources hold the
            memories).
        memory_key: variable of the kept exchanges (``chat_history``).
        context_key: variable of the other blocks (``memory_context``).
        input_key, output_key: where the question and the answer are read.
        return_messages: messages (default) or one ``Human: …`` / ``AI: …`` string.

    Example:
        >>> from memory_chains.context import ContextBuilder
        >>> ContextMemory(builder=ContextBuilder([], 10, len)).memory_variables
        ['chat_history', 'memory_context']
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    builder: ContextBuilder
    memory_key: str = "chat_history"
    context_key: str = "memory_context"
    input_key: str = "question"
    output_key: str = "answer"
    return_messages: bool = True
    human_prefix: str = "Human"
    ai_prefix: str = "AI"

    @property
    def memory_variables(self) -> list[str]:
        """The two prompt variables this memory provides."""
        return [self.memory_key, self.context_key]

    @property
    def recorders(self) -> list[Any]:
        """The sources that record, one per memory behind them, in source order."""
        return recording_sources(self.builder.sources)

    def context(self, question: str) -> BuiltContext:
        """The :class:`~memory_chains.context.BuiltContext` for ``question`` (to inspect it)."""
        return self.builder.build(question)

    def _question(self, inputs: dict[str, Any]) -> str:
        value = inputs.get(self.input_key, "")
        return value if isinstance(value, str) else str(value or "")

    def _format(self, built: BuiltContext) -> dict[str, Any]:
        history_blocks = [b.name for b in built.blocks if b.turns]
        other = built.render(exclude=history_blocks)
        if self.return_messages:
            messages: list[BaseMessage] = []
            for human, ai in built.turns:
                messages += [HumanMessage(content=human), AIMessage(content=ai)]
            return {self.memory_key: messages, self.context_key: other}
        lines = []
        for human, ai in built.turns:
            lines += [f"{self.human_prefix}: {human}", f"{self.ai_prefix}: {ai}"]
        return {self.memory_key: "\n".join(lines), self.context_key: other}

    def load_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """Build the context for the question in ``inputs``."""
        return self._format(self.builder.build(self._question(inputs)))

    async def aload_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """Async :meth:`load_memory_variables` (sources read concurrently)."""
        return self._format(await self.builder.abuild(self._question(inputs)))

    def _texts(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> tuple[str, str]:
        if self.input_key not in inputs:
            raise InvalidInputError(
                f"ContextMemory reads the question from {self.input_key!r} but the chain gave "
                f"{sorted(inputs)}: pass input_key=... to ContextMemory"
            )
        if self.output_key not in outputs:
            raise InvalidInputError(
                f"ContextMemory reads the answer from {self.output_key!r} but the chain gave "
                f"{sorted(outputs)}: pass output_key=... to ContextMemory"
            )
        return str(inputs[self.input_key]), str(outputs[self.output_key])

    def save_context(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        """Forward the exchange to every recording memory, in source order."""
        self.builder.record(*self._texts(inputs, outputs))

    async def asave_context(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        """Async :meth:`save_context` (the memories' async methods when they have them)."""
        await self.builder.arecord(*self._texts(inputs, outputs))

    def clear(self) -> None:
        """Clear the memories behind the recording sources that have a ``clear()`` (the
        short-term and entity memories).

        Long-term memory is not cleared here: forget a user with
        :func:`memory_chains.stores.forget_user`.
        """
        for source in self.recorders:
            clear = getattr(source.target, "clear", None)
            if callable(clear):
                clear()

    def salient(self, question: str = "", k: int = 5) -> list[str]:
        """Salient entity names (most recent first) from the entity tracker among the
        sources (:func:`memory_chains.rag.find_entity_tracker`).

        ``build_context_chain`` gives the rewriter :func:`memory_chains.rewrite.entity_source`
        instead, which puts the type the question asks about first.
        """
        tracker = find_entity_tracker(self.builder)
        return list(tracker.salient(question, k)) if tracker is not None else []


def build_context_chain(
    retriever: Any,
    memory: ContextMemory,
    *,
    entity_hints: bool = True,
    **kwargs: Any,
) -> Any:
    """:func:`memory_chains.rag.build_chain` with ``memory`` and :data:`CONTEXT_QA_PROMPT`.

    Args:
        retriever: any LangChain retriever.
        memory: the :class:`ContextMemory`.
        entity_hints: hand the rewriter the names of the entity tracker among the memory's
            sources, as ``build_chain`` does (:func:`memory_chains.rewrite.entity_source`:
            the type the question asks about first, then the most recent). False for none.
        **kwargs: ``llm``, ``rewriter``, ``qa_prompt``, ``entity_source``… passed on to
            ``build_chain``.

    Example:
        >>> from memory_chains.context import ContextBuilder
        >>> from memory_chains.testing import ScriptedChatModel
        >>> from langchain_core.retrievers import BaseRetriever
        >>> class NoDocs(BaseRetriever):
        ...     def _get_relevant_documents(self, query, *, run_manager): return []
        >>> memory = ContextMemory(builder=ContextBuilder([], 100, len))
        >>> chain = build_context_chain(NoDocs(), memory, llm=ScriptedChatModel())
        >>> chain.memory is memory
        True
    """
    from memory_chains.rag import build_chain

    kwargs.setdefault("qa_prompt", CONTEXT_QA_PROMPT)
    return build_chain(retriever, memory=memory, entity_hints=entity_hints, **kwargs)
