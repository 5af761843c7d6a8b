"""A disk cache of embeddings for re-running evaluations: :class:`CachedEmbeddings`.

Embedding LoCoMo's ~5,900 turns takes minutes on a loaded 2-core machine; re-running the
evaluation after a ranking change should not pay it again. Vectors are keyed by
``sha256(side + text)`` (``side`` = query or passage, the e5 asymmetry) and saved as a
NumPy ``.npz`` (string keys + float32 matrix, loaded with ``allow_pickle=False``).
Only for evaluations: the library's memories never cache vectors outside their store.

Example:
    >>> from memory_chains.testing import HashEmbeddings
    >>> cached = CachedEmbeddings(HashEmbeddings(dim=8))
    >>> first = cached.embed_documents(["a b", "a b"])
    >>> cached.embed_query("a b") == first[0], (cached.hits, cached.misses)
    (True, (1, 2))
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
from langchain_core.embeddings import Embeddings

__all__ = ["CachedEmbeddings", "cache_key"]


def cache_key(text: str, is_query: bool) -> str:
    """The cache key of ``text`` on the query or passage side.

    Example:
        >>> cache_key("x", True) != cache_key("x", False)
        True
    """
    side = "query" if is_query else "passage"
    return hashlib.sha256(f"{side}\x00{text}".encode()).hexdigest()


class CachedEmbeddings(Embeddings):
    """Wrap ``inner`` embeddings with an in-memory cache that can be saved to ``path``.

    Args:
        inner: the embeddings that compute missing vectors.
        path: an ``.npz`` file to load now (if it exists) and to :meth:`save` to.

    Example:
        >>> from memory_chains.testing import HashEmbeddings
        >>> CachedEmbeddings(HashEmbeddings(), None).hits
        0
    """

    def __init__(self, inner: Embeddings, path: str | os.PathLike[str] | None = None) -> None:
        self.inner = inner
        self.path = Path(path) if path is not None else None
        self.vectors: dict[str, list[float]] = {}
        self.hits = 0
        self.misses = 0
        self._saved = 0
        if self.path is not None and self.path.is_file():
            with np.load(self.path, allow_pickle=False) as data:
                for key, row in zip(data["keys"].tolist(), data["vectors"], strict=True):
                    self.vectors[str(key)] = row.astype(float).tolist()
            self._saved = len(self.vectors)

    def _lookup(self, texts: list[str], is_query: bool) -> list[list[float]]:
        keys = [cache_key(text, is_query) for text in texts]
        missing = list(dict.fromkeys(k for k in keys if k not in self.vectors))
        self.hits += len(keys) - len(missing)
        self.misses += len(missing)
        if missing:
            todo = {k: t for k, t in zip(keys, texts, strict=True) if k in set(missing)}
            order = list(todo)
            if is_query:
                computed = [self.inner.embed_query(todo[k]) for k in order]
            else:
                computed = self.inner.embed_documents([todo[k] for k in order])
            self.vectors.update(zip(order, computed, strict=True))
        return [self.vectors[k] for k in keys]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed stored texts, from the cache when possible."""
        return self._lookup(list(texts), is_query=False)

    def embed_query(self, text: str) -> list[float]:
        """Embed a query, from the cache when possible."""
        return self._lookup([text], is_query=True)[0]

    def save(self) -> None:
        """Write the cache to ``path`` atomically (no-op without a path or new vectors)."""
        if self.path is None or len(self.vectors) == self._saved:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        keys = np.array(list(self.vectors), dtype="<U64")
        matrix = np.asarray(list(self.vectors.values()), dtype=np.float32)
        tmp = self.path.with_name(f"{self.path.stem}.{os.getpid()}.tmp.npz")
        np.savez(tmp, keys=keys, vectors=matrix)
        os.replace(tmp, self.path)
        self._saved = len(self.vectors)
