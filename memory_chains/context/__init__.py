"""The context builder: one token budget for everything a prompt gets from memory.

Core types (no LangChain classic dependency):

* :class:`ContextBuilder` assembles named :class:`ContextBlock` objects from
  :class:`ContextSource` objects under one token budget, shrinking or dropping the
  lowest-priority blocks first; its result is an immutable :class:`BuiltContext` (blocks
  kept, shrunk and dropped, tokens per block, ``render()``);
* :class:`MemorySource`: a block of any memory of the protocol
  (:class:`~memory_chains.protocol.ConversationMemory`), :func:`memory_sources` for all of
  a memory's blocks, and the named ones :class:`RecentTurnsSource` / :class:`SummarySource`
  (:func:`short_term_sources`), :class:`EntitySource`, :class:`ProfileSource` /
  :class:`FactsSource` (:func:`long_term_sources`), :class:`RecallSource`; besides
  memories, :class:`DocumentsSource` and :class:`TextSource`;
* topic changes: :class:`TopicTracker`, :func:`detect_topic_change`,
  :func:`history_since_topic_start`, and the builder's :class:`TopicPolicy`.

:class:`ContextMemory` (a LangChain ``BaseMemory``), :data:`CONTEXT_QA_PROMPT` and
:func:`build_context_chain` are imported lazily so that importing this package never
imports ``langchain_classic``.

Example:
    >>> from memory_chains.context import ContextBuilder, short_term_sources
    >>> from memory_chains.memory import WindowCore
    >>> from memory_chains.testing import word_counter
    >>> mem = WindowCore(k=4)
    >>> _ = mem.add_exchange("Quelle est votre politique de retour ?", "30 jours.")
    >>> builder = ContextBuilder(short_term_sources(mem), 100, word_counter, topic=True)
    >>> builder.build("Et pour les produits électroniques ?").kept
    ('recent',)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory_chains._lazy import lazy_exports
from memory_chains.context._allocate import allocate
from memory_chains.context._block import ContextBlock, Shrink, fit
from memory_chains.context._builder import (
    BlockReport,
    BlockStatus,
    BuiltContext,
    ContextBuilder,
    ContextSource,
    TopicAction,
    TopicPolicy,
    recording_sources,
)
from memory_chains.context._documents import DocumentsSource, TextSource
from memory_chains.context._sources import (
    BLOCK_LAYOUT,
    EntitySource,
    FactsSource,
    MemorySource,
    ProfileSource,
    RecallSource,
    RecentTurnsSource,
    SummarySource,
    long_term_sources,
    memory_sources,
    short_term_sources,
)
from memory_chains.context._topic import (
    DEFAULT_SIMILARITY_THRESHOLD,
    TopicChange,
    TopicTracker,
    detect_topic_change,
    history_since_topic_start,
    similarity_threshold_of,
    to_exchanges,
)

if TYPE_CHECKING:
    from memory_chains.context._langchain import (
        CONTEXT_QA_PROMPT,
        ContextMemory,
        build_context_chain,
    )

_LAZY = ("CONTEXT_QA_PROMPT", "ContextMemory", "build_context_chain")

__all__ = [
    "BLOCK_LAYOUT",
    "CONTEXT_QA_PROMPT",
    "DEFAULT_SIMILARITY_THRESHOLD",
    "BlockReport",
    "BlockStatus",
    "BuiltContext",
    "ContextBlock",
    "ContextBuilder",
    "ContextMemory",
    "ContextSource",
    "DocumentsSource",
    "EntitySource",
    "FactsSource",
    "MemorySource",
    "ProfileSource",
    "RecallSource",
    "RecentTurnsSource",
    "Shrink",
    "SummarySource",
    "TextSource",
    "TopicAction",
    "TopicChange",
    "TopicPolicy",
    "TopicTracker",
    "allocate",
    "build_context_chain",
    "detect_topic_change",
    "fit",
    "history_since_topic_start",
    "long_term_sources",
    "memory_sources",
    "recording_sources",
    "short_term_sources",
    "similarity_threshold_of",
    "to_exchanges",
]

__getattr__, __dir__ = lazy_exports(
    __name__, dict.fromkeys(_LAZY, "memory_chains.context._langchain"), globals()
)
