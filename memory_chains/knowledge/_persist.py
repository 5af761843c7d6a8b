"""Saving and loading a knowledge-base index without pickle.

An index folder holds three files, each written atomically (temporary file, then
``os.replace``), the manifest last so that it only ever describes complete files:

* ``index.faiss``: the FAISS inner-product index, in FAISS's own binary format
  (what ``faiss.write_index`` writes);
* ``docstore.json``: chunk ids, texts and metadata, in index order;
* ``manifest.json``: :class:`Manifest`, i.e. format version, embeddings identity,
  chunking parameters, sha256 of every source file and of the two files above.

Loading reads JSON and the FAISS binary only, checks both sha256 against the manifest,
then checks counts, dimension, index type and metadata types. Any mismatch raises
:class:`~memory_chains.errors.IndexCorruptedError`. No file is ever unpickled.

Example:
    >>> import tempfile, faiss, numpy as np
    >>> from langchain_core.documents import Document
    >>> index = faiss.IndexFlatIP(2)
    >>> index.add(np.array([[1.0, 0.0]], dtype="float32"))
    >>> doc = Document(page_content="x", metadata={"source": "a.md", "chunk": 0, "title": "a"})
    >>> manifest = Manifest(
    ...     embeddings={"class": "E", "model": "", "dimension": 2}, chunk_size=800,
    ...     chunk_overlap=80, files={"a.md": "0" * 64}, count=1)
    >>> folder = tempfile.mkdtemp()
    >>> written = write_index_dir(folder, index, ["a.md#0"], [doc], manifest)
    >>> read_index_dir(folder).documents[0].page_content
    'x'
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.documents import Document

from memory_chains._json import loads_bounded
from memory_chains.errors import IndexCorruptedError, KnowledgeBaseError

__all__ = [
    "DOCSTORE_FILE",
    "FORMAT_VERSION",
    "INDEX_FILE",
    "MANIFEST_FILE",
    "Manifest",
    "StoredIndex",
    "has_index",
    "read_index_dir",
    "write_index_dir",
]

FORMAT_VERSION = 1
INDEX_FILE = "index.faiss"
DOCSTORE_FILE = "docstore.json"
MANIFEST_FILE = "manifest.json"
_FORMAT_NAME = "memory_chains.knowledge"
_REQUIRED_METADATA = {"source": str, "chunk": int, "title": str}


@dataclass(frozen=True)
class Manifest:
    """What an index folder holds and how it was built.

    Attributes:
        embeddings: ``{"class": ..., "model": ..., "dimension": ...}``.
        chunk_size: splitter chunk size, in characters.
        chunk_overlap: splitter overlap, in characters.
        files: relative path of every source file -> sha256 of its bytes.
        count: number of chunks (= vectors in the index).
        index_sha256: sha256 of ``index.faiss`` (filled in when written).
        docstore_sha256: sha256 of ``docstore.json`` (filled in when written).
        format_version: version of this folder layout.

    Example:
        >>> from memory_chains.knowledge import KnowledgeBase, sample_kb_path
        >>> from memory_chains.testing import HashEmbeddings
        >>> kb = KnowledgeBase.from_folder(sample_kb_path(), HashEmbeddings(), progress=False)
        >>> m = kb.manifest
        >>> m.dimension, m.chunk_size, "boutique/retours.md" in m.files
        (256, 800, True)
    """

    embeddings: Mapping[str, Any]
    chunk_size: int
    chunk_overlap: int
    files: Mapping[str, str]
    count: int
    index_sha256: str = ""
    docstore_sha256: str = ""
    format_version: int = field(default=FORMAT_VERSION)

    @property
    def dimension(self) -> int:
        """Dimension of the vectors."""
        return int(self.embeddings["dimension"])

    def to_json(self) -> dict[str, Any]:
        """The manifest as a JSON-ready dict."""
        return {
            "format": _FORMAT_NAME,
            "format_version": self.format_version,
            "embeddings": dict(self.embeddings),
            "chunking": {"chunk_size": self.chunk_size, "chunk_overlap": self.chunk_overlap},
            "files": dict(sorted(self.files.items())),
            "count": self.count,
            "sha256": {INDEX_FILE: self.index_sha256, DOCSTORE_FILE: self.docstore_sha256},
        }

    @classmethod
    def from_json(cls, data: Any) -> Manifest:
        """Parse and type-check a manifest dict.

        Raises:
            IndexCorruptedError: a field is missing, of the wrong type, or the format is
                foreign or of another version.
        """
        try:
            if not isinstance(data, dict) or data.get("format") != _FORMAT_NAME:
                raise ValueError("not a memory_chains knowledge-base manifest")
            version = data["format_version"]
            if version != FORMAT_VERSION or isinstance(version, bool):
                raise ValueError(f"format version {version!r}, expected {FORMAT_VERSION}")
            embeddings = data["embeddings"]
            _check(
                isinstance(embeddings, dict)
                and isinstance(embeddings.get("class"), str)
                and isinstance(embeddings.get("model"), str)
                and _is_int(embeddings.get("dimension"))
                and embeddings["dimension"] > 0,
                "embeddings",
            )
            chunking = data["chunking"]
            _check(isinstance(chunking, dict), "chunking")
            size, overlap = chunking["chunk_size"], chunking["chunk_overlap"]
            _check(_is_int(size) and _is_int(overlap) and 0 <= overlap < size, "chunking")
            files = data["files"]
            _check(
                isinstance(files, dict)
                and all(isinstance(k, str) and _is_sha256(v) for k, v in files.items()),
                "files",
            )
            count = data["count"]
            _check(_is_int(count) and count > 0, "count")
            digests = data["sha256"]
            _check(
                isinstance(digests, dict)
                and _is_sha256(digests.get(INDEX_FILE))
                and _is_sha256(digests.get(DOCSTORE_FILE)),
                "sha256",
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise IndexCorruptedError(f"invalid {MANIFEST_FILE}: {exc}") from exc
        return cls(
            embeddings=dict(embeddings),
            chunk_size=size,
            chunk_overlap=overlap,
            files=dict(files),
            count=count,
            index_sha256=digests[INDEX_FILE],
            docstore_sha256=digests[DOCSTORE_FILE],
            format_version=version,
        )


@dataclass(frozen=True)
class StoredIndex:
    """An index folder read back and checked."""

    manifest: Manifest
    index: Any
    ids: tuple[str, ...]
    documents: tuple[Document, ...]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_sha256(value: Any) -> bool:
    return (
        isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)
    )


def _check(condition: bool, what: str) -> None:
    if not condition:
        raise ValueError(f"field {what!r} is missing or has the wrong type")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def has_index(folder: str | Path) -> bool:
    """True when ``folder`` holds a manifest (whether or not the index is valid)."""
    return (Path(folder) / MANIFEST_FILE).is_file()


def write_index_dir(
    folder: str | Path,
    index: Any,
    ids: Sequence[str],
    documents: Sequence[Document],
    manifest: Manifest,
) -> Manifest:
    """Write the index, docstore and manifest into ``folder`` (created if needed).

    Returns:
        The manifest as written, with both sha256 filled in.
    """
    import faiss

    root = Path(folder)
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise KnowledgeBaseError(f"cannot create index folder {str(root)!r}: {exc}") from exc
    index_bytes = faiss.serialize_index(index).tobytes()
    records = [
        {"id": doc_id, "text": doc.page_content, "metadata": doc.metadata}
        for doc_id, doc in zip(ids, documents, strict=True)
    ]
    docstore_bytes = json.dumps(
        {"format_version": FORMAT_VERSION, "documents": records}, ensure_ascii=False, indent=1
    ).encode("utf-8")
    final = replace(
        manifest,
        count=len(records),
        index_sha256=_sha256(index_bytes),
        docstore_sha256=_sha256(docstore_bytes),
    )
    manifest_bytes = json.dumps(final.to_json(), ensure_ascii=False, indent=1).encode("utf-8")
    try:
        _write_atomic(root / INDEX_FILE, index_bytes)
        _write_atomic(root / DOCSTORE_FILE, docstore_bytes)
        _write_atomic(root / MANIFEST_FILE, manifest_bytes)
    except OSError as exc:
        raise KnowledgeBaseError(f"cannot write the index into {str(root)!r}: {exc}") from exc
    return final


def _read(root: Path, name: str) -> bytes:
    try:
        return (root / name).read_bytes()
    except FileNotFoundError as exc:
        raise IndexCorruptedError(f"{name} is missing from index folder {str(root)!r}") from exc
    except OSError as exc:
        raise KnowledgeBaseError(f"cannot read {name} in {str(root)!r}: {exc}") from exc


def _parse_json(data: bytes, name: str) -> Any:
    try:
        return loads_bounded(data)
    except ValueError as exc:  # not UTF-8, not JSON, or nested too deep
        raise IndexCorruptedError(f"{name} is not valid JSON: {exc}") from exc


def _parse_docstore(data: Any, count: int) -> tuple[tuple[str, ...], tuple[Document, ...]]:
    try:
        _check(isinstance(data, dict) and data.get("format_version") == FORMAT_VERSION, "format")
        records = data["documents"]
        _check(isinstance(records, list), "documents")
        ids: list[str] = []
        documents: list[Document] = []
        for record in records:
            _check(isinstance(record, dict), "documents[]")
            doc_id, text, metadata = record["id"], record["text"], record["metadata"]
            _check(isinstance(doc_id, str) and isinstance(text, str), "id/text")
            _check(isinstance(metadata, dict), "metadata")
            for key, kind in _REQUIRED_METADATA.items():
                value = metadata.get(key)
                _check(isinstance(value, kind) and not isinstance(value, bool), f"metadata.{key}")
            ids.append(doc_id)
            documents.append(Document(page_content=text, metadata=metadata, id=doc_id))
    except (KeyError, TypeError, ValueError) as exc:
        raise IndexCorruptedError(f"invalid {DOCSTORE_FILE}: {exc}") from exc
    if len(set(ids)) != len(ids):
        raise IndexCorruptedError(f"{DOCSTORE_FILE} has duplicate chunk ids")
    if len(ids) != count:
        raise IndexCorruptedError(
            f"{DOCSTORE_FILE} holds {len(ids)} chunks, the manifest says {count}"
        )
    return tuple(ids), tuple(documents)


def _parse_index(data: bytes, manifest: Manifest) -> Any:
    import faiss

    try:
        index = faiss.deserialize_index(np.frombuffer(data, dtype=np.uint8).copy())
    except RuntimeError as exc:
        raise IndexCorruptedError(f"{INDEX_FILE} cannot be read by FAISS: {exc}") from exc
    if not isinstance(index, faiss.IndexFlatIP) or index.metric_type != faiss.METRIC_INNER_PRODUCT:
        raise IndexCorruptedError(
            f"{INDEX_FILE} is a {type(index).__name__}, expected an inner-product IndexFlatIP"
        )
    if index.d != manifest.dimension:
        raise IndexCorruptedError(
            f"{INDEX_FILE} has dimension {index.d}, the manifest says {manifest.dimension}"
        )
    if index.ntotal != manifest.count:
        raise IndexCorruptedError(
            f"{INDEX_FILE} holds {index.ntotal} vectors, the manifest says {manifest.count}"
        )
    norms = np.linalg.norm(index.reconstruct_n(0, index.ntotal), axis=1)
    if not np.all(np.isfinite(norms)) or not np.all((norms < 1e-6) | (np.abs(norms - 1) < 1e-3)):
        raise IndexCorruptedError(f"{INDEX_FILE} holds vectors that are not unit length")
    return index


def read_index_dir(folder: str | Path) -> StoredIndex:
    """Read an index folder written by :func:`write_index_dir`, checking everything.

    Raises:
        KnowledgeBaseError: ``folder`` holds no manifest (it is not an index folder), or a
            file cannot be read for a reason other than its content.
        IndexCorruptedError: a file is missing, truncated, edited or foreign.
    """
    root = Path(folder)
    if not has_index(root):
        raise KnowledgeBaseError(
            f"no knowledge-base index in {str(root)!r} ({MANIFEST_FILE} not found): "
            "build one with KnowledgeBase.from_folder(..., index_dir=...)"
        )
    manifest = Manifest.from_json(_parse_json(_read(root, MANIFEST_FILE), MANIFEST_FILE))
    docstore_bytes = _read(root, DOCSTORE_FILE)
    if _sha256(docstore_bytes) != manifest.docstore_sha256:
        raise IndexCorruptedError(f"{DOCSTORE_FILE} does not match its sha256 in the manifest")
    index_bytes = _read(root, INDEX_FILE)
    if _sha256(index_bytes) != manifest.index_sha256:
        raise IndexCorruptedError(f"{INDEX_FILE} does not match its sha256 in the manifest")
    ids, documents = _parse_docstore(_parse_json(docstore_bytes, DOCSTORE_FILE), manifest.count)
    index = _parse_index(index_bytes, manifest)
    return StoredIndex(manifest=manifest, index=index, ids=ids, documents=documents)
