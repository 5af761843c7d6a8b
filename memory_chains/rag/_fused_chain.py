"""``ConversationalRetrievalChain`` that retrieves with every query of the rewrite.

The classic chain hands its retrieval step the standalone question only. With our
rewriter as the question generator, :class:`FusedRetrievalChain` asks it for the rewrite's
search queries (:meth:`~memory_chains.rag._question_chain.RewriteQuestionChain.queries_for`)
and fuses their results (:func:`memory_chains.rag.retrieve_queries`): a comparison retrieves
each compared thing. Everything else is the stock chain.
"""

from __future__ import annotations

from typing import Any

from langchain_classic.chains import ConversationalRetrievalChain
from langchain_core.callbacks import (
    AsyncCallbackManagerForChainRun,
    CallbackManagerForChainRun,
)
from langchain_core.documents import Document

from memory_chains.rag._fused import aretrieve_queries, retrieve_queries

__all__ = ["FusedRetrievalChain"]


class FusedRetrievalChain(ConversationalRetrievalChain):
    """A ``ConversationalRetrievalChain`` whose retrieval runs the rewrite's queries."""

    def _queries(self, question: str) -> tuple[str, ...]:
        queries_for = getattr(self.question_generator, "queries_for", None)
        return tuple(queries_for(question)) if callable(queries_for) else (question,)

    def _get_docs(
        self,
        question: str,
        inputs: dict[str, Any],
        *,
        run_manager: CallbackManagerForChainRun,
    ) -> list[Document]:
        config = {"callbacks": run_manager.get_child()}
        docs = retrieve_queries(self.retriever, self._queries(question), config)
        return self._reduce_tokens_below_limit(docs)

    async def _aget_docs(
        self,
        question: str,
        inputs: dict[str, Any],
        *,
        run_manager: AsyncCallbackManagerForChainRun,
    ) -> list[Document]:
        config = {"callbacks": run_manager.get_child()}
        docs = await aretrieve_queries(self.retriever, self._queries(question), config)
        return self._reduce_tokens_below_limit(docs)
