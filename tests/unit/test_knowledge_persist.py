"""KnowledgeBase on disk: round trip, reuse, rebuild, and refusing anything tampered."""

from __future__ import annotations

import json
import logging
import os
import pickle
from pathlib import Path
from typing import Any

import faiss
import numpy as np
import pytest

from memory_chains.errors import IndexCorruptedError, KnowledgeBaseError
from memory_chains.knowledge import KnowledgeBase
from memory_chains.knowledge._persist import (
    DOCSTORE_FILE,
    INDEX_FILE,
    MANIFEST_FILE,
    _sha256,
)
from memory_chains.testing import HashEmbeddings


class CountingEmbeddings(HashEmbeddings):
    def __init__(self, dim: int = 256) -> None:
        super().__init__(dim)
        self.document_calls = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.document_calls += 1
        return super().embed_documents(texts)


class OtherEmbeddings(HashEmbeddings):
    model_name = "other-model"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "livraison.md").write_text("# Livraison\n\nLivraison en 48 heures.", encoding="utf-8")
    (root / "retours.txt").write_text("Retours sous trente jours.", encoding="utf-8")
    return root


@pytest.fixture
def index_dir(tmp_path: Path, folder: Path) -> Path:
    target = tmp_path / "index"
    KnowledgeBase.from_folder(folder, HashEmbeddings(), index_dir=target, progress=False)
    return target


def build(folder: Path, index_dir: Path, embeddings: HashEmbeddings, **kw: Any) -> KnowledgeBase:
    return KnowledgeBase.from_folder(folder, embeddings, index_dir=index_dir, progress=False, **kw)


def rewrite_json(path: Path, change: Any) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def fix_digest(index_dir: Path, name: str) -> None:
    """Make the manifest agree with an edited file, as a careful attacker would."""
    digest = _sha256((index_dir / name).read_bytes())
    rewrite_json(index_dir / MANIFEST_FILE, lambda m: m["sha256"].__setitem__(name, digest))


# ---------------------------------------------------------------- round trip


def test_writes_only_faiss_and_json_files(index_dir: Path) -> None:
    assert sorted(p.name for p in index_dir.iterdir()) == sorted(
        [INDEX_FILE, DOCSTORE_FILE, MANIFEST_FILE]
    )
    manifest = json.loads((index_dir / MANIFEST_FILE).read_text(encoding="utf-8"))
    assert manifest["format_version"] == 1
    assert manifest["embeddings"] == {
        "class": "memory_chains.testing.HashEmbeddings",
        "model": "",
        "dimension": 256,
    }
    assert manifest["chunking"] == {"chunk_size": 800, "chunk_overlap": 80}
    assert set(manifest["files"]) == {"livraison.md", "retours.txt"}
    assert manifest["count"] == 2
    assert faiss.read_index(str(index_dir / INDEX_FILE)).ntotal == 2


def test_load_round_trip_gives_the_same_results(folder: Path, tmp_path: Path) -> None:
    built = build(folder, tmp_path / "i", HashEmbeddings())
    loaded = KnowledgeBase.load(tmp_path / "i", HashEmbeddings())
    assert loaded.rebuilt is False
    assert loaded.documents == built.documents
    query = "# Livraison\n\nLivraison en 48 heures."
    assert [(d.id, round(s, 6)) for d, s in loaded.search(query)] == [
        (d.id, round(s, 6)) for d, s in built.search(query)
    ]
    assert loaded.search(query, k=1)[0][1] == pytest.approx(1.0, abs=1e-5)


def test_unchanged_folder_is_not_embedded_again(folder: Path, tmp_path: Path) -> None:
    first, second = CountingEmbeddings(), CountingEmbeddings()
    assert build(folder, tmp_path / "i", first).rebuilt is True
    assert first.document_calls == 1
    again = build(folder, tmp_path / "i", second)
    assert again.rebuilt is False
    assert second.document_calls == 0
    assert len(again) == 2


@pytest.mark.parametrize(
    "change",
    ["edit", "add", "delete", "chunking", "embeddings", "dimension"],
)
def test_changes_trigger_a_rebuild(folder: Path, tmp_path: Path, change: str) -> None:
    build(folder, tmp_path / "i", HashEmbeddings())
    embeddings: HashEmbeddings = CountingEmbeddings()
    kwargs: dict[str, Any] = {}
    if change == "edit":
        (folder / "retours.txt").write_text("Retours sous quinze jours.", encoding="utf-8")
    elif change == "add":
        (folder / "sub").mkdir()
        (folder / "sub" / "paiement.md").write_text("Carte ou virement.", encoding="utf-8")
    elif change == "delete":
        (folder / "retours.txt").unlink()
    elif change == "chunking":
        kwargs = {"chunk_size": 400, "chunk_overlap": 20}
    elif change == "embeddings":
        embeddings = OtherEmbeddings()
    elif change == "dimension":
        embeddings = CountingEmbeddings(dim=64)
    kb = build(folder, tmp_path / "i", embeddings, **kwargs)
    assert kb.rebuilt is True
    reloaded = KnowledgeBase.load(tmp_path / "i", embeddings)
    assert reloaded.manifest == kb.manifest
    assert {d.metadata["source"] for d in reloaded.documents} == set(kb.manifest.files)


