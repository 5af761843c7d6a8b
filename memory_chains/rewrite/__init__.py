"""Follow-up rewriting: turn a question that leans on the conversation into one that
stands alone, for retrieval and answering.

Core types: :class:`QueryRewriter` (sync :meth:`~QueryRewriter.rewrite` and async
:meth:`~QueryRewriter.arewrite`), its frozen result :class:`RewriteResult`, the pure
helpers :func:`analyse` (does a question need rewriting?), :func:`candidate_entities`,
:func:`fallback_rewrite`, :func:`fuse_rankings` (reciprocal rank fusion of the rankings
of several search queries) and :func:`entity_hints` / :func:`entity_source` (an entity
memory's names, ordered for a follow-up, for ``rewrite(entities=...)``).

Example:
    >>> rw = QueryRewriter(use_model=False)
    >>> history = [("user", "Je cherche un PC portable gamer."),
    ...            ("assistant", "Je vous conseille l'ASUS ROG Strix G15.")]
    >>> r = rw.rewrite("Et la carte graphique ?", history)
    >>> r.method, r.standalone
    ('fallback', 'Et la carte graphique ? (ASUS ROG Strix G15)')
"""

from __future__ import annotations

from memory_chains.rewrite._detect import Detection, analyse, detect_language
from memory_chains.rewrite._entities import candidate_entities
from memory_chains.rewrite._entity_hints import entity_hints, entity_source, question_type
from memory_chains.rewrite._fallback import fallback_rewrite
from memory_chains.rewrite._fusion import fuse_rankings
from memory_chains.rewrite._rewriter import QueryRewriter, RewriteResult

__all__ = [
    "Detection",
    "QueryRewriter",
    "RewriteResult",
    "analyse",
    "candidate_entities",
    "detect_language",
    "entity_hints",
    "entity_source",
    "fallback_rewrite",
    "fuse_rankings",
    "question_type",
]
