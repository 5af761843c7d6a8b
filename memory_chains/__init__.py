"""memory_chains: conversational memory for LangChain applications, offline by default.

Public names are imported lazily so that ``import memory_chains`` and the CLI's ``--help``
stay fast; see ``__all__`` for what is exported.
"""

from __future__ import annotations

from memory_chains._lazy import lazy_exports

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    "BufferMemory": "memory_chains.memory",
    "ChatLlamaCpp": "memory_chains.providers",
    "ContextBuilder": "memory_chains.context",
    "ContextMemory": "memory_chains.context",
    "ConversationMemory": "memory_chains.protocol",
    "ConversationalRAG": "memory_chains.rag",
    "ConversationMetrics": "memory_chains.metrics",
    "ForgetResult": "memory_chains.stores",
    "InMemoryStore": "memory_chains.stores",
    "PIIMasker": "memory_chains.privacy",
    "ResilientStore": "memory_chains.stores",
    "SQLiteStore": "memory_chains.stores",
    "Session": "memory_chains.sessions",
    "SessionManager": "memory_chains.sessions",
    "E5Embeddings": "memory_chains.providers",
    "EntityMemory": "memory_chains.entities",
    "EntityTracker": "memory_chains.entities",
    "KnowledgeBase": "memory_chains.knowledge",
    "LLMEntityExtractor": "memory_chains.entities",
    "FactMemory": "memory_chains.longterm",
    "LongTermMemory": "memory_chains.longterm",
    "MemoryUpdater": "memory_chains.longterm",
    "TurnExtractor": "memory_chains.longterm",
    "UserProfile": "memory_chains.longterm",
    "MemoryBase": "memory_chains.protocol",
    "MemoryBlock": "memory_chains.protocol",
    "MemoryChainsError": "memory_chains.errors",
    "MemoryMiddleware": "memory_chains.langchain_v1",
    "QueryRewriter": "memory_chains.rewrite",
    "RewriteResult": "memory_chains.rewrite",
    "RAGAnswer": "memory_chains.rag",
    "RuleEntityExtractor": "memory_chains.entities",
    "Settings": "memory_chains.config",
    "SummaryMemory": "memory_chains.memory",
    "TopicTracker": "memory_chains.context",
    "TurnIndex": "memory_chains.recall",
    "TokenBudgetMemory": "memory_chains.memory",
    "WindowMemory": "memory_chains.memory",
    "build_chain": "memory_chains.rag",
    "build_lcel_chain": "memory_chains.langchain_v1",
    "describe_providers": "memory_chains.providers",
    "export_user": "memory_chains.stores",
    "forget_session": "memory_chains.stores",
    "forget_user": "memory_chains.stores",
    "get_chat_model": "memory_chains.providers",
    "get_embeddings": "memory_chains.providers",
    "get_token_counter": "memory_chains.providers",
    "history_aware_retriever": "memory_chains.langchain_v1",
    "load_settings": "memory_chains.config",
    "make_retrieval_tool": "memory_chains.langchain_v1",
    "open_store": "memory_chains.stores",
    "sample_kb_path": "memory_chains.knowledge",
}

# Ruff's RUF022 order: constants, classes, functions, each alphabetical.
__all__ = sorted(_EXPORTS, key=lambda n: (0 if n.isupper() else 1 if n[0].isupper() else 2, n))


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
