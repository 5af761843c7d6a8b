"""The knowledge base: a folder of documents, chunked, embedded, searched by cosine (and BM25).

Core type: :class:`KnowledgeBase`. It owns a FAISS ``IndexFlatIP`` over L2-normalised
vectors (so scores are cosines, identical texts score 1.0), a BM25 index of the same chunks
(built on the first ``mode="hybrid"`` search, which fuses both rankings, see
:mod:`._hybrid`), the chunks in index order and,
when built with an ``index_dir``, a pickle-free copy on disk that is reused while the
folder, the chunking and the embeddings stay the same. LangChain's ``FAISS`` vectorstore
is a thin view built on demand (:attr:`KnowledgeBase.vectorstore`);
:meth:`KnowledgeBase.as_retriever` is a LangChain retriever over :meth:`KnowledgeBase.search`.

Example:
    >>> from memory_chains.testing import HashEmbeddings
    >>> kb = KnowledgeBase.from_folder(sample_kb_path(), HashEmbeddings(), progress=False)
    >>> doc, score = kb.search("Pilates mardi jeudi", k=1)[0]
    >>> doc.metadata["source"]
    'salle_de_sport/pilates.md'
"""

from __future__ import annotations

import logging
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from memory_chains.errors import IndexCorruptedError, InvalidInputError, KnowledgeBaseError
from memory_chains.knowledge._hybrid import (
    DEPTH,
    LexicalIndex,
    SearchMode,
    check_mode,
    hybrid_ranking,
)
from memory_chains.knowledge._loading import check_chunking, read_folder, split_sources
from memory_chains.knowledge._persist import (
    Manifest,
    has_index,
    read_index_dir,
    write_index_dir,
)
from memory_chains.knowledge._vectors import (
    NormalizedEmbeddings,
    aembed_query,
    embed_passages,
    embed_query,
    embeddings_identity,
)

if TYPE_CHECKING:
    from langchain_community.vectorstores import FAISS

__all__ = ["KnowledgeBase", "KnowledgeRetriever", "sample_kb_path"]

logger = logging.getLogger(__name__)

_PROBE = "dimension check"


def sample_kb_path() -> Path:
    """The sample knowledge base shipped with the package (French shop, gym, laptops).

    Example:
        >>> (sample_kb_path() / "ordinateurs" / "dell_xps_15.md").is_file()
        True
    """
    return Path(__file__).resolve().parent.parent / "data" / "sample_kb"


def _embedding_text(document: Document) -> str:
    """The text embedded for a chunk: its title is prepended when the chunk lacks it.

    A chunk cut from the middle of a product page ("Garantie : 2 ans") would otherwise
    lose the product name that makes it findable.
    """
    title = str(document.metadata.get("title", ""))
    text = document.page_content
    if title and title.lower() not in text.lower():
        return f"{title}\n\n{text}"
    return text


def _cosine(score: float) -> float:
    # Float error can push the inner product of unit vectors a hair outside [-1, 1].
    return float(min(1.0, max(-1.0, score)))


def _relevance(score: float) -> float:
    """LangChain relevance score: the cosine, floored at 0 (LangChain wants [0, 1])."""
    return min(1.0, max(0.0, score))


