"""Embedding texts into unit vectors, and naming the embeddings that made them.

Cosine similarity is an inner product between L2-normalised vectors, so every vector that
enters or queries an index goes through :func:`normalize` here. Core names:
:func:`embed_passages`, :func:`embed_query`, :func:`embeddings_identity` and
:class:`NormalizedEmbeddings` (the wrapper handed to LangChain's FAISS vectorstore).

Example:
    >>> from memory_chains.testing import HashEmbeddings
    >>> vectors = embed_passages(HashEmbeddings(dim=8), ["un", "deux"], progress=False)
    >>> vectors.shape, round(float((vectors[0] ** 2).sum()), 3)
    ((2, 8), 1.0)
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from memory_chains.errors import MalformedOutputError, ModelCallError

__all__ = [
    "NormalizedEmbeddings",
    "aembed_query",
    "embed_passages",
    "embed_query",
    "embeddings_identity",
    "normalize",
]

_BATCH = 32
_MODEL_ATTRIBUTES = ("model_name", "model", "model_id", "deployment")


def normalize(vectors: np.ndarray) -> np.ndarray:
    """Return float32 copies of the rows scaled to unit length (zero rows stay zero)."""
    array = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(array, axis=-1, keepdims=True)
    return np.divide(array, norms, out=np.zeros_like(array), where=norms > 0)


def _as_matrix(raw: Any, expected_rows: int, what: str) -> np.ndarray:
    try:
        matrix = np.asarray(raw, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise MalformedOutputError(
            f"the embeddings returned {what} that are not numbers", raw=repr(raw)[:200]
        ) from exc
    if matrix.ndim != 2 or matrix.shape[0] != expected_rows or matrix.shape[1] == 0:
        raise MalformedOutputError(
            f"the embeddings returned {what} of shape {matrix.shape}, expected "
            f"({expected_rows}, dimension)",
            raw=repr(raw)[:200],
        )
    if not np.isfinite(matrix).all():
        raise MalformedOutputError(f"the embeddings returned {what} with NaN or infinity")
    return matrix


def embed_passages(
    embeddings: Embeddings, texts: Sequence[str], *, progress: bool = True
) -> np.ndarray:
    """Embed ``texts`` in batches, with a progress bar, into unit vectors.

    The bar goes to stderr and is shown only when ``progress`` is true and stderr is a
    terminal.

    Raises:
        ModelCallError: the embeddings raised.
        MalformedOutputError: they returned something that is not one vector per text, all
            of the same dimension and finite.
    """
    from tqdm import tqdm

    show = progress and sys.stderr.isatty()
    parts: list[np.ndarray] = []
    with tqdm(
        total=len(texts), desc="Embedding", unit="chunk", file=sys.stderr, disable=not show
    ) as bar:
        for start in range(0, len(texts), _BATCH):
            batch = list(texts[start : start + _BATCH])
            try:
                raw = embeddings.embed_documents(batch)
            except Exception as exc:
                raise ModelCallError(f"embedding {len(batch)} chunks failed: {exc}") from exc
            part = _as_matrix(raw, len(batch), "chunk vectors")
            if parts and part.shape[1] != parts[0].shape[1]:
                raise MalformedOutputError(
                    f"the embeddings changed dimension between batches "
                    f"({parts[0].shape[1]} then {part.shape[1]})"
                )
            parts.append(part)
            bar.update(len(batch))
    if not parts:
        raise MalformedOutputError("no text to embed")
    return normalize(np.concatenate(parts))


def _query_vector(raw: Any) -> np.ndarray:
    return normalize(_as_matrix([raw], 1, "a query vector"))[0]


def embed_query(embeddings: Embeddings, text: str) -> np.ndarray:
    """Embed one query into a unit vector.

    Raises:
        ModelCallError: the embeddings raised.
        MalformedOutputError: the result is not one finite vector.
    """
    try:
        raw = embeddings.embed_query(text)
    except Exception as exc:
        raise ModelCallError(f"embedding the query failed: {exc}") from exc
    return _query_vector(raw)


async def aembed_query(embeddings: Embeddings, text: str) -> np.ndarray:
    """Async twin of :func:`embed_query` (the embeddings' own ``aembed_query``)."""
    try:
        raw = await embeddings.aembed_query(text)
    except Exception as exc:
        raise ModelCallError(f"embedding the query failed: {exc}") from exc
    return _query_vector(raw)


def embeddings_identity(embeddings: Embeddings, dimension: int) -> dict[str, Any]:
    """Name the embeddings for a manifest: class, model name when it has one, dimension.

    Example:
        >>> from memory_chains.testing import HashEmbeddings
        >>> embeddings_identity(HashEmbeddings(dim=8), 8)["class"]
        'memory_chains.testing.HashEmbeddings'
    """
    cls = type(embeddings)
    model = ""
    for attribute in _MODEL_ATTRIBUTES:
        value = getattr(embeddings, attribute, None)
        if isinstance(value, str) and value:
            model = value
            break
    return {"class": f"{cls.__module__}.{cls.__qualname__}", "model": model, "dimension": dimension}


class NormalizedEmbeddings(Embeddings):
    """Wraps embeddings so that every vector they return has unit length.

    Handed to LangChain's FAISS vectorstore so that its inner-product search is a cosine
    search, without FAISS's own ``normalize_L2`` flag (which it refuses for inner product).

    Example:
        >>> from memory_chains.testing import HashEmbeddings
        >>> v = NormalizedEmbeddings(HashEmbeddings(dim=8)).embed_query("a b")
        >>> round(sum(x * x for x in v), 3)
        1.0
    """

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return [row.tolist() for row in embed_passages(self.inner, texts, progress=False)]

    def embed_query(self, text: str) -> list[float]:
        return [float(x) for x in embed_query(self.inner, text)]

    async def aembed_query(self, text: str) -> list[float]:
        return [float(x) for x in await aembed_query(self.inner, text)]
