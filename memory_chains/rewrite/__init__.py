"""Follow-up rewriting: turn a question that leans on the conversation into one that
stands alone, for retrieval and answering.

Core types: :class:`QueryRewriter` (sync :meth:`~QueryRewriter.rewrite` and async
:meth:`~QueryRewriter.arewrite`; the model writes, code verifies, rules are the offline
fallback), its frozen result :class:`RewriteResult` (the standalone question and the search
queries retrieval runs), and the pure helpers :func:`analyse` (does a question need
rewriting?), :func:`candidate_entities` (the conversation's names), :func:`search_queries`
(one query per compared thing, the conversation when the rewrite is not trusted),
:func:`fuse_rankings` (reciprocal rank fusion of the rankings of several queries) and
:func:`entity_hints` / :func:`entity_source` (an entity memory's names, ordered for a
follow-up, for ``rewrite(entities=...)``).

Example:
    >>> rw = QueryRewriter(use_model=False)
    >>> history = [("user", "Je cherche le Dell XPS 15."),
    ...            ("assistant", "Nous l'avons en stock.")]
    >>> r = rw.rewrite("Quelle est sa garantie ?", history)
    >>> r.method, r.standalone
    ('rules', 'Quelle est la garantie du Dell XPS 15 ?')
"""

from __future__ import annotations

from memory_chains._ranking import fuse_rankings
from memory_chains.rewrite._detect import Detection, analyse, detect_language
from memory_chains.rewrite._entities import candidate_entities
from memory_chains.rewrite._entity_hints import entity_hints, entity_source, question_type
from memory_chains.rewrite._queries import compared_names, search_queries
from memory_chains.rewrite._rewriter import QueryRewriter, RewriteResult
from memory_chains.rewrite._rules import RULES
from memory_chains.rewrite._verify import read_question

__all__ = [
    "RULES",
    "Detection",
    "QueryRewriter",
    "RewriteResult",
    "analyse",
    "candidate_entities",
    "compared_names",
    "detect_language",
    "entity_hints",
    "entity_source",
    "fuse_rankings",
    "question_type",
    "read_question",
    "search_queries",
]
