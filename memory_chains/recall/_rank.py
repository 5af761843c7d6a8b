"""Ranking one user's turns for a question: the pure core of the episodic index.

:func:`rank_scores` combines, over an :class:`~memory_chains.recall._state.EpisodeSet`:

1. BM25 on the question's terms and dense similarity (e5 ``query:`` vector of the
   question without the speakers' names, see :func:`dense_question`, against the turns'
   ``passage:`` vectors, each of the turn's text after the end of the turn before it, see
   :func:`~memory_chains.recall._index.passage_texts`), each z-scored, then mixed with
   ``lexical_weight``;
2. pseudo-relevance feedback: the rarest terms of the best turns are added to the lexical
   query at a reduced weight, and the fusion is redone;
3. a speaker boost: when the question names one of the speakers, that speaker's turns
   gain a little (off by default; the LoCoMo preset has it, its questions are about one
   person's life);
4. a date boost: when the question names a day or a month ("on 13 October 2023",
   "in June"), the turns of the sessions held then gain a little
   (:func:`~memory_chains.recall._dates.date_mask`);
5. neighbour smoothing inside a session: a turn is lifted by the turn before it (an answer
   often follows the turn that names the topic) or by the turn after it (whose vector
   reads the end of this one; ``next_factor`` weighs it more);
6. a session nudge (off by default): turns of a session whose two best turns score high
   gain a little (:func:`~memory_chains.recall._fusion.session_means`);
7. a content nudge (off by default): turns carrying more rare content gain a little
   (:meth:`~memory_chains.recall._state.EpisodeSet.content`), so that "Wow, that's
   great!" loses to "I signed up for a pottery class" when both match as well.

Without vectors (no embeddings) it is BM25 + feedback + speaker + date + neighbours +
session + content.

Example:
    >>> from collections import Counter
    >>> from memory_chains.recall._state import EpisodeSet
    >>> from memory_chains._terms import terms
    >>> from memory_chains.recall._types import Episode, RecallConfig
    >>> episodes = EpisodeSet()
    >>> for i, text in enumerate(["I adopted a puppy", "Work was busy", "We hiked a lot"]):
    ...     episodes.add(Episode(f"t{i}", text, "Ann", session="1"), Counter(terms(text)), None)
    >>> scores = rank_scores(episodes, "Did Ann adopt a puppy?", None, RecallConfig())
    >>> int(scores.argmax())
    0
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from memory_chains._folding import fold, fold_with_positions
from memory_chains._terms import terms
from memory_chains.recall._dates import date_mask
from memory_chains.recall._fusion import neighbour_smooth, nudge, session_means, top_k, zscore
from memory_chains.recall._state import EpisodeSet
from memory_chains.recall._types import RecallConfig

__all__ = ["dense_question", "feedback_terms", "rank_scores"]

FloatArray = npt.NDArray[np.float64]


def dense_question(question: str, speakers: Iterable[str]) -> str:
    """``question`` without the names of ``speakers`` (and their possessive), for the vector.

    A name weighs heavily in a small embedding of a short question, and it pulls towards
    the turns that *address* that person ("Thanks, Melanie!") rather than the turns they
    said; who said what is left to BM25 and the speaker boost, which read the whole
    question. Names match whatever their case and accents ("Elodie" for "Élodie", as the
    speaker boost does). A question that is nothing but names is returned unchanged.

    Example:
        >>> dense_question("What activities does Melanie partake in?", ["Melanie", "Caroline"])
        'What activities does partake in?'
        >>> dense_question("Where is Caroline's necklace from?", ["Caroline"])
        'Where is necklace from?'
        >>> dense_question("Où Elodie est-elle allée ?", ["Élodie"])
        'Où est-elle allée?'
        >>> dense_question("Melanie?", ["Melanie"])
        'Melanie?'
    """
    folded, where = fold_with_positions(question)
    cut = [False] * len(question)
    for name in speakers:
        name = fold(name)
        if name:
            pattern = rf"(?<!\w){re.escape(name)}(?:['’]s)?(?!\w)"
            for match in re.finditer(pattern, folded):
                for index in range(where[match.start()], where[match.end() - 1] + 1):
                    cut[index] = True
    stripped = "".join(" " if gone else char for char, gone in zip(question, cut, strict=True))
    stripped = re.sub(r"\s+([?!.,;:])", r"\1", re.sub(r"\s+", " ", stripped)).strip()
    return stripped if re.search(r"\w", stripped) else question


def feedback_terms(
    episodes: EpisodeSet, best: list[int], exclude: set[str], n_terms: int
) -> list[str]:
    """The ``n_terms`` terms of the ``best`` turns with the highest summed idf.

    Example:
        >>> from memory_chains.recall._types import Episode
        >>> episodes = EpisodeSet()
        >>> episodes.add(Episode("a", "x"), {"puppy": 1, "luna": 1}, None)
        >>> episodes.add(Episode("b", "y"), {"puppy": 1}, None)
        >>> feedback_terms(episodes, [0], {"puppy"}, 5)
        ['luna']
    """
    weights: dict[str, float] = {}
    for index in best:
        for term in episodes.term_counts[index]:
            if term not in exclude:
                weights[term] = weights.get(term, 0.0) + episodes.bm25.idf(term)
    ranked = sorted(weights.items(), key=lambda item: -item[1])  # stable: first seen wins ties
    return [term for term, _ in ranked[:n_terms]]


def _speaker_mask(episodes: EpisodeSet, question: str) -> FloatArray:
    """1.0 for the turns of speakers the question names (zeros if none or all are named)."""
    asked = f" {' '.join(terms(question))} "
    speakers = set(episodes.speakers())
    named = {s for s in speakers if f" {' '.join(terms(fold(s)))} " in asked}
    if not named or named == speakers:
        return np.zeros(len(episodes))
    return np.array([1.0 if e.speaker in named else 0.0 for e in episodes.episodes])


def rank_scores(
    episodes: EpisodeSet,
    question: str,
    query_vector: npt.NDArray[np.float32] | None,
    config: RecallConfig,
) -> FloatArray:
    """A score per turn (higher is better) for ``question``; see the module docstring."""
    n = len(episodes)
    if not n:
        return np.zeros(0, dtype=np.float64)
    matrix = episodes.matrix()
    dense = None
    if query_vector is not None and matrix is not None:
        dense = zscore((matrix @ query_vector.astype(np.float32)).astype(np.float64))
    weight = config.lexical_weight if dense is not None else 1.0

    def fuse(lexical: FloatArray) -> FloatArray:
        fused = weight * zscore(lexical)
        return fused + (1.0 - weight) * dense if dense is not None else fused

    query_terms = terms(question)
    scores = fuse(episodes.bm25.scores(query_terms))
    if config.feedback_docs > 0 and config.feedback_terms > 0:
        extra = feedback_terms(
            episodes, top_k(scores, config.feedback_docs), set(query_terms), config.feedback_terms
        )
        if extra:
            weights = dict.fromkeys(extra, config.feedback_weight)
            scores = fuse(episodes.bm25.scores(query_terms + extra, weights))
    if config.speaker_boost:
        spread = float(np.abs(scores).max()) or 1.0
        scores = scores + config.speaker_boost * spread * _speaker_mask(episodes, question)
    if config.date_boost:
        dated = date_mask([e.when for e in episodes.episodes], question)
        if dated.any():
            spread = float(np.abs(scores).max()) or 1.0
            scores = scores + config.date_boost * spread * dated
    if config.neighbour_weight:
        scores = scores - scores.min()  # non-negative, so a missing neighbour counts 0
        after = config.next_factor * config.neighbour_weight
        scores = neighbour_smooth(scores, episodes.sessions(), config.neighbour_weight, after)
    if config.session_weight:
        by_session = session_means(scores, episodes.sessions(), config.session_top)
        scores = nudge(scores, by_session, config.session_weight)
    if config.content_weight:
        scores = nudge(scores, episodes.content(), config.content_weight)
    return scores
