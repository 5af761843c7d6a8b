"""KnowledgeBase: loading, chunking, metadata, cosine search and the LangChain views."""

from __future__ import annotations

import functools
import io
import itertools
import sys
from pathlib import Path

import pytest
from langchain_core.documents import Document

from memory_chains.errors import (
    InvalidInputError,
    KnowledgeBaseError,
    MalformedOutputError,
    ModelCallError,
)
from memory_chains.knowledge import KnowledgeBase, sample_kb_path
from memory_chains.testing import HashEmbeddings

from ._threads import run_together, switching_often


class CountingEmbeddings(HashEmbeddings):
    """HashEmbeddings that count their calls (per instance)."""

    def __init__(self, dim: int = 256) -> None:
        super().__init__(dim)
        self.document_calls: list[list[str]] = []
        self.query_calls: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.document_calls.append(list(texts))
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.query_calls.append(text)
        return super().embed_query(text)


class ScaledEmbeddings(HashEmbeddings):
    """Returns vectors that are NOT unit length, to prove we normalise them."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[7.0 * x for x in v] for v in super().embed_documents(texts)]

    def embed_query(self, text: str) -> list[float]:
        return [0.25 * x for x in super().embed_query(text)]


def write(folder: Path, rel: str, text: str) -> Path:
    path = folder / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    write(root, "b_shop/retours.md", "# Retours\n\nTrente jours pour retourner un article.\n")
    write(root, "a_gym/pilates.txt", "Pilates le mardi et le jeudi.\n")
    write(root, "a_gym/notes.pdf", "not indexed")
    write(root, ".hidden/secret.md", "# Secret\n\nnot indexed either")
    write(root, "c.MD", "Upper-case suffix is indexed.\n")
    return root


def kb_of(folder: Path, **kwargs: object) -> KnowledgeBase:
    return KnowledgeBase.from_folder(folder, HashEmbeddings(), progress=False, **kwargs)  # type: ignore[arg-type]


# ------------------------------------------------------------------ loading


def test_loads_txt_and_md_recursively_sorted_and_skips_others(folder: Path) -> None:
    kb = kb_of(folder)
    assert [d.metadata["source"] for d in kb.documents] == [
        "a_gym/pilates.txt",
        "b_shop/retours.md",
        "c.MD",
    ]
    assert set(kb.manifest.files) == {"a_gym/pilates.txt", "b_shop/retours.md", "c.MD"}


def test_metadata_title_from_heading_or_file_name(folder: Path) -> None:
    by_source = {d.metadata["source"]: d for d in kb_of(folder).documents}
    assert by_source["b_shop/retours.md"].metadata == {
        "source": "b_shop/retours.md",
        "chunk": 0,
        "title": "Retours",
    }
    assert by_source["a_gym/pilates.txt"].metadata["title"] == "pilates"
    assert by_source["a_gym/pilates.txt"].id == "a_gym/pilates.txt#0"


def test_long_file_is_split_into_numbered_overlapping_chunks(tmp_path: Path) -> None:
    words = [f"mot{j:03d}" for j in range(150)]
    write(tmp_path, "long.md", "# Long\n\n" + " ".join(words))
    kb = KnowledgeBase.from_folder(
        tmp_path, HashEmbeddings(), chunk_size=300, chunk_overlap=40, progress=False
    )
    chunks = [d.page_content for d in kb.documents]
    assert len(chunks) > 3
    assert [d.metadata["chunk"] for d in kb.documents] == list(range(len(kb)))
    assert all(len(c) <= 300 for c in chunks)
    assert all(d.metadata["title"] == "Long" for d in kb.documents)
    for before, after in itertools.pairwise(chunks[1:]):  # chunks[0] is the heading
        assert after.split()[0] in before.split()  # consecutive chunks overlap
    assert set(words) <= set(" ".join(chunks).split())
    assert kb.manifest.chunk_size == 300 and kb.manifest.chunk_overlap == 40


def test_empty_folder_is_a_clear_error(tmp_path: Path) -> None:
    write(tmp_path, "image.png", "x")
    with pytest.raises(KnowledgeBaseError, match="holds no"):
        kb_of(tmp_path)


def test_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(KnowledgeBaseError, match="does not exist"):
        kb_of(tmp_path / "nope")


def test_blank_files_only_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "  \n\n ")
    with pytest.raises(KnowledgeBaseError, match="blank"):
        kb_of(tmp_path)


def test_undecodable_file_is_named_in_the_error(tmp_path: Path) -> None:
    write(tmp_path, "ok.md", "fine")
    (tmp_path / "latin1.txt").write_bytes("Télévision".encode("latin-1"))
    with pytest.raises(KnowledgeBaseError, match=r"latin1\.txt.*UTF-8"):
        kb_of(tmp_path)


@pytest.mark.parametrize(("size", "overlap"), [(0, 0), (100, 100), (100, -1), (True, 0)])
def test_bad_chunking_parameters_are_rejected(folder: Path, size: int, overlap: int) -> None:
    with pytest.raises(InvalidInputError):
        kb_of(folder, chunk_size=size, chunk_overlap=overlap)


def test_chunk_without_its_title_is_embedded_with_it(tmp_path: Path) -> None:
    filler = " ".join(f"remplissage{i}" for i in range(40))
    write(tmp_path, "x.md", f"# Zorglub Pro\n\n{filler}\n\nGarantie deux ans.")
    embeddings = CountingEmbeddings()
    kb = KnowledgeBase.from_folder(
        tmp_path, embeddings, chunk_size=120, chunk_overlap=0, progress=False
    )
    embedded = embeddings.document_calls[0]
    last = kb.documents[-1]
    assert "Zorglub" not in last.page_content
    assert embedded[-1] == f"Zorglub Pro\n\n{last.page_content}"
    doc, score = kb.search("Zorglub Pro. Garantie deux ans.", k=1)[0]
    assert doc.metadata["chunk"] == last.metadata["chunk"]
    assert score == pytest.approx(1.0, abs=1e-5)  # the title words count in its vector


# ------------------------------------------------------------------ search


def test_identical_text_scores_one_and_order_is_by_cosine(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "alpha beta gamma delta")
    write(tmp_path, "b.txt", "alpha beta epsilon zeta")
    write(tmp_path, "c.txt", "eta theta iota kappa")
    kb = KnowledgeBase.from_folder(tmp_path, ScaledEmbeddings(), progress=False)
    hits = kb.search("alpha beta gamma delta", k=3, mode="dense")
    assert [d.metadata["source"] for d, _ in hits] == ["a.txt", "b.txt", "c.txt"]
    scores = [s for _, s in hits]
    assert scores[0] == pytest.approx(1.0, abs=1e-5)
    assert scores == sorted(scores, reverse=True)
    assert scores[1] == pytest.approx(0.5, abs=1e-5)  # 2 of 4 words shared: cosine 2/4
    assert -1.0 <= scores[2] <= 1.0


def test_k_larger_than_the_index_returns_everything(folder: Path) -> None:
    kb = kb_of(folder)
    assert len(kb.search("Pilates", k=50)) == len(kb) == 3


def test_search_returns_copies(folder: Path) -> None:
    kb = kb_of(folder)
    doc, _ = kb.search("Pilates mardi", k=1)[0]
    doc.metadata["source"] = "changed"
    doc.page_content = "changed"
    assert kb.search("Pilates mardi", k=1)[0][0].metadata["source"] == "a_gym/pilates.txt"


@pytest.mark.parametrize(("query", "k"), [("", 4), ("   ", 4), ("ok", 0), ("ok", True)])
def test_bad_queries_are_rejected(folder: Path, query: str, k: int) -> None:
    with pytest.raises(InvalidInputError):
        kb_of(folder).search(query, k=k)


async def test_asearch_matches_search(folder: Path) -> None:
    kb = kb_of(folder)
    sync = kb.search("retourner un article", k=2)
    got = await kb.asearch("retourner un article", k=2)
    assert [(d.id, round(s, 6)) for d, s in got] == [(d.id, round(s, 6)) for d, s in sync]


def test_embeddings_failure_is_a_model_call_error(folder: Path) -> None:
    class Broken(HashEmbeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            raise ConnectionError("down")

    with pytest.raises(ModelCallError, match="down"):
        KnowledgeBase.from_folder(folder, Broken(), progress=False)


def test_malformed_embeddings_are_rejected(folder: Path) -> None:
    class Short(HashEmbeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return super().embed_documents(texts)[:-1]

    class NaN(HashEmbeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [[float("nan")] * self.dim for _ in texts]

    for bad in (Short(), NaN()):
        with pytest.raises(MalformedOutputError):
            KnowledgeBase.from_folder(folder, bad, progress=False)


def test_progress_bar_only_on_a_terminal(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert not sys.stderr.isatty()
    KnowledgeBase.from_folder(folder, HashEmbeddings(), progress=True)
    assert "Embedding" not in capsys.readouterr().err


def test_progress_bar_on_a_terminal_and_not_when_disabled(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    shown, hidden = Terminal(), Terminal()
    monkeypatch.setattr(sys, "stderr", shown)
    KnowledgeBase.from_folder(folder, HashEmbeddings(), progress=True)
    monkeypatch.setattr(sys, "stderr", hidden)
    KnowledgeBase.from_folder(folder, HashEmbeddings(), progress=False)
    assert "Embedding" in shown.getvalue() and "3/3" in shown.getvalue()
    assert hidden.getvalue() == ""


# ------------------------------------------------------------- LangChain views


def test_vectorstore_uses_inner_product_and_cosine_relevance(folder: Path) -> None:
    from langchain_community.vectorstores.utils import DistanceStrategy

    kb = kb_of(folder)
    store = kb.vectorstore
    assert store.distance_strategy == DistanceStrategy.MAX_INNER_PRODUCT
    assert store.index.ntotal == len(kb)
    text = "Pilates le mardi et le jeudi.\n"
    doc, score = store.similarity_search_with_relevance_scores(text, k=1)[0]
    assert doc.metadata["source"] == "a_gym/pilates.txt"
    assert score == pytest.approx(1.0, abs=1e-5)
    assert [round(s, 5) for _, s in store.similarity_search_with_relevance_scores(text, k=3)] == [
        round(s, 5) for _, s in kb.search(text, k=3)
    ]


def test_threads_asking_for_the_vectorstore_at_once_share_one(folder: Path) -> None:
    # Before 2026-12-02 the lazy build was unlocked: 20 of 30 bases built it more than once,
    # and texts added to one copy could vanish when another replaced it.
    for _ in range(10):
        kb = kb_of(folder)
        seen: list[int] = []
        with switching_often():
            run_together(*[functools.partial(_note_vectorstore, kb, seen)] * 4)
        assert len(set(seen)) == 1 and seen[0] == id(kb.vectorstore)


def _note_vectorstore(kb: KnowledgeBase, seen: list[int]) -> None:
    seen.append(id(kb.vectorstore))


def test_vectorstore_changes_do_not_leak_into_the_knowledge_base(folder: Path) -> None:
    kb = kb_of(folder)
    kb.vectorstore.add_texts(["Pilates Pilates Pilates"])
    assert len(kb) == 3
    assert all(d.page_content != "Pilates Pilates Pilates" for d, _ in kb.search("Pilates", k=5))


def test_retriever_k_and_threshold(folder: Path) -> None:
    kb = kb_of(folder)
    assert len(kb.as_retriever(k=2).invoke("Pilates mardi")) == 2
    strict = kb.as_retriever(k=3, score_threshold=0.99).invoke("Pilates le mardi et le jeudi.")
    assert [d.metadata["source"] for d in strict] == ["a_gym/pilates.txt"]
    assert all(isinstance(d, Document) for d in strict)


@pytest.mark.parametrize(("k", "threshold"), [(0, None), (2, 1.5), (2, -0.1)])
def test_retriever_bad_arguments(folder: Path, k: int, threshold: float | None) -> None:
    with pytest.raises(InvalidInputError):
        kb_of(folder).as_retriever(k=k, score_threshold=threshold)


# ----------------------------------------------------------------- sample KB


def test_sample_kb_is_small_french_and_focused() -> None:
    root = sample_kb_path()
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in {".md", ".txt"})
    assert 10 <= len(files) <= 30
    assert sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) < 40_000
    kb = KnowledgeBase.from_folder(root, HashEmbeddings(), progress=False)
    assert len(kb) == len(files)  # one focused chunk per file
    laptops = [p.read_text(encoding="utf-8") for p in (root / "ordinateurs").glob("*.md")]
    assert len(laptops) >= 6
    for page in laptops:
        assert "Prix" in page and "Carte graphique" in page and "Garantie" in page


def test_sample_kb_holds_the_demo_facts() -> None:
    root = sample_kb_path()
    dell = (root / "ordinateurs" / "dell_xps_15.md").read_text(encoding="utf-8")
    lenovo = (root / "ordinateurs" / "lenovo_thinkpad_x1_carbon.md").read_text(encoding="utf-8")
    asus = (root / "ordinateurs" / "asus_rog_strix_g15.md").read_text(encoding="utf-8")
    pilates = (root / "salle_de_sport" / "pilates.md").read_text(encoding="utf-8")
    assert "1599 €" in dell and "2 ans" in dell
    assert "1799 €" in lenovo and "3 ans" in lenovo
    assert "RTX 4060" in asus
    assert "mardi à 12 h 30" in pilates and "jeudi à 19 h 00" in pilates
    assert "pas de cours de Pilates le samedi" in pilates
    assert "Samedi : 8 h – 20 h" in (root / "salle_de_sport" / "horaires_ouverture.md").read_text(
        encoding="utf-8"
    )


def test_public_surface() -> None:
    import memory_chains.knowledge as knowledge

    assert knowledge.__all__ == sorted(knowledge.__all__)
    assert set(knowledge.__all__) == {
        "KnowledgeBase",
        "KnowledgeRetriever",
        "LexicalIndex",
        "Manifest",
        "SearchMode",
        "hybrid_ranking",
        "sample_kb_path",
    }
