"""Conversational RAG: ``ConversationalRetrievalChain`` wired so that its pitfalls never show.

:func:`build_chain` returns a stock ``ConversationalRetrievalChain`` with our rewriter as the
question generator, a history renderer that accepts messages, tuples or strings, source
documents and the rewritten question in the output, and a memory checked up front (input key
``question``, memory key ``chat_history``, output key ``answer``: the "multiple output keys"
failure happens *after* the answer, so it is refused at build time instead).

:class:`ConversationalRAG` is a small facade for applications and notebooks: ``ask`` /
``aask`` return a :class:`RAGAnswer`; ``stream`` / ``astream`` yield the answer's tokens and
then the :class:`RAGAnswer`. A failed model call raises
:class:`~memory_chains.errors.ModelCallError` and leaves memory unchanged: the classic chain
saves to memory only after a successful run.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import warnings
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.documents import Document
from langchain_core.language_models import BaseChatModel
from langchain_core.retrievers import BaseRetriever

from memory_chains.errors import (
    ConfigurationError,
    MemoryChainsError,
    ModelCallError,
)
from memory_chains.rag._entity_source import default_entity_source
from memory_chains.rag._history import render_history
from memory_chains.rag._validate import validate_question

__all__ = ["ANSWER_TAG", "ConversationalRAG", "RAGAnswer", "build_chain"]

ANSWER_TAG = "memory_chains:answer"
"""Tag carried by the answer step's model calls (filter streamed tokens with it)."""


@dataclass(frozen=True)
class RAGAnswer:
    """One exchange of a conversational RAG chain.

    Attributes:
        question: the user's question, as asked.
        rewritten: the standalone question used for retrieval (equal to ``question`` when no
            rewrite was needed).
        answer: the model's answer.
        sources: the retrieved documents the answer was grounded on.
    """

    question: str
    rewritten: str
    answer: str
    sources: tuple[Document, ...] = field(default_factory=tuple)

    @property
    def was_rewritten(self) -> bool:
        """True when retrieval used a different question than the one asked."""
        return self.rewritten.strip() != self.question.strip()

    def source_names(self) -> list[str]:
        """The distinct ``source`` metadata of the retrieved documents, in rank order."""
        names: list[str] = []
        for doc in self.sources:
            name = str(doc.metadata.get("source", "?"))
            if name not in names:
                names.append(name)
        return names


def _check_memory(memory: Any) -> None:
    if memory is None:
        return
    problems = []
    if getattr(memory, "memory_key", "chat_history") != "chat_history":
        problems.append(f"memory_key={memory.memory_key!r} (must be 'chat_history')")
    if getattr(memory, "input_key", None) not in (None, "question"):
        problems.append(f"input_key={memory.input_key!r} (must be 'question' or None)")
    if hasattr(memory, "output_key") and memory.output_key is None:
        problems.append("output_key=None (must be 'answer': the chain returns several keys)")
    elif getattr(memory, "output_key", "answer") != "answer":
        problems.append(f"output_key={memory.output_key!r} (must be 'answer')")
    if problems:
        raise ConfigurationError(
            f"{type(memory).__name__} cannot be the memory of ConversationalRetrievalChain: "
            + "; ".join(problems)
            + ". memory_chains' memories have the right keys by default."
        )


