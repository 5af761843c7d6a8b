"""Entity memory: typed entities with attributes and relations, and reference resolution.

Core types (no LangChain dependency):

* :class:`EntityTracker`: one user's entity memory (observe turns, priorities, context
  block under a token budget, ``resolve``, ``related``, ``salient``, JSON export);
* :class:`LLMEntityExtractor` (one model call per turn) and :class:`RuleEntityExtractor`
  (no model call), with :class:`NameTyper` for names their sentence says nothing about;
* values: :class:`Entity`, :class:`Relation`, :class:`AttributeChange`,
  :class:`EntityState`, :class:`Extraction`, :class:`Mention`, :class:`TurnReport`;
* type presets: :data:`DEFAULT_TYPES`, :data:`ECOMMERCE_TYPES`, :data:`SUPPORT_TYPES`,
  :data:`HR_TYPES`, :data:`TRAVEL_TYPES`, :data:`PRESETS`.

:class:`EntityMemory` is the LangChain ``BaseMemory`` adapter; it is imported lazily so
that the core never imports ``langchain_classic``.

Example:
    >>> from memory_chains.entities import EntityTracker, RuleEntityExtractor
    >>> t = EntityTracker(RuleEntityExtractor(use_spacy=False))
    >>> _ = t.observe("Je cherche le Dell XPS 15", "Il coûte 1599 €.")
    >>> t.resolve("sa").name
    'Dell XPS 15'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memory_chains._json import parse_json_object
from memory_chains.entities._context import PriorityWeights, approx_tokens
from memory_chains.entities._fold import fold, is_alias
from memory_chains.entities._llm import ExtractionPrompt, LLMEntityExtractor
from memory_chains.entities._names import NameTyper, shared_name_typer
from memory_chains.entities._names import load_examples as load_name_examples
from memory_chains.entities._prompt import TYPE_HINTS
from memory_chains.entities._rules import RuleEntityExtractor
from memory_chains.entities._state import USER_ID, EntityState
from memory_chains.entities._tracker import EntityExtractor, EntityTracker, TurnReport, turn_text
from memory_chains.entities._types import (
    BUILTIN_RELATIONS,
    DEFAULT_TYPES,
    ECOMMERCE_TYPES,
    HR_TYPES,
    PRESETS,
    SUPPORT_TYPES,
    TRAVEL_TYPES,
    AttributeChange,
    Entity,
    Extraction,
    Mention,
    Relation,
    RelationMention,
    resolve_types,
)

if TYPE_CHECKING:
    from memory_chains.entities._langchain import EntityMemory

__all__ = [
    "BUILTIN_RELATIONS",
    "DEFAULT_TYPES",
    "ECOMMERCE_TYPES",
    "HR_TYPES",
    "PRESETS",
    "SUPPORT_TYPES",
    "TRAVEL_TYPES",
    "TYPE_HINTS",
    "USER_ID",
    "AttributeChange",
    "Entity",
    "EntityExtractor",
    "EntityMemory",
    "EntityState",
    "EntityTracker",
    "Extraction",
    "ExtractionPrompt",
    "LLMEntityExtractor",
    "Mention",
    "NameTyper",
    "PriorityWeights",
    "Relation",
    "RelationMention",
    "RuleEntityExtractor",
    "TurnReport",
    "approx_tokens",
    "fold",
    "is_alias",
    "load_name_examples",
    "parse_json_object",
    "resolve_types",
    "shared_name_typer",
    "turn_text",
]


def __getattr__(name: str) -> Any:
    if name == "EntityMemory":
        from memory_chains.entities._langchain import EntityMemory

        return EntityMemory
    raise AttributeError(f"module 'memory_chains.entities' has no attribute {name!r}")