class KnowledgeBase:
    """Chunks of a document folder in a cosine FAISS index, optionally persisted.

    Build one with :meth:`from_folder` (or read a saved one with :meth:`load`); the
    constructor is not meant to be called directly.

    Attributes:
        documents: the chunks, in index order (copies are returned by searches).
        manifest: what was indexed and how (embeddings, chunking, file digests).
        rebuilt: False when :meth:`from_folder` reused an index from ``index_dir``
            (or the base came from :meth:`load`), True when it embedded the folder.

    Example:
        >>> import tempfile
        >>> from memory_chains.testing import HashEmbeddings
        >>> folder, index_dir = tempfile.mkdtemp(), tempfile.mkdtemp()
        >>> _ = (Path(folder) / "a.txt").write_text("Livraison en 48 heures.", encoding="utf-8")
        >>> kb = KnowledgeBase.from_folder(folder, HashEmbeddings(), index_dir=index_dir)
        >>> kb.rebuilt, len(kb)
        (True, 1)
        >>> again = KnowledgeBase.from_folder(folder, HashEmbeddings(), index_dir=index_dir)
        >>> again.rebuilt, round(again.search("Livraison en 48 heures.")[0][1], 3)
        (False, 1.0)
    """

    def __init__(
        self,
        *,
        index: Any,
        ids: Sequence[str],
        documents: Sequence[Document],
        embeddings: Embeddings,
        manifest: Manifest,
        rebuilt: bool,
    ) -> None:
        if index.ntotal != len(documents) or len(ids) != len(documents):
            raise KnowledgeBaseError(
                f"index holds {index.ntotal} vectors for {len(documents)} documents"
            )
        self._index = index
        self._ids = tuple(ids)
        self._documents = tuple(documents)
        self._embeddings = embeddings
        self._manifest = manifest
        self._rebuilt = rebuilt
        self._vectorstore: FAISS | None = None
        self._vectorstore_lock = threading.Lock()  # built once, even by racing threads
        self._lexical: LexicalIndex | None = None
        self._lexical_lock = threading.Lock()

    # ----------------------------------------------------------------- building

    @classmethod
    def from_folder(
        cls,
        folder: str | Path,
        embeddings: Embeddings,
        *,
        index_dir: str | Path | None = None,
        chunk_size: int = 800,
        chunk_overlap: int = 80,
        progress: bool = True,
    ) -> KnowledgeBase:
        """Index every ``.txt`` and ``.md`` file under ``folder`` (recursively).

        With ``index_dir``, an index saved there is reused when the files (sha256), the
        chunking and the embeddings (class, model name, dimension) are unchanged;
        otherwise the folder is embedded again and the index rewritten. A corrupted saved
        index is logged and rebuilt.

        Args:
            folder: the documents; other file types and hidden paths are skipped.
            embeddings: any LangChain embeddings; vectors are L2-normalised here.
            index_dir: where to persist the index (created if needed); None keeps it in
                memory only.
            chunk_size: maximum chunk length, in characters.
            chunk_overlap: characters shared by consecutive chunks.
            progress: show a progress bar on stderr while embedding (only on a terminal).

        Raises:
            KnowledgeBaseError: the folder is missing, empty, blank or holds a file that
                is not UTF-8.
            InvalidInputError: bad chunking parameters.
            ModelCallError: the embeddings failed.
            MalformedOutputError: the embeddings returned malformed vectors.
        """
        check_chunking(chunk_size, chunk_overlap)
        sources = read_folder(folder)
        files = {source.path: source.sha256 for source in sources}
        if index_dir is not None and has_index(index_dir):
            reused = cls._reuse(index_dir, embeddings, files, chunk_size, chunk_overlap)
            if reused is not None:
                return reused
        documents = split_sources(sources, chunk_size, chunk_overlap)
        ids = [f"{doc.metadata['source']}#{doc.metadata['chunk']}" for doc in documents]
        documents = [
            doc.model_copy(update={"id": doc_id})
            for doc, doc_id in zip(documents, ids, strict=True)
        ]
        vectors = embed_passages(
            embeddings, [_embedding_text(doc) for doc in documents], progress=progress
        )
        import faiss

        index = faiss.IndexFlatIP(int(vectors.shape[1]))
        index.add(vectors)
        manifest = Manifest(
            embeddings=embeddings_identity(embeddings, int(vectors.shape[1])),
            chunk_size=chunk_size,
            chunk_overlap=chunk_overlap,
            files=files,
            count=len(documents),
        )
        if index_dir is not None:
            manifest = write_index_dir(index_dir, index, ids, documents, manifest)
        return cls(
            index=index,
            ids=ids,
            documents=documents,
            embeddings=embeddings,
            manifest=manifest,
            rebuilt=True,
        )

    @classmethod
    def _reuse(
        cls,
        index_dir: str | Path,
        embeddings: Embeddings,
        files: dict[str, str],
        chunk_size: int,
        chunk_overlap: int,
    ) -> KnowledgeBase | None:
        try:
            stored = read_index_dir(index_dir)
        except IndexCorruptedError as exc:
            logger.warning("rebuilding the knowledge index in %s: %s", index_dir, exc)
            return None
        manifest = stored.manifest
        identity = embeddings_identity(embeddings, manifest.dimension)
        same = (
            dict(manifest.files) == files
            and manifest.chunk_size == chunk_size
            and manifest.chunk_overlap == chunk_overlap
            and dict(manifest.embeddings) == identity
            and embed_query(embeddings, _PROBE).shape[0] == manifest.dimension
        )
        if not same:
            logger.info("knowledge folder or settings changed: rebuilding %s", index_dir)
            return None
        return cls(
            index=stored.index,
            ids=stored.ids,
            documents=stored.documents,
            embeddings=embeddings,
            manifest=manifest,
            rebuilt=False,
        )

    @classmethod
    def load(cls, index_dir: str | Path, embeddings: Embeddings) -> KnowledgeBase:
        """Read an index saved by :meth:`from_folder`, without the source folder.

        Only JSON and FAISS's binary format are read: nothing is unpickled.

        Raises:
            KnowledgeBaseError: ``index_dir`` holds no index, or ``embeddings`` are not the
                ones the index was built with (class, model name or dimension differ).
            IndexCorruptedError: a file is missing, truncated, edited or foreign.
        """
        stored = read_index_dir(index_dir)
        manifest = stored.manifest
        dimension = embed_query(embeddings, _PROBE).shape[0]
        identity = embeddings_identity(embeddings, dimension)
        if identity != dict(manifest.embeddings):
            raise KnowledgeBaseError(
                f"the index in {str(index_dir)!r} was built with {dict(manifest.embeddings)}, "
                f"not {identity}: pass the same embeddings or rebuild it with from_folder"
            )
        return cls(
            index=stored.index,
            ids=stored.ids,
            documents=stored.documents,
            embeddings=embeddings,
            manifest=manifest,
            rebuilt=False,
        )

    # ---------------------------------------------------------------- searching

    def __len__(self) -> int:
        return len(self._documents)

    @property
    def manifest(self) -> Manifest:
        """What was indexed and how (embeddings identity, chunking, file digests)."""
        return self._manifest

    @property
    def rebuilt(self) -> bool:
        """True when the folder was embedded; False when a saved index was reused/loaded."""
        return self._rebuilt

    @property
    def documents(self) -> tuple[Document, ...]:
        """The chunks in index order (treat them as read-only)."""
        return self._documents

    @property
    def dimension(self) -> int:
        """Dimension of the vectors."""
        return int(self._index.d)

    def _check_query(self, query: str, k: int) -> None:
        if not isinstance(query, str) or not query.strip():
            raise InvalidInputError("the query must be a non-empty string")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InvalidInputError(f"k must be a positive integer, got {k!r}")

    def _check_dimension(self, vector: np.ndarray) -> None:
        if vector.shape[0] != self.dimension:
            raise KnowledgeBaseError(
                f"the embeddings return {vector.shape[0]}-dimension vectors but the index "
                f"has {self.dimension}: rebuild it with these embeddings"
            )

    def _lexical_index(self) -> LexicalIndex:
        with self._lexical_lock:  # built once, on the first hybrid search
            if self._lexical is None:
                self._lexical = LexicalIndex([_embedding_text(d) for d in self._documents])
            return self._lexical

    def _hits(
        self, query: str, vector: np.ndarray, k: int, mode: SearchMode
    ) -> list[tuple[Document, float]]:
        self._check_dimension(vector)
        depth = min(len(self), k if mode == "dense" else max(k, DEPTH))
        scores, positions = self._index.search(vector.reshape(1, -1), depth)
        cosines = {
            int(pos): float(score)
            for score, pos in zip(scores[0], positions[0], strict=True)
            if pos >= 0
        }
        if mode == "dense":
            chosen = list(cosines)
        else:
            lexical = self._lexical_index().scores(query)
            chosen = hybrid_ranking(list(cosines), lexical, depth)[:k]
        return [
            (self._documents[pos].model_copy(deep=True), self._cosine_at(pos, vector, cosines))
            for pos in chosen
        ]

    def _cosine_at(self, pos: int, vector: np.ndarray, known: dict[int, float]) -> float:
        score = known[pos] if pos in known else float(np.dot(self._index.reconstruct(pos), vector))
        return _cosine(score)

    def search(
        self, query: str, k: int = 4, *, mode: SearchMode = "dense"
    ) -> list[tuple[Document, float]]:
        """The ``k`` best chunks for ``query``, best first, each with its cosine similarity.

        Args:
            query: the search text.
            k: number of chunks.
            mode: ``"dense"`` (default) ranks by cosine; ``"hybrid"`` fuses the dense
                ranking with BM25 by reciprocal rank (the order may then differ from the
                cosine order).

        Raises:
            InvalidInputError: empty query, ``k < 1`` or an unknown mode.
            ModelCallError: the embeddings failed.
        """
        self._check_query(query, k)
        mode = check_mode(mode)
        return self._hits(query, embed_query(self._embeddings, query), k, mode)

    async def asearch(
        self, query: str, k: int = 4, *, mode: SearchMode = "dense"
    ) -> list[tuple[Document, float]]:
        """Async :meth:`search` (uses the embeddings' ``aembed_query``)."""
        self._check_query(query, k)
        mode = check_mode(mode)
        return self._hits(query, await aembed_query(self._embeddings, query), k, mode)

    # ------------------------------------------------------------ LangChain view

    @property
    def vectorstore(self) -> FAISS:
        """A LangChain ``FAISS`` vectorstore over a copy of the index.

        Inner-product distance on normalised vectors, relevance score = cosine (floored
        at 0). Adding texts to it does not change this knowledge base.
        """
        with self._vectorstore_lock:  # racing threads share one copy
            if self._vectorstore is None:
                self._vectorstore = self._build_vectorstore()
            return self._vectorstore

    def _build_vectorstore(self) -> FAISS:
        import faiss

        with warnings.catch_warnings():
            # Announces the package's sunset on first import; FAISS itself is not deprecated.
            warnings.filterwarnings(
                "ignore", message=".*langchain-community.*", category=DeprecationWarning
            )
            from langchain_community.docstore.in_memory import InMemoryDocstore
            from langchain_community.vectorstores import FAISS
            from langchain_community.vectorstores.utils import DistanceStrategy

        docstore = InMemoryDocstore(
            {i: d.model_copy(deep=True) for i, d in zip(self._ids, self._documents, strict=True)}
        )
        return FAISS(
            embedding_function=NormalizedEmbeddings(self._embeddings),
            index=faiss.clone_index(self._index),
            docstore=docstore,
            index_to_docstore_id=dict(enumerate(self._ids)),
            relevance_score_fn=_relevance,
            distance_strategy=DistanceStrategy.MAX_INNER_PRODUCT,
        )

    def as_retriever(
        self, k: int = 4, score_threshold: float | None = None, *, mode: SearchMode = "dense"
    ) -> KnowledgeRetriever:
        """A LangChain retriever returning the ``k`` best chunks of :meth:`search`.

        Args:
            k: number of chunks.
            score_threshold: when set, chunks whose cosine is below it are dropped.
            mode: ``"dense"`` (default) or ``"hybrid"``, as in :meth:`search`.

        Raises:
            InvalidInputError: ``k < 1``, a threshold outside [0, 1] or an unknown mode.
        """
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InvalidInputError(f"k must be a positive integer, got {k!r}")
        if score_threshold is not None and not 0.0 <= score_threshold <= 1.0:
            raise InvalidInputError(f"score_threshold must be in [0, 1], got {score_threshold!r}")
        return KnowledgeRetriever(
            knowledge=self, k=k, score_threshold=score_threshold, mode=check_mode(mode)
        )


class KnowledgeRetriever(BaseRetriever):
    """The LangChain retriever of a :class:`KnowledgeBase` (see
    :meth:`KnowledgeBase.as_retriever`).

    Example:
        >>> from memory_chains.testing import HashEmbeddings
        >>> kb = KnowledgeBase.from_folder(sample_kb_path(), HashEmbeddings(), progress=False)
        >>> [d.metadata["title"] for d in kb.as_retriever(k=1).invoke("garantie Dell XPS 15")]
        ['Dell XPS 15']
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    knowledge: KnowledgeBase
    k: int = 4
    score_threshold: float | None = None
    mode: SearchMode = "dense"

    def _kept(self, hits: list[tuple[Document, float]]) -> list[Document]:
        floor = self.score_threshold
        return [doc for doc, score in hits if floor is None or score >= floor]

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        return self._kept(self.knowledge.search(query, self.k, mode=self.mode))

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        return self._kept(await self.knowledge.asearch(query, self.k, mode=self.mode))
