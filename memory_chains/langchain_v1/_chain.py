"""The conversational RAG chain in LCEL, over our memories: :func:`build_lcel_chain`.

``ConversationalRetrievalChain`` (langchain-classic) is deprecated for removal in LangChain
2.0; LangChain's replacement is ``create_history_aware_retriever`` + ``create_retrieval_chain``,
but both live in langchain-classic too, and the first one cannot return the rewritten question
nor use a rewriter that is not "prompt | model". This module builds the same pipeline from
``langchain_core`` runnables only::

    load memory → rewrite (QueryRewriter) → retrieve → answer (the classic chain's prompt)
        → record in memory (only once the answer is complete)

:func:`history_aware_retriever` is the first half alone, a drop-in for
``create_history_aware_retriever`` (it also fits ``create_retrieval_chain``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import (
    Runnable,
    RunnableGenerator,
    RunnableLambda,
    RunnablePassthrough,
)
from langchain_core.runnables.utils import AddableDict

from memory_chains.errors import InvalidInputError
from memory_chains.langchain_v1._memories import Memories, MemoryView
from memory_chains.langchain_v1._steps import (
    arewrite_queries,
    check_question,
    format_documents,
    rewrite_queries,
)
from memory_chains.rag import ANSWER_TAG, aretrieve_queries, normalise_history, retrieve_queries

__all__ = ["build_lcel_chain", "history_aware_retriever"]

_OUTPUT_KEYS = ("question", "rewritten_question", "context", "answer")


def _question(inputs: Any) -> str:
    if isinstance(inputs, str):
        return check_question(inputs)
    if not isinstance(inputs, Mapping):
        raise InvalidInputError(
            f"the chain takes {{'input': question}} or a string, got {type(inputs).__name__}"
        )
    for key in ("input", "question"):
        if key in inputs:
            return check_question(inputs[key])
    raise InvalidInputError(
        f"no question in the chain inputs {sorted(inputs)}: pass {{'input': '...'}}"
    )


def build_lcel_chain(
    retriever: BaseRetriever | Runnable[str, Any],
    llm: BaseChatModel | None = None,
    *,
    memory: Any = None,
    entities: Any = None,
    long_term: Any = None,
    context: Any = None,
    rewriter: Any = None,
    prompt: Any = None,
    entity_hints: bool = True,
) -> Runnable[Any, dict[str, Any]]:
    """Build the conversational RAG chain as one LCEL ``Runnable`` over our memories.

    Args:
        retriever: any retriever (``KnowledgeBase.as_retriever()``) or runnable str → docs.
        llm: chat model for the rewrite and the answer; defaults to
            :func:`memory_chains.providers.get_chat_model`.
        memory: a short-term memory (``WindowCore``, ``BufferMemory``…) or a
            :class:`~memory_chains.langchain_v1.Memories`; None for no memory.
        entities, long_term, context: further memories (see
            :class:`~memory_chains.langchain_v1.Memories`); ignored when ``memory`` is a
            ``Memories``.
        rewriter: a ``QueryRewriter``; defaults to one over ``llm``.
        prompt: answer prompt with ``chat_history``, ``context`` and ``question`` variables;
            defaults to the classic chain's (``memory_chains.rag.QA_PROMPT``).
        entity_hints: give the rewriter the entity tracker's names, ordered for the question
            (:func:`memory_chains.rewrite.entity_source`, as ``build_chain`` does); False
            for none. Ignored when ``memory`` is a ``Memories``.

    Returns:
        A runnable taking ``{"input": question}`` (or ``{"question": …}``, or a string) and
        returning ``{"question", "rewritten_question", "context" (documents), "answer"}``.
        ``stream`` / ``astream`` yield the keys as they are ready, the answer token by token;
        the exchange is recorded once the answer is complete. If the model or the retriever
        fails, its exception propagates and nothing is recorded.

    Raises:
        InvalidInputError: (when run) the question is missing, not a string or empty.

    Example:
        >>> from langchain_core.documents import Document
        >>> from langchain_core.runnables import RunnableLambda
        >>> from memory_chains.memory import WindowCore
        >>> from memory_chains.rewrite import QueryRewriter
        >>> from memory_chains.testing import ScriptedChatModel
        >>> docs = RunnableLambda(lambda q: [Document(q, metadata={"source": "kb.md"})])
        >>> memory = WindowCore()
        >>> chain = build_lcel_chain(docs, ScriptedChatModel(replies=["30 jours."]),
        ...     memory=memory, rewriter=QueryRewriter(use_model=False))
        >>> out = chain.invoke({"input": "Quelle est votre politique de retour ?"})
        >>> out["answer"], out["context"][0].metadata["source"]
        ('30 jours.', 'kb.md')
        >>> memory.context().turns[0].ai
        '30 jours.'
    """
    memories = (
        memory
        if isinstance(memory, Memories)
        else Memories(
            memory,
            entities=entities,
            long_term=long_term,
            context=context,
            entity_hints=entity_hints,
        )
    )
    if llm is None:
        from memory_chains.providers import get_chat_model

        llm = get_chat_model()
    if rewriter is None:
        from memory_chains.rewrite import QueryRewriter

        rewriter = QueryRewriter(llm)
    if prompt is None:
        from memory_chains.rag import QA_PROMPT

        prompt = QA_PROMPT
    answer = prompt | llm.with_config(tags=[ANSWER_TAG]) | StrOutputParser()

    def load(inputs: Any) -> dict[str, Any]:
        question = _question(inputs)
        return {"question": question, "view": memories.view(question)}

    async def aload(inputs: Any) -> dict[str, Any]:
        question = _question(inputs)
        return {"question": question, "view": await memories.aview(question)}

    def rewrite(x: dict[str, Any]) -> tuple[str, ...]:
        return rewrite_queries(rewriter, x["view"])

    async def arewrite(x: dict[str, Any]) -> tuple[str, ...]:
        return await arewrite_queries(rewriter, x["view"])

    def search(x: dict[str, Any]) -> list[Any]:
        return retrieve_queries(retriever, x["queries"])

    async def asearch(x: dict[str, Any]) -> list[Any]:
        return await aretrieve_queries(retriever, x["queries"])

    def answer_inputs(x: dict[str, Any]) -> dict[str, str]:
        view: MemoryView = x["view"]
        return {
            "chat_history": view.chat_history(),
            "context": format_documents(x["context"]),
            "question": x["rewritten_question"],
        }

    def record(chunks: Iterator[dict[str, Any]]) -> Iterator[AddableDict]:
        output = _Output()
        for chunk in chunks:
            piece = output.add(chunk)
            if piece:
                yield piece
        memories.record(*output.exchange())

    async def arecord(chunks: AsyncIterator[dict[str, Any]]) -> AsyncIterator[AddableDict]:
        output = _Output()
        async for chunk in chunks:
            piece = output.add(chunk)
            if piece:
                yield piece
        await memories.arecord(*output.exchange())

    chain = (
        RunnableLambda(load, afunc=aload).with_config(run_name="load_memory")
        | RunnablePassthrough.assign(
            queries=RunnableLambda(rewrite, afunc=arewrite).with_config(run_name="rewrite_question")
        )
        | RunnablePassthrough.assign(
            rewritten_question=lambda x: x["queries"][0],
            context=RunnableLambda(search, afunc=asearch).with_config(
                run_name="retrieve_documents"
            ),
        )
        | RunnablePassthrough.assign(answer=RunnableLambda(answer_inputs) | answer)
        | RunnableGenerator(record, arecord, name="record_in_memory")
    )
    return chain.with_config(run_name="memory_chains_lcel")


class _Output:
    """Accumulates the streamed output, keeping only the public keys."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def add(self, chunk: Mapping[str, Any]) -> AddableDict:
        piece = AddableDict({k: v for k, v in chunk.items() if k in _OUTPUT_KEYS})
        for key, value in piece.items():
            if key == "answer" and key in self.values:
                self.values[key] += value
            else:
                self.values[key] = value
        return piece

    def exchange(self) -> tuple[str, str]:
        return self.values["question"], str(self.values.get("answer", ""))


