"""Conversational RAG over a knowledge base, with memory and follow-up rewriting.

Core types: :class:`ConversationalRAG` (ask / stream), :class:`RAGAnswer`, and
:func:`build_chain`, which returns a correctly wired ``ConversationalRetrievalChain`` whose
retrieval runs every search query of the rewrite; :func:`retrieve_queries` /
:func:`aretrieve_queries` do that fused retrieval for any retriever.
:func:`validate_question` and :data:`MAX_QUESTION_CHARS`, the limits every question meets.
:data:`QA_PROMPT` (built on :func:`answer_instructions`) and :data:`DOCUMENT_PROMPT`, the
answer prompt and the layout of a retrieved document, for a chain of your own;
:func:`default_entity_source`, the entity hints of the tracker behind a memory.
"""

from memory_chains.rag._chain import ANSWER_TAG, ConversationalRAG, RAGAnswer, build_chain
from memory_chains.rag._entity_source import default_entity_source, find_entity_tracker
from memory_chains.rag._fused import aretrieve_queries, fuse_documents, retrieve_queries
from memory_chains.rag._history import normalise_history, parse_history, render_history
from memory_chains.rag._prompts import DOCUMENT_PROMPT, QA_PROMPT, answer_instructions
from memory_chains.rag._validate import MAX_QUESTION_CHARS, validate_question

__all__ = [
    "ANSWER_TAG",
    "DOCUMENT_PROMPT",
    "MAX_QUESTION_CHARS",
    "QA_PROMPT",
    "ConversationalRAG",
    "RAGAnswer",
    "answer_instructions",
    "aretrieve_queries",
    "build_chain",
    "default_entity_source",
    "find_entity_tracker",
    "fuse_documents",
    "normalise_history",
    "parse_history",
    "render_history",
    "retrieve_queries",
    "validate_question",
]
