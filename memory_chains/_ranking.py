"""Reciprocal rank fusion of several rankings (one per search query, or per retriever)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

from memory_chains.errors import InvalidInputError

__all__ = ["fuse_rankings"]

T = TypeVar("T", bound=Hashable)


def fuse_rankings(rankings: Sequence[Sequence[T]], k: int = 60) -> list[T]:
    """Merge ranked id lists by reciprocal rank fusion: score(d) = Σ 1 / (k + rank).

    Ranks start at 1; ties keep the order in which ids were first seen.

    Raises:
        InvalidInputError: ``k`` is negative.

    Example:
        >>> fuse_rankings([["a", "b", "c"], ["b", "c", "a"], ["b", "a"]])
        ['b', 'a', 'c']
    """
    if k < 0:
        raise InvalidInputError(f"k must be zero or positive, got {k}")
    scores: dict[T, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    order = {item: i for i, item in enumerate(scores)}
    return sorted(scores, key=lambda item: (-scores[item], order[item]))
