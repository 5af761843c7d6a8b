"""Hybrid search: BM25 fused with the dense ranking, in KnowledgeBase and its retriever."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from memory_chains.errors import InvalidInputError
from memory_chains.knowledge import KnowledgeBase, LexicalIndex, hybrid_ranking
from memory_chains.testing import HashEmbeddings


class BlindEmbeddings(Embeddings):
    """Every text gets the same vector: the dense ranking is the index order, so only the
    words can find the right chunk (a rare name a small model does not know)."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)

    @staticmethod
    def _vector(text: str) -> list[float]:
        return [1.0, 0.0, 0.0]


def _folder(tmp_path: Path, texts: dict[str, str]) -> Path:
    for name, text in texts.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


BOXES = {
    "a_cobalt.txt": "La box Cobalt offre 1 Gb/s en fibre.",
    "b_onyx.txt": "La box Onyx offre 8 Gb/s en fibre avec un décodeur.",
    "c_ardoise.txt": "La box Ardoise passe par la 4G, sans fibre.",
}


def test_words_find_the_chunk_the_embeddings_cannot_tell_apart(tmp_path: Path) -> None:
    kb = KnowledgeBase.from_folder(_folder(tmp_path, BOXES), BlindEmbeddings(), progress=False)
    dense = [d.metadata["source"] for d, _ in kb.search("le décodeur de l'Onyx", k=3, mode="dense")]
    hybrid = [
        d.metadata["source"] for d, _ in kb.search("le décodeur de l'Onyx", k=3, mode="hybrid")
    ]
    assert dense[0] != "b_onyx.txt"
    assert hybrid[0] == "b_onyx.txt"
    assert sorted(hybrid) == sorted(dense)  # the same chunks, in another order


def test_hybrid_scores_are_the_chunks_cosines(tmp_path: Path) -> None:
    kb = KnowledgeBase.from_folder(_folder(tmp_path, BOXES), HashEmbeddings(), progress=False)
    cosine = {d.metadata["source"]: s for d, s in kb.search("box Ardoise 4G", k=3, mode="dense")}
    for doc, score in kb.search("box Ardoise 4G", k=3, mode="hybrid"):
        assert score == pytest.approx(cosine[doc.metadata["source"]], abs=1e-6)


def test_a_chunk_below_the_dense_depth_keeps_its_cosine(tmp_path: Path) -> None:
    texts = {f"f{i:02d}.txt": f"Note numéro {i} sur les horaires." for i in range(60)}
    texts["f99.txt"] = "Le code promo ZEBRA42 donne dix pour cent."
    kb = KnowledgeBase.from_folder(_folder(tmp_path, texts), HashEmbeddings(), progress=False)
    cosine = {d.metadata["source"]: s for d, s in kb.search("ZEBRA42", k=61, mode="dense")}
    doc, score = kb.search("ZEBRA42", k=1, mode="hybrid")[0]
    assert doc.metadata["source"] == "f99.txt"
    assert score == pytest.approx(cosine["f99.txt"], abs=1e-6)


async def test_retriever_sync_and_async_agree_and_respect_the_threshold(tmp_path: Path) -> None:
    kb = KnowledgeBase.from_folder(_folder(tmp_path, BOXES), HashEmbeddings(), progress=False)
    retriever = kb.as_retriever(k=2, mode="hybrid")
    sync = [d.metadata["source"] for d in retriever.invoke("box Onyx décodeur")]
    async_ = [d.metadata["source"] for d in await retriever.ainvoke("box Onyx décodeur")]
    assert sync == async_ and sync[0] == "b_onyx.txt" and len(sync) == 2
    scores = sorted(s for _, s in kb.search("box Onyx décodeur", k=3, mode="hybrid"))
    floor = (scores[0] + scores[1]) / 2  # keeps two of the three
    strict = kb.as_retriever(k=3, score_threshold=floor, mode="hybrid").invoke("box Onyx décodeur")
    assert len(strict) == 2 and strict[0].metadata["source"] == "b_onyx.txt"
    dense = kb.as_retriever(k=3).invoke("box Onyx décodeur")  # the default
    assert [d.metadata["source"] for d in dense] == [
        d.metadata["source"] for d, _ in kb.search("box Onyx décodeur", k=3, mode="dense")
    ]
    assert dense == [d for d, _ in kb.search("box Onyx décodeur", k=3)]


@pytest.mark.parametrize("mode", ["bm25", "", None, "HYBRID"])
def test_an_unknown_mode_is_an_invalid_input(tmp_path: Path, mode: object) -> None:
    kb = KnowledgeBase.from_folder(_folder(tmp_path, BOXES), HashEmbeddings(), progress=False)
    with pytest.raises(InvalidInputError, match="search mode"):
        kb.search("box", mode=mode)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="search mode"):
        kb.as_retriever(mode=mode)  # type: ignore[arg-type]


def test_lexical_ranking_skips_chunks_without_a_shared_word() -> None:
    lexical = LexicalIndex(["Pilates le mardi.", "Yoga le jeudi.", "Boxe le samedi."])
    scores = lexical.scores("cours de yoga")
    assert scores[1] > 0 and scores[0] == scores[2] == 0
    # dense order 0, 2, 1; BM25 votes only for 1: it rises, the others keep their order
    assert hybrid_ranking([0, 2, 1], scores) == [1, 0, 2]
    assert hybrid_ranking([0, 2, 1], np.zeros(3)) == [0, 2, 1]
    assert hybrid_ranking([0, 2, 1], scores, depth=1) == [0, 1]
