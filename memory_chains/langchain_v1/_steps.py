"""Steps the LangChain 1.x adapters share: checking the question, rewriting it from memory,
laying retrieved documents out for the answer prompt.

The document layout is the classic chain's (:data:`memory_chains.rag.DOCUMENT_PROMPT`,
most relevant document last, see :mod:`memory_chains.rag._stuff`), so that both paths
show the model the same text.

Example:
    >>> from langchain_core.documents import Document
    >>> docs = [Document("best", metadata={"source": "a.md"}),
    ...         Document("second", metadata={"source": "b.md"})]
    >>> print(format_documents(docs))
    [b.md] second
    <BLANKLINE>
    [a.md] best
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.documents import Document
from langchain_core.prompts import format_document

from memory_chains.langchain_v1._memories import MemoryView
from memory_chains.rag import DOCUMENT_PROMPT, QA_PROMPT, validate_question

__all__ = [
    "ANSWER_INSTRUCTIONS",
    "arewrite_queries",
    "check_question",
    "format_documents",
    "rewrite_queries",
]

ANSWER_INSTRUCTIONS: str = str(QA_PROMPT.messages[0].prompt.template)  # type: ignore[union-attr]
"""The classic chain's answer instructions (a good ``system_prompt`` for a RAG agent)."""


def check_question(value: Any) -> str:
    """The question, stripped; refuses non-strings, empty and over-long questions.

    Example:
        >>> check_question("  Et le samedi ?  ")
        'Et le samedi ?'
    """
    return validate_question(value, empty_hint="pass a non-empty 'input' or 'question'")


def _queries(result: Any) -> tuple[str, ...]:
    standalone = str(result.standalone)
    return tuple(getattr(result, "queries", ()) or (standalone,))


def rewrite_queries(rewriter: Any, view: MemoryView) -> tuple[str, ...]:
    """The search queries for ``view.question``: its standalone form first, then one per
    compared thing, or the conversation when the rewrite is not trusted.

    Only the question, with no rewriter call, without a rewriter or without history (as
    ``create_history_aware_retriever`` does).

    Example:
        >>> rewrite_queries(None, MemoryView("Et le samedi ?"))
        ('Et le samedi ?',)
    """
    if rewriter is None or not view.turns:
        return (view.question,)
    return _queries(rewriter.rewrite(view.question, view.turns, entities=view.entity_names))


async def arewrite_queries(rewriter: Any, view: MemoryView) -> tuple[str, ...]:
    """Async :func:`rewrite_queries` (the rewriter's own async model call)."""
    if rewriter is None or not view.turns:
        return (view.question,)
    result = await rewriter.arewrite(view.question, view.turns, entities=view.entity_names)
    return _queries(result)


def format_documents(docs: Sequence[Document]) -> str:
    """Documents as ``[source] text`` paragraphs, the most relevant one last."""
    return "\n\n".join(
        format_document(doc, DOCUMENT_PROMPT) for doc in reversed([_with_source(d) for d in docs])
    )


def _with_source(doc: Document) -> Document:
    if "source" in doc.metadata:
        return doc
    return Document(page_content=doc.page_content, metadata={**doc.metadata, "source": "?"})
