"""The values the episodic index takes and returns.

* :class:`Episode`: one past turn to index (id, text, speaker, date, session).
* :class:`RecalledTurn`: a turn found for a question, with its score, citable by id.
* :class:`RecalledContext`: the text to inject into a prompt and the turn ids it cites.
* :class:`RecallConfig`: the ranking knobs (fusion weight, neighbours, feedback, dates…).

Example:
    >>> from datetime import datetime
    >>> Episode("D1:3", "I went to a support group.", "Caroline", datetime(2023, 5, 8)).session
    ''
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

__all__ = ["Episode", "RecallConfig", "RecalledContext", "RecalledTurn"]


@dataclass(frozen=True)
class Episode:
    """One past turn to index.

    Attributes:
        turn_id: the id it will be cited by (unique per user), e.g. ``"D1:3"`` or
            ``"s1:7"``; 1-256 characters without control characters.
        text: what was said.
        speaker: who said it (prefixed to the text: ``"Caroline: …"``), or ``""``.
        when: when it was said (the session date), or ``None``.
        session: the session it belongs to; neighbours are only looked for inside one.

    Example:
        >>> Episode("s1:1", "Bonjour", speaker="Alice").speaker
        'Alice'
    """

    turn_id: str
    text: str
    speaker: str = ""
    when: datetime | None = None
    session: str = ""


@dataclass(frozen=True)
class RecalledTurn:
    """A past turn recalled for a question, best first.

    Attributes:
        turn_id: the id to cite.
        text: what was said.
        speaker: who said it.
        when: when it was said, if known.
        session: its session.
        score: the fused ranking score (only comparable within one search).

    Example:
        >>> RecalledTurn("D1:3", "I went.", "Caroline", None, "1", 0.9).turn_id
        'D1:3'
    """

    turn_id: str
    text: str
    speaker: str
    when: datetime | None
    session: str
    score: float


@dataclass(frozen=True)
class RecalledContext:
    """What the memory would inject for a question.

    Attributes:
        text: the rendered excerpts, grouped by session in chronological order, each line
            citing its turn id; ``""`` when nothing was recalled.
        turn_ids: the cited turn ids, in relevance order.
        tokens: the tokens of ``text`` as counted by the index's token counter.

    Example:
        >>> RecalledContext("", (), 0).turn_ids
        ()
    """

    text: str
    turn_ids: tuple[str, ...]
    tokens: int


@dataclass(frozen=True)
class RecallConfig:
    """Ranking knobs of :class:`~memory_chains.recall.TurnIndex`.

    The defaults are neutral, chosen on no benchmark: BM25 with its textbook constants as
    the minor partner of dense similarity, pseudo-relevance feedback, a date boost, both
    neighbours alike, and no speaker boost, session nudge or content nudge (an application's
    speakers are the user and the assistant). :meth:`locomo` is the setting searched on
    LoCoMo: ``memory-chains eval locomo --dataset PATH/TO/locomo10.json --preset locomo``
    measures it beside the defaults, and ``scripts/locomo_knobs.py`` runs the search that
    chose it with its leave-one-conversation-out estimate (each conversation scored with
    the knobs that were best on the nine others).

    Attributes:
        lexical_weight: weight of normalised BM25 against normalised dense similarity
            (1.0 = BM25 only; forced to 1.0 without embeddings).
        neighbour_weight: share of the previous same-session turn's score that can lift a
            turn (the reply after the turn that names the topic); 0 turns neighbour
            smoothing off.
        next_factor: the next same-session turn's share is ``next_factor ×
            neighbour_weight``; a turn gains the larger of the two shares (1.0, the
            default: both neighbours alike). The LoCoMo preset takes 2.0: a turn's vector
            reads the end of the turn before it, so a matching next turn is stronger
            evidence for this one.
        feedback_docs: pseudo-relevance feedback: how many top turns lend their terms
            (0 disables feedback).
        feedback_terms: how many feedback terms are added to the lexical query.
        feedback_weight: weight of a feedback term relative to a question term.
        speaker_boost: bonus (times the largest score) for turns of a speaker the question
            names (0 by default; LoCoMo's questions are about one named person).
        date_boost: bonus (times the largest score) for turns dated on or near a day or
            month the question names.
        session_weight: nudge (times the spread of the scores, on the z-scored signal) for
            the turns of sessions whose ``session_top`` best turns score high: the session
            a question is about usually matches it more than once.
        session_top: how many of a session's best turns make its score.
        content_weight: nudge for turns that carry more rare content (the log of the summed
            idf of their distinct terms; see :meth:`EpisodeSet.content`), so that a
            substantive turn beats "Wow, that's great!" at equal relevance.
        bm25_k1: BM25 term saturation.
        bm25_b: BM25 length normalisation.

    Example:
        >>> RecallConfig(lexical_weight=1.0).neighbour_weight
        0.2
        >>> RecallConfig.locomo().speaker_boost
        1.0
    """

    lexical_weight: float = 0.3
    neighbour_weight: float = 0.2
    next_factor: float = 1.0
    feedback_docs: int = 3
    feedback_terms: int = 8
    feedback_weight: float = 0.3
    speaker_boost: float = 0.0
    date_boost: float = 0.3
    session_weight: float = 0.0
    session_top: int = 2
    content_weight: float = 0.0
    bm25_k1: float = 1.2
    bm25_b: float = 0.75

    @classmethod
    def locomo(cls) -> RecallConfig:
        """The knobs searched on LoCoMo's ten conversations (``scripts/locomo_knobs.py``).

        Fitted to that benchmark (questions about one named person, long sessions of
        small talk); measure before using it elsewhere.

        Example:
            >>> RecallConfig.locomo().next_factor
            2.0
        """
        return cls(
            lexical_weight=0.25,
            next_factor=2.0,
            speaker_boost=1.0,
            session_weight=0.015,
            content_weight=0.05,
            bm25_b=0.5,
        )
