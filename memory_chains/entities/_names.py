"""Typing a name nothing in its sentence speaks for, by the names it resembles.

A capitalised name with no cue around it ("Serenza Hybrid", "Ezra Whitlock", "Zalvora")
used to get a guess from its shape alone. :class:`NameTyper` asks the embeddings instead:
the name is compared with a few hundred labelled example names (persons, organizations,
places, products, concepts; French and English, invented, written for this purpose by
people who saw neither the code nor the evaluation sets) and takes the type of its
nearest examples, weighted by similarity. An embedding model has read many names of each
kind; a surname reads like surnames, a model word like model words.

It makes no chat-model call: one embedding per new name (cached). The examples are
embedded on first use (several seconds on two cores) and, for the default embeddings,
kept under ``MEMORY_CHAINS_HOME/cache`` for the next process.

Example:
    >>> from memory_chains.testing import HashEmbeddings
    >>> typer = NameTyper(HashEmbeddings(), examples=[("Ondine Farrac", "PERSON"),
    ...     ("Ravalco", "ORGANIZATION"), ("Kervaric", "LOCATION")], k=1)
    >>> typer.best_type("Ondine Farrac", ["PERSON", "LOCATION"])
    'PERSON'
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memory_chains.errors import InvalidInputError

__all__ = ["NameTyper", "load_examples", "shared_name_typer"]

log = logging.getLogger("memory_chains.entities")

_EXAMPLES = Path(__file__).resolve().parent.parent / "data" / "entities" / "name_examples.jsonl"
_CACHE_SIZE = 4096


def load_examples() -> list[tuple[str, str]]:
    """The packaged ``(name, type)`` examples.

    Example:
        >>> sorted({t for _, t in load_examples()})
        ['CONCEPT', 'LOCATION', 'ORGANIZATION', 'PERSON', 'PRODUCT']
    """
    text = _EXAMPLES.read_text(encoding="utf-8")
    out = []
    for line in text.splitlines():
        if line.strip():
            item = json.loads(line)
            out.append((str(item["name"]), str(item["type"])))
    return out


class NameTyper:
    """Type scores for a name from its nearest labelled example names.

    Args:
        embeddings: a LangChain ``Embeddings`` (default: the offline multilingual-e5-small,
            :class:`~memory_chains.providers.E5Embeddings`). Names are embedded as
            documents, the examples too.
        examples: ``(name, type)`` pairs (default: :func:`load_examples`).
        k: how many nearest examples vote.

    Example:
        >>> NameTyper(k=0)
        Traceback (most recent call last):
        ...
        memory_chains.errors.InvalidInputError: k must be positive, got 0
    """

    def __init__(
        self,
        embeddings: Any = None,
        *,
        examples: Sequence[tuple[str, str]] | None = None,
        k: int = 7,
    ) -> None:
        if k <= 0:
            raise InvalidInputError(f"k must be positive, got {k}")
        self.k = k
        # Only the default embeddings and examples are cached on disk (their identity is known).
        self._cache_vectors = embeddings is None and examples is None
        self._embeddings = embeddings
        self._examples = list(examples) if examples is not None else None
        self._matrix: Any = None
        self._cache: dict[str, dict[str, float]] = {}
        self._lock = threading.Lock()

    def _ready(self) -> tuple[Any, list[tuple[str, str]], Any]:
        with self._lock:
            if self._embeddings is None:
                from memory_chains.providers import E5Embeddings

                self._embeddings = E5Embeddings()
            if self._examples is None:
                self._examples = load_examples()
            if self._matrix is None:
                self._matrix = self._example_vectors(self._embeddings, self._examples)
            return self._embeddings, self._examples, self._matrix

    def _example_vectors(self, embeddings: Any, examples: Sequence[tuple[str, str]]) -> Any:
        """The examples' unit vectors; for the default embeddings, kept in the cache
        directory (a plain ``.npy`` array, read without unpickling) so that a new process
        does not embed them again."""
        names = [n for n, _ in examples]
        path = None
        if self._cache_vectors:
            from memory_chains.config import Settings

            digest = hashlib.sha256(
                "\n".join([type(embeddings).__name__, *names]).encode("utf-8")
            ).hexdigest()[:16]
            path = Settings.from_env(os.environ).cache_dir / f"name_examples-{digest}.npy"
            try:
                cached = np.load(path, allow_pickle=False)
                if cached.shape[0] == len(names):
                    return cached
            except (OSError, ValueError):
                pass
        matrix = _unit(np.asarray(embeddings.embed_documents(names), dtype=np.float32))
        if path is not None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_suffix(f".{os.getpid()}.tmp.npy")
                np.save(tmp, matrix, allow_pickle=False)
                os.replace(tmp, path)
            except OSError as exc:  # a read-only home: embed again next time
                log.debug("name examples not cached: %s", exc)
        return matrix

    def scores(self, name: str) -> dict[str, float]:
        """Each type's share of the similarity of the ``k`` nearest examples (sums to 1).

        Example:
            >>> from memory_chains.testing import HashEmbeddings
            >>> t = NameTyper(HashEmbeddings(), examples=[("Ravalco", "ORGANIZATION")], k=1)
            >>> t.scores("Ravalco")
            {'ORGANIZATION': 1.0}
        """
        key = " ".join(name.split())
        if key in self._cache:
            return dict(self._cache[key])
        embeddings, examples, matrix = self._ready()
        sims = matrix @ _unit(np.asarray(embeddings.embed_documents([key])))[0]
        votes: dict[str, float] = {}
        for i in np.argsort(-sims, kind="stable")[: self.k]:
            etype = examples[int(i)][1]
            votes[etype] = votes.get(etype, 0.0) + max(float(sims[i]), 0.0)
        total = sum(votes.values()) or 1.0
        out = {t: v / total for t, v in votes.items()}
        if len(self._cache) >= _CACHE_SIZE:
            self._cache.clear()
        self._cache[key] = out
        return dict(out)

    def best_type(self, name: str, allowed: Sequence[str] | None = None) -> str:
        """The best-voted type among ``allowed`` (all when None), ``""`` when none voted."""
        votes = {t: s for t, s in self.scores(name).items() if allowed is None or t in allowed}
        return max(votes, key=lambda t: votes[t]) if votes else ""


def _unit(rows: Any) -> Any:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms == 0, 1.0, norms)


_SHARED: NameTyper | None = None
_SHARED_LOCK = threading.Lock()


def shared_name_typer() -> NameTyper:
    """The process's default :class:`NameTyper` (nothing loads until it types a name).

    Example:
        >>> shared_name_typer() is shared_name_typer()
        True
    """
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = NameTyper()
        return _SHARED
