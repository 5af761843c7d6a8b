"""Reading a folder of ``.txt`` / ``.md`` files and cutting it into chunks.

Core types: :class:`SourceFile` (one file read from disk, with its sha256) and the
functions :func:`read_folder` and :func:`split_sources`. Nothing here embeds or indexes.

Example:
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "a.md").write_text("# Titre\\n\\nBonjour.", encoding="utf-8")
    >>> [f.path for f in read_folder(root)]
    ['a.md']
    >>> [d.metadata["title"] for d in split_sources(read_folder(root), 800, 80)]
    ['Titre']
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from langchain_core.documents import Document

from memory_chains.errors import InvalidInputError, KnowledgeBaseError

__all__ = ["SUFFIXES", "SourceFile", "check_chunking", "read_folder", "split_sources"]

SUFFIXES = (".md", ".txt")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


@dataclass(frozen=True)
class SourceFile:
    """One text file of a knowledge-base folder.

    Attributes:
        path: path relative to the folder, with ``/`` separators (stable across systems).
        text: the decoded UTF-8 content.
        sha256: hex digest of the raw bytes, used to detect changes.
    """

    path: str
    text: str
    sha256: str

    @property
    def title(self) -> str:
        """The first Markdown heading, else the file name without its extension."""
        match = _HEADING.search(self.text)
        if match:
            return match.group(1).strip()
        return Path(self.path).stem.replace("_", " ")


def read_folder(folder: str | Path) -> list[SourceFile]:
    """Read every ``.txt`` and ``.md`` file under ``folder``, recursively, sorted by path.

    Other files and hidden files or folders (names starting with ``.``) are skipped.

    Raises:
        KnowledgeBaseError: the folder does not exist, holds no ``.txt``/``.md`` file, or a
            file is not valid UTF-8 (the message names the file).
    """
    root = Path(folder)
    if not root.is_dir():
        raise KnowledgeBaseError(
            f"knowledge folder {str(root)!r} does not exist or is not a folder"
        )
    found: list[tuple[str, Path]] = []
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if any(part.startswith(".") for part in rel.parts):
            continue
        if path.is_file() and path.suffix.lower() in SUFFIXES:
            found.append((rel.as_posix(), path))
    if not found:
        raise KnowledgeBaseError(
            f"knowledge folder {str(root)!r} holds no {' or '.join(SUFFIXES)} file: "
            "add documents or point to another folder"
        )
    sources = []
    for rel_path, path in sorted(found):
        raw = path.read_bytes()
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise KnowledgeBaseError(
                f"{rel_path!r} in {str(root)!r} is not valid UTF-8 ({exc.reason} at byte "
                f"{exc.start}): convert it to UTF-8 or remove it"
            ) from exc
        sources.append(SourceFile(rel_path, text, hashlib.sha256(raw).hexdigest()))
    return sources


def check_chunking(chunk_size: int, chunk_overlap: int) -> None:
    """Reject chunking parameters the splitter would misbehave with.

    Raises:
        InvalidInputError: ``chunk_size < 1``, ``chunk_overlap < 0`` or
            ``chunk_overlap >= chunk_size``.
    """
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise InvalidInputError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    if isinstance(chunk_overlap, bool) or not isinstance(chunk_overlap, int) or chunk_overlap < 0:
        raise InvalidInputError(f"chunk_overlap must be an integer >= 0, got {chunk_overlap!r}")
    if chunk_overlap >= chunk_size:
        raise InvalidInputError(
            f"chunk_overlap ({chunk_overlap}) must be smaller than chunk_size ({chunk_size})"
        )


def split_sources(
    sources: Sequence[SourceFile], chunk_size: int, chunk_overlap: int
) -> list[Document]:
    """Cut files into chunks with LangChain's recursive character splitter.

    Markdown files are cut preferably at headings, then paragraphs; text files at
    paragraphs, lines, then words. Blank files give no chunk.

    Returns:
        Documents whose metadata holds ``source`` (relative path), ``chunk`` (index of the
        chunk within its file, from 0) and ``title`` (see :attr:`SourceFile.title`).

    Raises:
        InvalidInputError: bad chunking parameters.
        KnowledgeBaseError: every file is blank, so there is nothing to index.
    """
    from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

    check_chunking(chunk_size, chunk_overlap)
    markdown = RecursiveCharacterTextSplitter.from_language(
        Language.MARKDOWN, chunk_size=chunk_size, chunk_overlap=chunk_overlap
    )
    plain = RecursiveCharacterTextSplitter(chunk_size=chunk_size, chunk_overlap=chunk_overlap)
    documents: list[Document] = []
    for source in sources:
        splitter = markdown if source.path.lower().endswith(".md") else plain
        pieces = [p for p in splitter.split_text(source.text) if p.strip()]
        title = source.title
        for index, piece in enumerate(pieces):
            metadata = {"source": source.path, "chunk": index, "title": title}
            documents.append(Document(page_content=piece, metadata=metadata))
    if not documents:
        raise KnowledgeBaseError("every knowledge file is blank: there is nothing to index")
    return documents
