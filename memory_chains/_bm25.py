"""A small incremental BM25 (Okapi) index in pure Python + numpy.

:class:`BM25Index` holds the postings of documents added one by one (term → list of
``(document index, term frequency)``) and scores a query against all of them at once.
Documents are given as term lists (see :func:`memory_chains._terms.terms`), so the
index knows nothing about languages.

Example:
    >>> index = BM25Index()
    >>> index.add(["paint", "sunset"]); index.add(["camp", "forest"]); index.add(["paint"])
    >>> [round(float(s), 3) for s in index.scores(["paint", "sunset"])]
    [1.341, 0.0, 0.562]
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["BM25Index"]


class BM25Index:
    """Okapi BM25 over documents added incrementally.

    Args:
        k1: term-frequency saturation (1.2 is the usual default).
        b: length normalisation (0 = none, 1 = full).

    Example:
        >>> index = BM25Index(k1=1.2, b=0.75)
        >>> index.add(["a", "b"])
        >>> len(index), index.document_frequency("a")
        (1, 1)
    """

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        # term -> (document indices, term frequencies), as arrays numpy reads in one copy
        self._postings: dict[str, tuple[array[int], array[float]]] = {}
        self._lengths: list[int] = []
        # (term id, document) of every posting, for idf_sums() in numpy
        self._term_ids: dict[str, int] = {}
        self._flat_terms = array("q")
        self._flat_docs = array("q")

    def __len__(self) -> int:
        return len(self._lengths)

    def add(self, terms: Iterable[str] | Mapping[str, int]) -> None:
        """Append one document, given as its terms or as ``{term: frequency}``."""
        counts = Counter(terms) if not isinstance(terms, Mapping) else Counter(dict(terms))
        index = len(self._lengths)
        for term, tf in counts.items():
            postings = self._postings.get(term)
            if postings is None:
                postings = self._postings[term] = (array("q"), array("d"))
            postings[0].append(index)
            postings[1].append(float(tf))
            self._flat_terms.append(self._term_ids.setdefault(term, len(self._term_ids)))
            self._flat_docs.append(index)
        self._lengths.append(int(sum(counts.values())))

    def document_frequency(self, term: str) -> int:
        """Number of documents containing ``term``."""
        postings = self._postings.get(term)
        return len(postings[0]) if postings is not None else 0

    def idf(self, term: str) -> float:
        """BM25+ style non-negative idf: ``log(1 + (N - df + 0.5) / (df + 0.5))``."""
        return float(_idf(len(self._lengths), np.float64(self.document_frequency(term))))

    def idf_sums(self) -> npt.NDArray[np.float64]:
        """Per document, the summed :meth:`idf` of its distinct terms (in numpy).

        Example:
            >>> index = BM25Index()
            >>> index.add(["paint", "sunset"]); index.add(["paint"])
            >>> [round(float(x), 3) for x in index.idf_sums()]
            [0.875, 0.182]
        """
        n = len(self._lengths)
        flat_terms = np.array(self._flat_terms, dtype=np.int64)
        df = np.bincount(flat_terms, minlength=len(self._term_ids)).astype(np.float64)
        weights = _idf(n, df)[flat_terms]
        docs = np.array(self._flat_docs, dtype=np.int64)
        return np.bincount(docs, weights=weights, minlength=n).astype(np.float64)

    def scores(
        self, query_terms: Iterable[str], weights: Mapping[str, float] | None = None
    ) -> npt.NDArray[np.float64]:
        """BM25 score of every document (in insertion order) for ``query_terms``.

        Args:
            query_terms: the query's terms; a repeated term counts once.
            weights: optional per-term multipliers (e.g. feedback terms below 1).
        """
        n = len(self._lengths)
        out = np.zeros(n, dtype=np.float64)
        if not n:
            return out
        lengths = np.asarray(self._lengths, dtype=np.float64)
        norm = self.k1 * (1.0 - self.b + self.b * lengths / max(lengths.mean(), 1e-9))
        for term in dict.fromkeys(query_terms):
            postings = self._postings.get(term)
            if postings is None:
                continue
            weight = self.idf(term) * (weights.get(term, 1.0) if weights else 1.0)
            docs = np.array(postings[0], dtype=np.int64)
            tfs = np.array(postings[1], dtype=np.float64)
            out[docs] += weight * tfs * (self.k1 + 1.0) / (tfs + norm[docs])
        return out


def _idf(n: int, df: Any) -> Any:
    """The idf of :class:`BM25Index` for document frequencies ``df`` (a number or an array)."""
    return np.log1p((n - df + 0.5) / (df + 0.5))