def history_aware_retriever(
    retriever: BaseRetriever | Runnable[str, Any],
    rewriter: Any,
    memory: Any = None,
) -> Runnable[Any, list[Any]]:
    """``create_history_aware_retriever`` with our rewriter: {input, chat_history} → docs.

    The history comes from ``memory`` when given (a short-term memory or ``Memories``),
    else from the ``chat_history`` input (messages, ``(role, text)`` pairs or a transcript).
    The result also fits ``langchain_classic.chains.create_retrieval_chain`` as its retriever.

    Example:
        >>> from langchain_core.documents import Document
        >>> from langchain_core.runnables import RunnableLambda
        >>> from memory_chains.rewrite import QueryRewriter
        >>> echo = RunnableLambda(lambda q: [Document(q)])
        >>> r = history_aware_retriever(echo, QueryRewriter(use_model=False))
        >>> history = [("human", "Parle-moi de l'ASUS ROG Strix G15."), ("ai", "Très bon choix.")]
        >>> docs = r.invoke({"input": "Et la carte graphique ?", "chat_history": history})
        >>> [d.page_content for d in docs]  # no model: the rules name the referent
        ["Et la carte graphique de l'ASUS ROG Strix G15 ?"]
    """
    memories = (
        None if memory is None else memory if isinstance(memory, Memories) else Memories(memory)
    )

    def view(inputs: Any) -> MemoryView:
        question = _question(inputs)
        if memories is not None:
            return memories.view(question)
        history = inputs.get("chat_history") if isinstance(inputs, Mapping) else None
        turns = tuple(normalise_history(history))
        return MemoryView(question, turns)

    async def aview(inputs: Any) -> MemoryView:
        if memories is not None:
            return await memories.aview(_question(inputs))
        return view(inputs)

    def search(v: MemoryView) -> list[Any]:
        return retrieve_queries(retriever, rewrite_queries(rewriter, v))

    async def asearch(v: MemoryView) -> list[Any]:
        return await aretrieve_queries(retriever, await arewrite_queries(rewriter, v))

    return (
        RunnableLambda(view, afunc=aview)
        | RunnableLambda(search, afunc=asearch).with_config(run_name="rewrite_and_retrieve")
    ).with_config(run_name="history_aware_retriever")