def build_chain(
    retriever: BaseRetriever,
    *,
    llm: BaseChatModel | None = None,
    memory: Any = None,
    rewriter: Any = None,
    entity_source: Any = None,
    entity_hints: bool = True,
    qa_prompt: Any = None,
    warm: bool = True,
) -> Any:
    """Build a ``ConversationalRetrievalChain`` with our rewriter and a checked memory.

    Args:
        retriever: any LangChain retriever (``KnowledgeBase.as_retriever()`` for FAISS).
        llm: chat model for the rewrite and the answer; defaults to
            :func:`memory_chains.providers.get_chat_model` (OpenAI if configured, else the
            embedded model).
        memory: a ``BaseMemory`` with keys ``question`` / ``chat_history`` / ``answer``
            (e.g. ``BufferMemory()``), or None for a chain without memory.
        rewriter: a ``QueryRewriter``; defaults to one over ``llm``.
        entity_source: optional function question -> entity names for the rewriter. When
            None, and an entity tracker is behind ``memory`` (an ``EntityMemory``, alone, in
            a ``CombinedMemory`` or among a ``ContextMemory``'s sources), its names are used
            (:func:`memory_chains.rewrite.entity_source`): they reach referents beyond the
            rewriter's history window and put the asked type first.
        entity_hints: False to give the rewriter no entity names unless ``entity_source``
            is passed.
        qa_prompt: a prompt with ``context``, ``chat_history`` and ``question`` variables.
        warm: load the embedded model and process the rewriter's fixed prompt in a
            background thread now (:meth:`~memory_chains.rewrite.QueryRewriter.warm`), so
            that the first follow-up does not pay for it; nothing happens for a remote model.

    Returns:
        A ``ConversationalRetrievalChain`` returning ``answer``, ``source_documents`` and
        ``generated_question``; its retrieval runs every search query of the rewrite and
        fuses them (one per compared thing).

    Raises:
        ConfigurationError: the memory's keys do not fit the chain.
    """
    # Imported before the filter below: importing langchain_classic installs its own
    # "default" filter for deprecation warnings, which would take precedence.
    import langchain_classic.chains  # noqa: F401
    from langchain_core._api.deprecation import LangChainDeprecationWarning

    _check_memory(memory)
    if llm is None:
        from memory_chains.providers import get_chat_model

        llm = get_chat_model()
    if rewriter is None:
        from memory_chains.rewrite import QueryRewriter

        rewriter = QueryRewriter(llm)
    if entity_source is None and entity_hints:
        entity_source = default_entity_source(memory)
    if warm and callable(getattr(rewriter, "warm_in_background", None)):
        rewriter.warm_in_background()
    answer_llm = llm.with_config(tags=[ANSWER_TAG])
    # These classic classes are deprecated for removal in LangChain 2.0: wrapping them is the
    # point of this function (README, "Migrating to LangChain 1.x"), so their warnings are
    # not repeated to every caller.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LangChainDeprecationWarning)
        return _assemble(retriever, llm, answer_llm, memory, rewriter, entity_source, qa_prompt)


def _assemble(
    retriever: BaseRetriever,
    llm: BaseChatModel,
    answer_llm: Any,
    memory: Any,
    rewriter: Any,
    entity_source: Any,
    qa_prompt: Any,
) -> Any:
    from langchain_classic.chains import LLMChain

    from memory_chains.rag._fused_chain import FusedRetrievalChain
    from memory_chains.rag._prompts import DOCUMENT_PROMPT, QA_PROMPT
    from memory_chains.rag._question_chain import RewriteQuestionChain
    from memory_chains.rag._stuff import MostRelevantLastStuffChain

    combine = MostRelevantLastStuffChain(
        llm_chain=LLMChain(llm=answer_llm, prompt=qa_prompt or QA_PROMPT),
        document_variable_name="context",
        document_prompt=DOCUMENT_PROMPT,
    )
    return FusedRetrievalChain(
        retriever=retriever,
        combine_docs_chain=combine,
        question_generator=RewriteQuestionChain(
            llm=llm, rewriter=rewriter, entity_source=entity_source
        ),
        memory=memory,
        get_chat_history=render_history,
        return_source_documents=True,
        return_generated_question=True,
        rephrase_question=True,
    )


def _to_answer(question: str, output: dict[str, Any]) -> RAGAnswer:
    return RAGAnswer(
        question=question,
        rewritten=str(output.get("generated_question") or question),
        answer=str(output.get("answer", "")).strip(),
        sources=tuple(output.get("source_documents") or ()),
    )


def _model_error(exc: BaseException) -> MemoryChainsError:
    if isinstance(exc, MemoryChainsError):
        return exc
    return ModelCallError(
        f"the chain failed ({type(exc).__name__}: {exc}); nothing was added to memory"
    )


_STREAM_LOOP: asyncio.AbstractEventLoop | None = None
_STREAM_LOOP_LOCK = threading.Lock()


def stream_loop() -> asyncio.AbstractEventLoop:
    """The event loop every sync :meth:`ConversationalRAG.stream` runs on: one per process,
    in a daemon thread, never closed.

    A loop per call (``asyncio.run``) breaks async HTTP clients that a provider caches for
    the whole process (langchain-openai keeps one ``httpx.AsyncClient``): the next call
    reuses a connection bound to a closed loop and fails with "Event loop is closed".
    """
    global _STREAM_LOOP
    with _STREAM_LOOP_LOCK:
        if _STREAM_LOOP is None or _STREAM_LOOP.is_closed():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="rag-stream", daemon=True)
            thread.start()
            _STREAM_LOOP = loop
        return _STREAM_LOOP


