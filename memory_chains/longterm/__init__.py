"""Long-term memory across sessions: a user profile and durable facts.

* :class:`UserProfile` / :class:`ProfileEntry`: preferences with confidence, source
  (stated beats inferred) and history, under ``("profile", user_id)``;
  :func:`profile_instructions` adapts the answer prompt to them.
* :class:`FactMemory` / :class:`Fact`: durable facts with validity periods; restatements
  merged, changes supersede the old value (kept, not recalled); embeddings stored in the
  documents under ``("facts", user_id)``.
* :class:`LongTermExtractor`: profile updates and facts of a turn in ONE model call;
  :class:`RuleLongTermExtractor`: a model-free fallback.
* :class:`TurnExtractor`: entities, relations, profile and facts of a turn in ONE call;
  :class:`MemoryUpdater` applies it to an entity memory and a long-term memory together
  (``observe``, ``aobserve``, ``observe_in_background``, ``flush``).
* :class:`LongTermMemory`: the facade (``observe``, ``observe_in_background``,
  ``context``, ``profile_block``, ``facts_block``).

The core imports no LangChain class (any LangChain chat model or embeddings can be
passed in).

Example:
    >>> from memory_chains.stores import InMemoryStore
    >>> from memory_chains.testing import HashEmbeddings
    >>> mem = LongTermMemory(InMemoryStore(), "alice", HashEmbeddings())
    >>> _ = mem.observe("Je suis débutante en yoga.", session_id="s1")
    >>> mem.profile().value("technical_level")
    'beginner'
"""

from __future__ import annotations

from memory_chains.longterm._combined import TurnExtraction, TurnExtractor
from memory_chains.longterm._extract import (
    Extractor,
    LongTermExtraction,
    LongTermExtractor,
    RuleLongTermExtractor,
)
from memory_chains.longterm._fact_merge import restates
from memory_chains.longterm._fact_types import Fact, FactCandidate, FactChanges
from memory_chains.longterm._facts import (
    DEFAULT_MERGE_THRESHOLD,
    DEFAULT_SUPERSEDE_THRESHOLD,
    GLOBAL_USER,
    FactMemory,
)
from memory_chains.longterm._memory import LongTermMemory
from memory_chains.longterm._observation import ObserveReport
from memory_chains.longterm._profile import (
    STANDARD_KEYS,
    ProfileEntry,
    UserProfile,
    merge_entry,
    profile_instructions,
)
from memory_chains.longterm._session import LongTermSession
from memory_chains.longterm._updater import MemoryUpdater, UpdateReport
from memory_chains.longterm._vectors import cosine

__all__ = [
    "DEFAULT_MERGE_THRESHOLD",
    "DEFAULT_SUPERSEDE_THRESHOLD",
    "GLOBAL_USER",
    "STANDARD_KEYS",
    "Extractor",
    "Fact",
    "FactCandidate",
    "FactChanges",
    "FactMemory",
    "LongTermExtraction",
    "LongTermExtractor",
    "LongTermMemory",
    "LongTermSession",
    "MemoryUpdater",
    "ObserveReport",
    "ProfileEntry",
    "RuleLongTermExtractor",
    "TurnExtraction",
    "TurnExtractor",
    "UpdateReport",
    "UserProfile",
    "cosine",
    "merge_entry",
    "profile_instructions",
    "restates",
]
