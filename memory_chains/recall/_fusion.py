"""Pure ranking helpers of the episodic index: normalisation, fusion, smoothing, nudges.

Every function takes and returns numpy arrays indexed like the index's turns, so each
step can be tested on tiny hand-made arrays.

Example:
    >>> import numpy as np
    >>> fused = fuse_scores(np.array([2.0, 0.0, 1.0]), np.array([0.1, 0.5, 0.9]), 0.5)
    >>> [round(float(x), 2) for x in fused]
    [0.5, 0.25, 0.75]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = [
    "fuse_scores",
    "neighbour_smooth",
    "normalise",
    "nudge",
    "reciprocal_rank_fusion",
    "session_means",
    "top_k",
    "zscore",
]

FloatArray = npt.NDArray[np.float64]


def zscore(scores: FloatArray) -> FloatArray:
    """Centre and scale ``scores`` (a constant array becomes zeros).

    Example:
        >>> zscore(np.array([1.0, 2.0, 3.0])).round(3).tolist()
        [-1.225, 0.0, 1.225]
    """
    scores = np.asarray(scores, dtype=np.float64)
    if not scores.size:
        return scores
    spread = float(scores.std())
    return (scores - scores.mean()) / spread if spread > 1e-12 else np.zeros_like(scores)


def normalise(scores: FloatArray) -> FloatArray:
    """Min-max scale ``scores`` to [0, 1]; a constant array becomes all zeros.

    Example:
        >>> normalise(np.array([1.0, 3.0, 2.0])).tolist()
        [0.0, 1.0, 0.5]
    """
    scores = np.asarray(scores, dtype=np.float64)
    if not scores.size:
        return scores
    low, high = float(scores.min()), float(scores.max())
    if high - low <= 1e-12:
        return np.zeros_like(scores)
    return (scores - low) / (high - low)


def fuse_scores(lexical: FloatArray, dense: FloatArray, lexical_weight: float) -> FloatArray:
    """Convex combination of the min-max normalised lexical and dense scores.

    Example:
        >>> fuse_scores(np.array([0.0, 4.0]), np.array([1.0, 0.0]), 1.0).tolist()
        [0.0, 1.0]
    """
    return lexical_weight * normalise(lexical) + (1.0 - lexical_weight) * normalise(dense)


def reciprocal_rank_fusion(rankings: Sequence[FloatArray], n: int, c: float = 60.0) -> FloatArray:
    """RRF: every ranking (an array of indices, best first) adds ``1 / (c + rank)``.

    Example:
        >>> reciprocal_rank_fusion([np.array([2, 0]), np.array([0, 1])], 3, c=1).round(3).tolist()
        [0.833, 0.333, 0.5]
    """
    fused = np.zeros(n, dtype=np.float64)
    for ranking in rankings:
        ranks = np.arange(1, len(ranking) + 1, dtype=np.float64)
        np.add.at(fused, np.asarray(ranking, dtype=np.int64), 1.0 / (c + ranks))
    return fused


def neighbour_smooth(
    scores: FloatArray,
    sessions: npt.NDArray[np.int64],
    weight: float,
    next_weight: float | None = None,
) -> FloatArray:
    """Lift each turn by the better of its same-session neighbours' weighted scores.

    A turn gains ``max(weight × previous turn's score, next_weight × next turn's score)``
    (``next_weight`` defaults to ``weight``). An answer often sits one turn after the
    question that names the topic ("Did you go?" / "Yes, last Friday"): the previous turn
    lifts such replies. When a turn's vector also reads the end of the turn before it (see
    :func:`~memory_chains.recall._index.passage_texts`), a strong next turn says the turn
    itself matches, hence a separate, larger ``next_weight``.

    Example:
        >>> s = neighbour_smooth(np.array([0.0, 1.0, 0.0, 0.0]), np.array([1, 1, 1, 2]), 0.5)
        >>> s.tolist()
        [0.5, 1.0, 0.5, 0.0]
        >>> neighbour_smooth(np.array([0.0, 1.0, 0.0]), np.array([1, 1, 1]), 0.2, 0.4).tolist()
        [0.4, 1.0, 0.2]
    """
    scores = np.asarray(scores, dtype=np.float64)
    after = weight if next_weight is None else next_weight
    if (weight == 0.0 and after == 0.0) or scores.size < 2:
        return scores.copy()
    same = sessions[1:] == sessions[:-1]
    previous = np.zeros_like(scores)
    following = np.zeros_like(scores)
    previous[1:] = np.where(same, scores[:-1], 0.0)
    following[:-1] = np.where(same, scores[1:], 0.0)
    return scores + np.maximum(weight * previous, after * following)


def session_means(scores: FloatArray, sessions: npt.NDArray[np.int64], top: int) -> FloatArray:
    """For each turn, the mean of the ``top`` best scores of its session.

    A session that holds two or three strong matches is more likely the one the question
    is about than a session with one lucky word; this spreads that evidence to all its
    turns.

    Example:
        >>> session_means(np.array([3.0, 1.0, 0.0, 2.0]), np.array([0, 0, 0, 1]), 2).tolist()
        [2.0, 2.0, 2.0, 2.0]
        >>> session_means(np.array([3.0, 0.0, 1.0]), np.array([0, 0, 1]), 1).tolist()
        [3.0, 3.0, 1.0]
    """
    scores = np.asarray(scores, dtype=np.float64)
    if not scores.size:
        return scores.copy()
    _, group = np.unique(sessions, return_inverse=True)
    order = np.lexsort((-scores, group))  # by session, best first within each
    grouped = group[order]
    starts = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]])
    rank = np.arange(order.size) - np.repeat(starts, np.diff(np.r_[starts, order.size]))
    best = order[rank < max(top, 1)]
    sums = np.bincount(group[best], weights=scores[best])
    return (sums / np.bincount(group[best]))[group]


def nudge(scores: FloatArray, signal: FloatArray, weight: float) -> FloatArray:
    """Add ``weight`` × the spread of ``scores`` × the z-scored ``signal``.

    The nudge is relative to the current spread, so a weight means the same whatever the
    scale of the fused scores; a constant signal changes nothing.

    Example:
        >>> nudge(np.array([0.0, 2.0]), np.array([1.0, 0.0]), 0.5).tolist()
        [1.0, 1.0]
        >>> nudge(np.array([0.0, 2.0]), np.array([4.0, 4.0]), 0.5).tolist()
        [0.0, 2.0]
    """
    scores = np.asarray(scores, dtype=np.float64)
    signal = np.asarray(signal, dtype=np.float64)
    if weight == 0.0 or scores.size < 2:
        return scores.copy()
    return scores + weight * float(scores.max() - scores.min()) * zscore(signal)


def top_k(scores: FloatArray, k: int) -> list[int]:
    """Indices of the ``k`` best scores, best first (ties: earlier index first).

    Example:
        >>> top_k(np.array([0.1, 0.9, 0.9, 0.3]), 3)
        [1, 2, 3]
    """
    if k <= 0 or not scores.size:
        return []
    order = np.lexsort((np.arange(scores.size), -np.asarray(scores)))
    return [int(i) for i in order[:k]]
