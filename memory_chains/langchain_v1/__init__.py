"""LangChain 1.x adapters over the same memories: agent middleware and an LCEL chain.

``BaseMemory`` and ``ConversationalRetrievalChain`` are deprecated for removal in LangChain
2.0. The memories of :mod:`memory_chains.memory`, :mod:`memory_chains.entities` and the
long-term memory plug into LangChain 1.x APIs here, with no second implementation:

* :class:`MemoryMiddleware` for ``langchain.agents.create_agent``: memory context before the
  model call, the exchange recorded after a successful run, optional two-step retrieval;
* :func:`make_retrieval_tool`: a retrieval tool that rewrites the model's query from memory;
* :func:`build_lcel_chain`: rewrite → retrieve → answer → record as one LCEL ``Runnable``
  returning ``answer``, ``context`` and ``rewritten_question``; :func:`history_aware_retriever`
  is its first half (our rewriter in place of ``create_history_aware_retriever``'s prompt);
* :class:`Memories` / :class:`MemoryView`: the read/record logic both adapters share.

Names are imported lazily so that ``import memory_chains`` never imports ``langchain.agents``.

Example:
    >>> from memory_chains.langchain_v1 import Memories
    >>> from memory_chains.memory import WindowCore
    >>> Memories(WindowCore()).view("Bonjour").turns
    ()
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory_chains._lazy import lazy_exports

if TYPE_CHECKING:
    from memory_chains.langchain_v1._chain import build_lcel_chain, history_aware_retriever
    from memory_chains.langchain_v1._memories import (
        ContextProvider,
        Memories,
        MemoryView,
    )
    from memory_chains.langchain_v1._middleware import MemoryMiddleware, MemoryState
    from memory_chains.langchain_v1._steps import ANSWER_INSTRUCTIONS
    from memory_chains.langchain_v1._tools import make_retrieval_tool

_EXPORTS = {
    "ANSWER_INSTRUCTIONS": "memory_chains.langchain_v1._steps",
    "ContextProvider": "memory_chains.langchain_v1._memories",
    "Memories": "memory_chains.langchain_v1._memories",
    "MemoryMiddleware": "memory_chains.langchain_v1._middleware",
    "MemoryState": "memory_chains.langchain_v1._middleware",
    "MemoryView": "memory_chains.langchain_v1._memories",
    "build_lcel_chain": "memory_chains.langchain_v1._chain",
    "history_aware_retriever": "memory_chains.langchain_v1._chain",
    "make_retrieval_tool": "memory_chains.langchain_v1._tools",
}

__all__ = [
    "ANSWER_INSTRUCTIONS",
    "ContextProvider",
    "Memories",
    "MemoryMiddleware",
    "MemoryState",
    "MemoryView",
    "build_lcel_chain",
    "history_aware_retriever",
    "make_retrieval_tool",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
