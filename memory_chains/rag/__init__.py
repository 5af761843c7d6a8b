"""Conversational RAG over a knowledge base, with memory and follow-up rewriting.

Core types: :class:`ConversationalRAG` (ask / stream), :class:`RAGAnswer`, and
:func:`build_chain`, which returns a correctly wired ``ConversationalRetrievalChain`` whose
retrieval runs every search query of the rewrite; :func:`retrieve_queries` /
:func:`aretrieve_queries` do that fused retrieval for any retriever.
"""

from memory_chains.rag._chain import ANSWER_TAG, ConversationalRAG, RAGAnswer, build_chain
from memory_chains.rag._fused import aretrieve_queries, fuse_documents, retrieve_queries
from memory_chains.rag._history import normalise_history, parse_history, render_history

__all__ = [
    "ANSWER_TAG",
    "ConversationalRAG",
    "RAGAnswer",
    "aretrieve_queries",
    "build_chain",
    "fuse_documents",
    "normalise_history",
    "parse_history",
    "render_history",
    "retrieve_queries",
]
