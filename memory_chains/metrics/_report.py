"""The immutable result of :class:`~memory_chains.metrics.ConversationMetrics`.

Example:
    >>> r = ConversationReport(turns=1, user_chars_mean=5.0, assistant_chars_mean=9.0,
    ...     user_tokens_mean=2.0, assistant_tokens_mean=3.0)
    >>> r.as_dict()["turns"], r.topic_coherence
    (1, None)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["ConversationReport"]


@dataclass(frozen=True)
class ConversationReport:
    """Metrics of one conversation (seed 000's ``ConversationMetrics``, made precise).

    Attributes:
        turns: exchanges measured (one user message and one assistant answer each).
        user_chars_mean, assistant_chars_mean: mean message length in characters.
        user_tokens_mean, assistant_tokens_mean: mean message length in tokens, by the
            token counter the metrics were given.
        clarification_requests: assistant answers that ask the user to clarify (see
            :func:`~memory_chains.metrics.is_clarification_request`).
        clarification_turns: the 1-based positions of those answers.
        topic_coherence: mean cosine similarity between the embeddings of consecutive
            messages (user 1, assistant 1, user 2, …); ``None`` if not computed or fewer
            than two messages.
        min_coherence: the lowest of those similarities (the sharpest topic change).
        turns_with_memory: turns whose injected memory offered at least one content word
            the question did not contain.
        memory_usage: over those turns, the share of offered memory content words that
            the answers contain (sum used / sum offered, see
            :func:`~memory_chains.metrics.memory_usage`); ``None`` without such turns.
        answers_using_memory: share of those turns whose answer contains at least one
            offered memory word; ``None`` without such turns.

    Example:
        >>> ConversationReport(2, 10.0, 40.0, 3.0, 11.0, memory_usage=0.25).memory_usage
        0.25
    """

    turns: int
    user_chars_mean: float
    assistant_chars_mean: float
    user_tokens_mean: float
    assistant_tokens_mean: float
    clarification_requests: int = 0
    clarification_turns: tuple[int, ...] = ()
    topic_coherence: float | None = None
    min_coherence: float | None = None
    turns_with_memory: int = 0
    memory_usage: float | None = None
    answers_using_memory: float | None = None

    def as_dict(self) -> dict[str, Any]:
        """The report as a JSON-serialisable dict (tuples become lists).

        Example:
            >>> ConversationReport(1, 1.0, 1.0, 1.0, 1.0, clarification_turns=(1,)).as_dict()[
            ...     "clarification_turns"]
            [1]
        """
        data = asdict(self)
        data["clarification_turns"] = list(self.clarification_turns)
        return data
