"""A retrieval tool for agents that rewrites the model's query from memory before searching.

Agent models often pass the user's follow-up to a search tool as it is ("Et pour le
samedi ?"); :func:`make_retrieval_tool` gives the tool our rewriter and the conversation's
memory, so the search runs on the standalone question. The tool returns the documents as
text for the model and as the tool message's ``artifact`` for the application.
"""

from __future__ import annotations

from typing import Any

from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool, StructuredTool

from memory_chains.langchain_v1._memories import as_memories
from memory_chains.langchain_v1._steps import (
    arewrite_queries,
    check_question,
    format_documents,
    rewrite_queries,
)
from memory_chains.rag import aretrieve_queries, retrieve_queries

__all__ = ["make_retrieval_tool"]

_DESCRIPTION = (
    "Search the knowledge base. Pass the user's question; follow-up questions are completed "
    "from the conversation before searching."
)


def make_retrieval_tool(
    retriever: BaseRetriever | Runnable[str, list[Document]],
    rewriter: Any = None,
    memory: Any = None,
    *,
    name: str = "search_knowledge_base",
    description: str = _DESCRIPTION,
) -> BaseTool:
    """A tool ``query -> documents`` whose query is first rewritten from memory.

    Args:
        retriever: any retriever or runnable str → documents.
        rewriter: a ``QueryRewriter`` (None: the query is used as given).
        memory: where the history comes from: a short-term memory, a
            :class:`~memory_chains.langchain_v1.Memories` or a
            :class:`~memory_chains.langchain_v1.MemoryMiddleware` (its memories).
        name, description: what the model sees.

    Returns:
        A ``StructuredTool`` (sync and async) with ``response_format="content_and_artifact"``:
        the content is the documents as ``[source] text`` paragraphs, the artifact the
        documents.

    Example:
        >>> from langchain_core.runnables import RunnableLambda
        >>> from memory_chains.memory import WindowCore
        >>> from memory_chains.rewrite import QueryRewriter
        >>> memory = WindowCore()
        >>> _ = memory.add_exchange("Parle-moi de l'ASUS ROG Strix G15.", "Très bon choix.")
        >>> echo = RunnableLambda(lambda q: [Document(q, metadata={"source": "kb.md"})])
        >>> tool = make_retrieval_tool(echo, QueryRewriter(use_model=False), memory)
        >>> tool.invoke({"query": "Et la carte graphique ?"})
        "[kb.md] Et la carte graphique de l'ASUS ROG Strix G15 ?"
    """
    memories = as_memories(memory)

    def search(query: str) -> tuple[str, list[Document]]:
        view = memories.view(check_question(query))
        docs = retrieve_queries(retriever, rewrite_queries(rewriter, view))
        return format_documents(docs), docs

    async def asearch(query: str) -> tuple[str, list[Document]]:
        view = await memories.aview(check_question(query))
        docs = await aretrieve_queries(retriever, await arewrite_queries(rewriter, view))
        return format_documents(docs), docs

    return StructuredTool.from_function(
        func=search,
        coroutine=asearch,
        name=name,
        description=description,
        response_format="content_and_artifact",
    )
