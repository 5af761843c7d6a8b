"""Conversation metrics (seed 000's ``ConversationMetrics``): lengths, clarification
requests, topic coherence and how much of the injected memory the answers used.

* :class:`ConversationMetrics` measures a list of turns or a stored session;
* :class:`ConversationReport` is its immutable result (``as_dict()`` for JSON);
* :func:`is_clarification_request`, :func:`content_words` and :func:`memory_usage` are the
  pure measures it is built on.

The CLI exposes it as ``memory-chains metrics --store URL --user U --session S``.

Example:
    >>> from memory_chains.testing import HashEmbeddings, word_counter
    >>> metrics = ConversationMetrics(embeddings=HashEmbeddings(), token_counter=word_counter)
    >>> report = metrics.measure([("Quelle est votre politique de retour ?",
    ...                            "Vous avez 30 jours pour retourner un produit."),
    ...                           ("Et pour les produits électroniques ?",
    ...                            "Que voulez-vous savoir sur les produits électroniques ?")])
    >>> report.turns, report.clarification_requests
    (2, 1)
    >>> 0.0 <= report.topic_coherence <= 1.0
    True
"""

from __future__ import annotations

from memory_chains.metrics._clarify import is_clarification_request
from memory_chains.metrics._metrics import MEMORY_CONTEXT_KEY, ConversationMetrics, TurnLike
from memory_chains.metrics._report import ConversationReport
from memory_chains.metrics._usage import content_words, memory_usage

__all__ = [
    "MEMORY_CONTEXT_KEY",
    "ConversationMetrics",
    "ConversationReport",
    "TurnLike",
    "content_words",
    "is_clarification_request",
    "memory_usage",
]
