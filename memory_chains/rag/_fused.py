"""Retrieval with several queries, merged by reciprocal rank fusion.

A rewrite can come with several search queries
(:attr:`~memory_chains.rewrite.RewriteResult.queries`): one per compared thing, or the
conversation beside a rewrite that could not be checked. :func:`retrieve_queries` runs each of them
and fuses the rankings (:func:`~memory_chains.rewrite.fuse_rankings`), keeping as many
documents as one query returns, so that the answer step sees every compared thing's passage.

Example:
    >>> from langchain_core.retrievers import BaseRetriever
    >>> class ByWord(BaseRetriever):
    ...     docs: list[Document]
    ...     def _get_relevant_documents(self, query, *, run_manager):
    ...         hits = [d for d in self.docs if d.page_content.split()[0] in query]
    ...         return (hits + [d for d in self.docs if d not in hits])[:2]
    >>> docs = [Document(page_content=f"{n} : garantie") for n in ("Dell", "HP", "Lenovo")]
    >>> found = retrieve_queries(ByWord(docs=docs), ["Dell ou Lenovo ?", "Dell", "Lenovo"])
    >>> [d.page_content for d in found]
    ['Dell : garantie', 'Lenovo : garantie']
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from langchain_core.documents import Document

from memory_chains.rewrite import fuse_rankings

__all__ = ["aretrieve_queries", "fuse_documents", "retrieve_queries"]


def _key(doc: Document) -> tuple[str, str]:
    return (str(doc.metadata.get("source", "")), doc.page_content)


def fuse_documents(rankings: Sequence[Sequence[Document]]) -> list[Document]:
    """The documents of ``rankings`` fused by reciprocal rank, as many as the first holds.

    Example:
        >>> a, b = Document(page_content="a"), Document(page_content="b")
        >>> [d.page_content for d in fuse_documents([[a, b], [b, a], [b]])]
        ['b', 'a']
    """
    if not rankings:
        return []
    if len(rankings) == 1:
        return list(rankings[0])
    by_key: dict[tuple[str, str], Document] = {}
    for ranking in rankings:
        for doc in ranking:
            by_key.setdefault(_key(doc), doc)
    fused = fuse_rankings([[_key(d) for d in ranking] for ranking in rankings])
    return [by_key[key] for key in fused[: len(rankings[0])]]


def retrieve_queries(retriever: Any, queries: Sequence[str], config: Any = None) -> list[Document]:
    """Run every query on ``retriever`` (a retriever or a runnable str → documents) and fuse."""
    return fuse_documents([retriever.invoke(q, config=config) for q in queries])


async def aretrieve_queries(
    retriever: Any, queries: Sequence[str], config: Any = None
) -> list[Document]:
    """Async :func:`retrieve_queries` (the queries run concurrently)."""
    rankings = await asyncio.gather(*(retriever.ainvoke(q, config=config) for q in queries))
    return fuse_documents(rankings)
