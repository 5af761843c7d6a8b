"""One user's indexed turns held in memory: :class:`EpisodeSet`.

It keeps, in insertion order, each turn's metadata, its term counts (the BM25 postings
are built from them) and its dense vector. It is the in-process cache of what the store
holds under ``("episodes", user_id, …)`` and what the ranking functions read.

Example:
    >>> episodes = EpisodeSet()
    >>> episodes.add(Episode("t1", "I paint sunsets", "Ann", session="1"), {"paint": 1}, None)
    >>> len(episodes), episodes.position("t1"), episodes.matrix() is None
    (1, 0, True)
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from memory_chains._bm25 import BM25Index
from memory_chains.recall._types import Episode, RecallConfig

__all__ = ["EpisodeSet"]


class EpisodeSet:
    """Turns of one user with their term counts and vectors (insertion order).

    Args:
        config: BM25 parameters are taken from it.

    Example:
        >>> EpisodeSet(RecallConfig(bm25_k1=1.5)).bm25.k1
        1.5
    """

    def __init__(self, config: RecallConfig | None = None) -> None:
        config = config or RecallConfig()
        self.episodes: list[Episode] = []
        self.term_counts: list[dict[str, int]] = []
        self.bm25 = BM25Index(k1=config.bm25_k1, b=config.bm25_b)
        self._vectors: list[npt.NDArray[np.float32] | None] = []
        self._positions: dict[str, int] = {}
        self._session_codes: dict[str, int] = {}
        self._codes: list[int] = []
        self._matrix: npt.NDArray[np.float32] | None = None
        self._content: npt.NDArray[np.float64] | None = None
        self._speakers: dict[str, None] = {}

    def __len__(self) -> int:
        return len(self.episodes)

    def __contains__(self, turn_id: object) -> bool:
        return turn_id in self._positions

    def position(self, turn_id: str) -> int:
        """Insertion index of ``turn_id`` (KeyError if absent)."""
        return self._positions[turn_id]

    def add(
        self,
        episode: Episode,
        term_counts: Mapping[str, int],
        vector: npt.NDArray[np.float32] | None,
    ) -> None:
        """Append one turn (the caller checked that its id is new)."""
        self._positions[episode.turn_id] = len(self.episodes)
        self.episodes.append(episode)
        counts = dict(term_counts)
        self.term_counts.append(counts)
        self.bm25.add(counts)
        self._vectors.append(vector)
        code = self._session_codes.setdefault(episode.session, len(self._session_codes))
        self._codes.append(code)
        if episode.speaker:
            self._speakers.setdefault(episode.speaker)
        self._matrix = None
        self._content = None

    def speakers(self) -> list[str]:
        """The distinct non-empty speakers, in order of first appearance.

        Example:
            >>> episodes = EpisodeSet()
            >>> for i, who in enumerate(["Bob", "", "Ann", "Bob"]):
            ...     episodes.add(Episode(str(i), "hi", who), {"hi": 1}, None)
            >>> episodes.speakers()
            ['Bob', 'Ann']
        """
        return list(self._speakers)

    def sessions(self) -> npt.NDArray[np.int64]:
        """Session code of every turn (equal codes = same session)."""
        return np.asarray(self._codes, dtype=np.int64)

    def matrix(self) -> npt.NDArray[np.float32] | None:
        """All vectors stacked (one row per turn), or ``None`` if any turn has none."""
        if self._matrix is None and self._vectors and all(v is not None for v in self._vectors):
            self._matrix = np.vstack(self._vectors).astype(np.float32)  # type: ignore[arg-type]
        return self._matrix

    def content(self) -> npt.NDArray[np.float64]:
        """How much rare content each turn carries: ``log(1 + Σ idf)`` over its distinct terms.

        A query-independent prior: "Wow, that's great!" carries little, "I signed up for a
        pottery class yesterday" a lot. Recomputed after an :meth:`add` (idf moves with
        the number of turns).

        Example:
            >>> episodes = EpisodeSet()
            >>> episodes.add(Episode("a", "Nice"), {"nice": 1}, None)
            >>> episodes.add(Episode("b", "Pottery class"), {"potteri": 1, "class": 1}, None)
            >>> bool(episodes.content()[1] > episodes.content()[0])
            True
        """
        if self._content is None:
            self._content = np.log1p(self.bm25.idf_sums())
        return self._content