def test_load_with_other_embeddings_is_refused(index_dir: Path) -> None:
    with pytest.raises(KnowledgeBaseError, match="built with"):
        KnowledgeBase.load(index_dir, OtherEmbeddings())
    with pytest.raises(KnowledgeBaseError, match="built with"):
        KnowledgeBase.load(index_dir, HashEmbeddings(dim=64))


def test_load_without_an_index_says_how_to_build_one(tmp_path: Path) -> None:
    with pytest.raises(KnowledgeBaseError, match="from_folder") as info:
        KnowledgeBase.load(tmp_path, HashEmbeddings())
    assert not isinstance(info.value, IndexCorruptedError)


def test_no_temporary_files_are_left_behind(folder: Path, tmp_path: Path) -> None:
    build(folder, tmp_path / "i", HashEmbeddings())
    (folder / "retours.txt").write_text("changed", encoding="utf-8")
    build(folder, tmp_path / "i", HashEmbeddings())
    assert not [p for p in os.listdir(tmp_path / "i") if p.endswith(".tmp")]


# ------------------------------------------------------------------ security


class _Payload:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (Path.write_text, (self.marker, "pwned"))


def test_a_pickle_payload_is_never_executed(index_dir: Path, folder: Path, tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    payload = pickle.dumps(_Payload(marker))
    # Where LangChain's FAISS.load_local and other pickle loaders would look.
    for name in ("index.pkl", "docstore.pkl", "index_to_docstore_id.pkl"):
        (index_dir / name).write_bytes(payload)
    proof = tmp_path / "proof"
    pickle.loads(pickle.dumps(_Payload(proof)))  # sanity: the payload fires when unpickled
    assert proof.read_text() == "pwned"
    KnowledgeBase.load(index_dir, HashEmbeddings()).search("Livraison")
    build(folder, index_dir, HashEmbeddings()).search("Livraison")
    assert not marker.exists()


def test_pickle_in_place_of_the_docstore_is_refused(index_dir: Path, tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    (index_dir / DOCSTORE_FILE).write_bytes(pickle.dumps(_Payload(marker)))
    fix_digest(index_dir, DOCSTORE_FILE)
    with pytest.raises(IndexCorruptedError, match="not valid JSON"):
        KnowledgeBase.load(index_dir, HashEmbeddings())
    assert not marker.exists()


@pytest.mark.parametrize("name", [INDEX_FILE, DOCSTORE_FILE, MANIFEST_FILE])
def test_truncated_files_are_corruption(index_dir: Path, name: str) -> None:
    data = (index_dir / name).read_bytes()
    (index_dir / name).write_bytes(data[: len(data) // 2])
    with pytest.raises(IndexCorruptedError):
        KnowledgeBase.load(index_dir, HashEmbeddings())


@pytest.mark.parametrize("name", [INDEX_FILE, DOCSTORE_FILE])
def test_missing_files_are_corruption(index_dir: Path, name: str) -> None:
    (index_dir / name).unlink()
    with pytest.raises(IndexCorruptedError, match="missing"):
        KnowledgeBase.load(index_dir, HashEmbeddings())


def test_garbage_faiss_file_is_corruption_even_with_a_matching_digest(index_dir: Path) -> None:
    (index_dir / INDEX_FILE).write_bytes(b"\x00garbage" * 100)
    with pytest.raises(IndexCorruptedError, match="sha256"):
        KnowledgeBase.load(index_dir, HashEmbeddings())
    fix_digest(index_dir, INDEX_FILE)
    with pytest.raises(IndexCorruptedError, match="cannot be read by FAISS"):
        KnowledgeBase.load(index_dir, HashEmbeddings())


def _replace_index(index_dir: Path, index: Any) -> None:
    faiss.write_index(index, str(index_dir / INDEX_FILE))
    fix_digest(index_dir, INDEX_FILE)


def test_foreign_index_type_is_corruption(index_dir: Path) -> None:
    l2 = faiss.IndexFlatL2(256)
    l2.add(np.eye(2, 256, dtype=np.float32))
    _replace_index(index_dir, l2)
    with pytest.raises(IndexCorruptedError, match="IndexFlatIP"):
        KnowledgeBase.load(index_dir, HashEmbeddings())


def test_vector_count_mismatch_is_corruption(index_dir: Path) -> None:
    ip = faiss.IndexFlatIP(256)
    ip.add(np.eye(3, 256, dtype=np.float32))
    _replace_index(index_dir, ip)
    with pytest.raises(IndexCorruptedError, match="3 vectors"):
        KnowledgeBase.load(index_dir, HashEmbeddings())


def test_dimension_mismatch_is_corruption(index_dir: Path) -> None:
    ip = faiss.IndexFlatIP(8)
    ip.add(np.eye(2, 8, dtype=np.float32))
    _replace_index(index_dir, ip)
    with pytest.raises(IndexCorruptedError, match="dimension"):
        KnowledgeBase.load(index_dir, HashEmbeddings())


def test_non_unit_vectors_are_corruption(index_dir: Path) -> None:
    ip = faiss.IndexFlatIP(256)
    ip.add(3 * np.eye(2, 256, dtype=np.float32))
    _replace_index(index_dir, ip)
    with pytest.raises(IndexCorruptedError, match="unit length"):
        KnowledgeBase.load(index_dir, HashEmbeddings())


def test_edited_docstore_is_refused_by_its_digest(index_dir: Path) -> None:
    rewrite_json(
        index_dir / DOCSTORE_FILE,
        lambda d: d["documents"][0].__setitem__("text", "Livraison offerte, cliquez ici"),
    )
    with pytest.raises(IndexCorruptedError, match="sha256"):
        KnowledgeBase.load(index_dir, HashEmbeddings())


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["documents"].pop(), "holds 1 chunks"),
        (lambda d: d["documents"][0]["metadata"].__setitem__("chunk", "0"), "metadata.chunk"),
        (lambda d: d["documents"][0].__setitem__("text", 42), "id/text"),
        (lambda d: d["documents"][1].__setitem__("id", d["documents"][0]["id"]), "duplicate"),
        (lambda d: d.__setitem__("documents", {}), "documents"),
    ],
)
def test_docstore_type_and_count_checks(index_dir: Path, edit: Any, message: str) -> None:
    rewrite_json(index_dir / DOCSTORE_FILE, edit)
    fix_digest(index_dir, DOCSTORE_FILE)
    with pytest.raises(IndexCorruptedError, match=message):
        KnowledgeBase.load(index_dir, HashEmbeddings())


@pytest.mark.parametrize(
    "edit",
    [
        lambda m: m.__setitem__("format_version", 99),
        lambda m: m.__setitem__("format", "something-else"),
        lambda m: m.__setitem__("count", "2"),
        lambda m: m["embeddings"].__setitem__("dimension", -1),
        lambda m: m["chunking"].__setitem__("chunk_overlap", 5000),
        lambda m: m["files"].__setitem__("x.md", "not-a-digest"),
        lambda m: m.pop("sha256"),
        lambda m: m.__setitem__("count", 3),
        lambda m: m["embeddings"].__setitem__("dimension", 128),
    ],
)
def test_edited_manifest_is_corruption(index_dir: Path, edit: Any) -> None:
    rewrite_json(index_dir / MANIFEST_FILE, edit)
    with pytest.raises(IndexCorruptedError):
        KnowledgeBase.load(index_dir, HashEmbeddings())


def test_manifest_that_is_not_json_is_corruption(index_dir: Path) -> None:
    (index_dir / MANIFEST_FILE).write_bytes(b"\x80\x04not json")
    with pytest.raises(IndexCorruptedError, match="not valid JSON"):
        KnowledgeBase.load(index_dir, HashEmbeddings())


def test_from_folder_rebuilds_a_corrupted_index(
    folder: Path, index_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (index_dir / INDEX_FILE).write_bytes(b"truncated")
    embeddings = CountingEmbeddings()
    with caplog.at_level(logging.WARNING, logger="memory_chains.knowledge"):
        kb = build(folder, index_dir, embeddings)
    assert kb.rebuilt is True and embeddings.document_calls == 1
    assert "rebuilding" in caplog.text
    assert KnowledgeBase.load(index_dir, CountingEmbeddings()).rebuilt is False


def test_index_dir_that_is_a_file_is_a_clear_error(folder: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("not a folder", encoding="utf-8")
    with pytest.raises(KnowledgeBaseError, match="cannot create index folder"):
        build(folder, blocker, HashEmbeddings())


def test_the_core_imports_neither_classic_nor_community(folder: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from memory_chains.knowledge import KnowledgeBase\n"
        "from memory_chains.testing import HashEmbeddings\n"
        f"kb = KnowledgeBase.from_folder({str(folder)!r}, HashEmbeddings(), progress=False,\n"
        f"                               index_dir={str(tmp_path / 'i')!r})\n"
        "kb.search('Livraison')\n"
        "prefixes = ('langchain_classic', 'langchain_community')\n"
        "print(sorted(m for m in sys.modules if m.startswith(prefixes)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "[]"
