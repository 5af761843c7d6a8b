"""Hybrid search: dense cosine and BM25 over the same chunks, fused by reciprocal rank.

A small multilingual embedding model places "la Box Fibre Onyx" near every other fibre box;
BM25 does not confuse a rare product name, a number or a code with its neighbours, but
misses paraphrases. Fusing the two rankings by reciprocal rank (textbook constants:
BM25 k1 = 1.2, b = 0.75, RRF k = 60; nothing tuned on a benchmark) keeps what each gets
right.

Example:
    >>> lexical = LexicalIndex(["Box Fibre Onyx : 8 Gb/s.", "Box Fibre Cobalt : 1 Gb/s."])
    >>> hybrid_ranking([0, 1], lexical.scores("débit de la Cobalt ?"), depth=10)
    [1, 0]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

from memory_chains._bm25 import BM25Index
from memory_chains._ranking import fuse_rankings
from memory_chains._terms import terms
from memory_chains.errors import InvalidInputError

__all__ = ["SEARCH_MODES", "LexicalIndex", "SearchMode", "check_mode", "hybrid_ranking"]

SearchMode = Literal["hybrid", "dense"]
SEARCH_MODES: tuple[SearchMode, ...] = ("hybrid", "dense")
"""``"dense"`` (cosine only, the default) or ``"hybrid"`` (dense and BM25 fused)."""

DEPTH = 50
"""How many of each ranking's best chunks the fusion considers (at least ``k``)."""


def check_mode(mode: object) -> SearchMode:
    """``mode`` when it is a search mode, else an :class:`InvalidInputError`.

    Example:
        >>> check_mode("dense")
        'dense'
    """
    for known in SEARCH_MODES:
        if mode == known:
            return known
    raise InvalidInputError(f"search mode must be one of {SEARCH_MODES}, got {mode!r}")


class LexicalIndex:
    """BM25 over chunk texts (folded, stop words removed, lightly stemmed).

    Example:
        >>> LexicalIndex(["Pilates le mardi.", "Yoga le jeudi."]).scores("yoga").tolist()[0]
        0.0
    """

    def __init__(self, texts: Sequence[str]) -> None:
        self._bm25 = BM25Index()
        for text in texts:
            self._bm25.add(terms(text))

    def __len__(self) -> int:
        return len(self._bm25)

    def scores(self, query: str) -> npt.NDArray[np.float64]:
        """The BM25 score of every chunk, in index order (0 when no term matches)."""
        return np.asarray(self._bm25.scores(terms(query)), dtype=np.float64)


def hybrid_ranking(
    dense: Sequence[int], lexical_scores: npt.NDArray[np.float64], depth: int = DEPTH
) -> list[int]:
    """Chunk positions by reciprocal rank fusion of the dense ranking (best first) and
    the BM25 ranking (chunks with a positive score), each cut at ``depth``.

    Example:
        >>> hybrid_ranking([2, 0, 1], np.array([0.0, 3.0, 0.0]), depth=3)
        [1, 2, 0]
    """
    lexical = [
        int(i) for i in np.argsort(-lexical_scores, kind="stable")[:depth] if lexical_scores[i] > 0
    ]
    return fuse_rankings([[int(i) for i in dense[:depth]], lexical])
