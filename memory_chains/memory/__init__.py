"""Short-term conversational memory: buffer, window, token budget and running summary.

Two layers:

* LangChain-free cores (:class:`BufferCore`, :class:`WindowCore`, :class:`TokenBudgetCore`,
  :class:`SummaryCore`, all :class:`ShortTermMemory`) holding the logic;
* ``BaseMemory`` shells for LangChain classic chains (:class:`BufferMemory`,
  :class:`WindowMemory`, :class:`TokenBudgetMemory`, :class:`SummaryMemory`), imported
  lazily so that importing this package never imports ``langchain_classic``.

Example:
    >>> from memory_chains.memory import WindowCore
    >>> mem = WindowCore(k=2, user_id="alice", session_id="s1")
    >>> _ = mem.add_exchange("Bonjour", "Bonjour Alice !")
    >>> mem.render()
    'Human: Bonjour\\nAI: Bonjour Alice !'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory_chains._lazy import lazy_exports
from memory_chains.memory._core import (
    BufferCore,
    MemoryContext,
    MemoryStats,
    ShortTermMemory,
    TokenBudgetCore,
    WindowCore,
)
from memory_chains.memory._summarizer import LLMSummarizer, Summarizer
from memory_chains.memory._summary import CompactionResult, SummaryCore
from memory_chains.memory._summary_data import SummaryData, SummaryUpdate
from memory_chains.memory._text import approximate_tokens, default_token_counter, normalize_message

if TYPE_CHECKING:
    from memory_chains.memory._langchain import (
        BufferMemory,
        SummaryMemory,
        TokenBudgetMemory,
        WindowMemory,
    )

_SHELLS = ("BufferMemory", "SummaryMemory", "TokenBudgetMemory", "WindowMemory")

__all__ = [
    "BufferCore",
    "BufferMemory",
    "CompactionResult",
    "LLMSummarizer",
    "MemoryContext",
    "MemoryStats",
    "ShortTermMemory",
    "Summarizer",
    "SummaryCore",
    "SummaryData",
    "SummaryMemory",
    "SummaryUpdate",
    "TokenBudgetCore",
    "TokenBudgetMemory",
    "WindowCore",
    "WindowMemory",
    "approximate_tokens",
    "default_token_counter",
    "normalize_message",
]

__getattr__, __dir__ = lazy_exports(
    __name__, dict.fromkeys(_SHELLS, "memory_chains.memory._langchain"), globals()
)