class ConversationalRAG:
    """A conversational RAG assistant: ask questions, get answers, sources and rewrites.

    Args:
        chain: a chain built by :func:`build_chain` (or any ``ConversationalRetrievalChain``
            returning ``source_documents`` and ``generated_question``).

    Example:
        >>> from memory_chains.testing import ScriptedChatModel, HashEmbeddings
        >>> from langchain_core.retrievers import BaseRetriever
        >>> class Fixed(BaseRetriever):
        ...     def _get_relevant_documents(self, query, *, run_manager):
        ...         meta = {"source": "retours.md"}
        ...         return [Document(page_content="Retours : 30 jours.", metadata=meta)]
        >>> class Same:
        ...     def rewrite(self, q, h, *, entities=()):
        ...         return type("R", (), {"standalone": q})()
        ...     async def arewrite(self, q, h, *, entities=()):
        ...         return self.rewrite(q, h)
        >>> llm = ScriptedChatModel(replies=["Vous avez 30 jours."])
        >>> rag = ConversationalRAG(build_chain(Fixed(), llm=llm, rewriter=Same()))
        >>> rag.ask("Politique de retour ?").answer
        'Vous avez 30 jours.'
    """

    def __init__(self, chain: Any) -> None:
        self.chain = chain

    @property
    def memory(self) -> Any:
        """The chain's memory (None for a chain without memory)."""
        return self.chain.memory

    def _inputs(self, question: str) -> dict[str, Any]:
        # Without memory the chain still requires a chat_history input.
        return (
            {"question": question}
            if self.chain.memory
            else {"question": question, "chat_history": []}
        )

    def ask(self, question: str) -> RAGAnswer:
        """Answer one question; the exchange is memorised only if it succeeded.

        Raises:
            InvalidInputError: the question is not a non-empty string.
            ModelCallError: the model (or retrieval) failed; memory is unchanged.
        """
        question = validate_question(question)
        try:
            output = self.chain.invoke(self._inputs(question))
        except Exception as exc:
            raise _model_error(exc) from exc
        return _to_answer(question, output)

    async def aask(self, question: str) -> RAGAnswer:
        """Async twin of :meth:`ask`."""
        question = validate_question(question)
        try:
            output = await self.chain.ainvoke(self._inputs(question))
        except Exception as exc:
            raise _model_error(exc) from exc
        return _to_answer(question, output)

    async def astream(self, question: str) -> AsyncIterator[str | RAGAnswer]:
        """Yield the answer's tokens as they come, then the :class:`RAGAnswer`.

        Only the answer step's tokens are yielded (not the rewrite's).
        """
        question = validate_question(question)
        output: dict[str, Any] | None = None
        try:
            async for event in self.chain.astream_events(self._inputs(question), version="v2"):
                kind = event["event"]
                if kind == "on_chat_model_stream" and ANSWER_TAG in event.get("tags", ()):
                    text = event["data"]["chunk"].text
                    if text:
                        yield text
                elif kind == "on_chain_end" and not event.get("parent_ids"):
                    output = event["data"].get("output")
        except Exception as exc:
            raise _model_error(exc) from exc
        if not isinstance(output, dict):
            raise ModelCallError("the chain ended without an output; nothing was memorised")
        yield _to_answer(question, output)

    def stream(self, question: str) -> Iterator[str | RAGAnswer]:
        """Sync twin of :meth:`astream` (runs it on :func:`stream_loop`)."""
        items: queue.Queue[tuple[str, Any]] = queue.Queue()

        async def pump() -> None:
            try:
                async for item in self.astream(question):
                    items.put(("item", item))
            except BaseException as exc:  # handed over to the caller's thread
                items.put(("error", exc))
            finally:
                items.put(("done", None))

        done = asyncio.run_coroutine_threadsafe(pump(), stream_loop())
        try:
            while True:
                kind, value = items.get()
                if kind == "item":
                    yield value
                elif kind == "error":
                    raise value
                else:
                    return
        finally:
            done.result()

    def history(self) -> Sequence[Any]:
        """What the memory currently holds for the prompt (empty without memory)."""
        if not self.chain.memory:
            return []
        variables = self.chain.memory.load_memory_variables({})
        return list(variables.get("chat_history") or [])
