"""The entity names a rewriter gets by default, whatever chain or adapter drives it.

:func:`default_entity_source` is the one rule every entry point follows (``build_chain``,
``build_context_chain``, the LangChain 1.x ``Memories`` behind ``MemoryMiddleware``,
``build_lcel_chain``, ``history_aware_retriever`` and ``make_retrieval_tool``): when an
entity tracker is behind the memory (:func:`find_entity_tracker`), the rewriter gets
:func:`memory_chains.rewrite.entity_source` over it, i.e. the names ordered for the question
(the type it asks about first, then the most recent), including those that left the history
window. Each entry point turns it off with ``entity_hints=False``.

Example:
    >>> from memory_chains.entities import EntityTracker, RuleEntityExtractor
    >>> tracker = EntityTracker(RuleEntityExtractor(use_spacy=False))
    >>> _ = tracker.observe("Je regarde le Dell XPS 15.", "Bon choix.")
    >>> _ = tracker.observe("Vous livrez à Marseille ?", "Oui.")
    >>> default_entity_source(tracker)("Quelle est sa garantie ?")[0]
    'Dell XPS 15'
    >>> default_entity_source(object()) is None
    True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["default_entity_source", "find_entity_tracker"]


def _is_tracker(value: Any) -> bool:
    return callable(getattr(value, "entities", None))


def find_entity_tracker(memory: Any) -> Any:
    """The entity tracker behind ``memory``, or None when there is none.

    Looks through, breadth first: a tracker itself, an ``EntityMemory`` (its ``tracker``),
    the parts of a ``CombinedMemory`` (its ``memories``) and the sources of a context builder
    (a ``ContextMemory``'s ``builder`` or a ``ContextBuilder``: each source's ``target``).

    Example:
        >>> from memory_chains.context import ContextBuilder, EntitySource
        >>> from memory_chains.entities import EntityTracker, RuleEntityExtractor
        >>> tracker = EntityTracker(RuleEntityExtractor(use_spacy=False))
        >>> find_entity_tracker(ContextBuilder([EntitySource(tracker)], 100, len)) is tracker
        True
    """
    pending = [memory]
    seen: set[int] = set()
    while pending:
        item = pending.pop(0)
        if item is None or id(item) in seen:
            continue
        seen.add(id(item))
        tracker = getattr(item, "tracker", item)
        if _is_tracker(tracker):
            return tracker
        parts = getattr(item, "memories", None)
        if isinstance(parts, (list, tuple)):
            pending.extend(parts)
        builder = getattr(item, "builder", None)
        sources = getattr(item if builder is None else builder, "sources", None)
        if isinstance(sources, (list, tuple)):
            pending.extend(getattr(source, "target", None) for source in sources)
    return None


def default_entity_source(memory: Any) -> Callable[[str], list[str]] | None:
    """:func:`memory_chains.rewrite.entity_source` over the tracker behind ``memory``.

    Returns:
        A ``question -> names`` function, or None when no tracker is behind ``memory``.
    """
    tracker = find_entity_tracker(memory)
    if tracker is None:
        return None
    from memory_chains.rewrite import entity_source

    return entity_source(tracker)
