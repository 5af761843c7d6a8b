"""The seed scenarios, shared by every conversational path's integration tests.

Each follow-up only makes sense with the previous turns. With memory, the rewritten question
must name the referent, retrieval must put the right page first, and the answer must carry
the fact that page holds. The classic chain (``test_seed_scenarios.py``) and the LangChain
1.x adapters (``test_langchain_v1_model.py``) are checked against the same list.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from memory_chains._folding import fold
from memory_chains.knowledge import KnowledgeBase, sample_kb_path
from memory_chains.providers import get_chat_model, get_embeddings
from memory_chains.rewrite import QueryRewriter


@dataclass(frozen=True)
class Scenario:
    """Opening turns, a follow-up, and what a correct answer to the follow-up shows.

    Attributes:
        opening: the questions asked before the follow-up.
        follow_up: the question that needs the conversation.
        rewrite_has: words the rewritten follow-up must contain (folded).
        top_source: the knowledge-base page retrieval must rank first.
        answer_has: the answer must contain one of these (folded).
        also_sources: pages retrieval must also return (a comparison's other thing).
        answer_also: for a comparison, the answer must also contain one of these.
    """

    id: str
    opening: tuple[str, ...]
    follow_up: str
    rewrite_has: tuple[str, ...]
    top_source: str
    answer_has: tuple[str, ...]
    also_sources: tuple[str, ...] = ()
    answer_also: tuple[str, ...] = ()

    @property
    def questions(self) -> list[str]:
        return [*self.opening, self.follow_up]


SCENARIOS = (
    Scenario(
        "returns-electronics",
        ("Quelle est votre politique de retour ?",),
        "Et pour les produits électroniques ?",
        ("retour", "electronique"),
        "boutique/retours_electronique.md",
        ("ouvert", "defectueu", "scelle"),
    ),
    Scenario(
        "pilates-saturday",
        ("Quels sont les horaires du cours de Pilates ?",),
        "Et pour le samedi ?",
        ("pilates", "samedi"),
        "salle_de_sport/pilates.md",
        ("pas ", "aucun"),
    ),
    Scenario(
        "dell-warranty",
        ("Je cherche le Dell XPS 15, vous l'avez ?",),
        "Quelle est sa garantie ?",
        ("dell", "garantie"),
        "ordinateurs/dell_xps_15.md",
        ("2 ans", "deux ans"),
    ),
    Scenario(
        "lenovo-comparison",
        ("Je cherche le Dell XPS 15, vous l'avez ?", "Quelle est sa garantie ?"),
        "Et compare à celui de Lenovo ?",
        ("dell", "lenovo"),
        "",  # either laptop's page may come first: both must be there
        ("3 ans", "trois ans"),
        also_sources=("ordinateurs/lenovo_thinkpad_x1_carbon.md", "ordinateurs/dell_xps_15.md"),
        answer_also=("2 ans", "deux ans"),
    ),
    Scenario(
        "asus-graphics-card",
        ("Parle-moi de l'ASUS ROG Strix G15.",),
        "Et la carte graphique ?",
        ("asus", "carte graphique"),
        "ordinateurs/asus_rog_strix_g15.md",
        ("4060",),
    ),
)

PARAMS = [pytest.param(s, id=s.id) for s in SCENARIOS]
"""``SCENARIOS`` as pytest parameters named by their ids."""


def build_parts(index_dir: Path) -> dict[str, Any]:
    """The embedded model, a retriever over the sample knowledge base, a rewriter."""
    llm = get_chat_model()
    kb = KnowledgeBase.from_folder(sample_kb_path(), get_embeddings(), index_dir=index_dir)
    return {"llm": llm, "retriever": kb.as_retriever(k=3), "rewriter": QueryRewriter(llm)}


def check_follow_up(
    scenario: Scenario, question: str, rewritten: str, sources: Sequence[str], answer: str
) -> None:
    """Assert that the follow-up was rewritten, retrieved and answered correctly."""
    shown = f"rewritten={rewritten!r} sources={list(sources)} answer={answer!r}"
    assert rewritten.strip() != question.strip(), shown
    for word in scenario.rewrite_has:
        assert word in fold(rewritten), shown
    assert sources, shown
    if scenario.top_source:
        assert sources[0] == scenario.top_source, shown
    assert all(page in sources for page in scenario.also_sources), shown
    assert any(fold(fact) in fold(answer) for fact in scenario.answer_has), shown
    if scenario.answer_also:
        assert any(fold(fact) in fold(answer) for fact in scenario.answer_also), shown


def source_names(docs: Sequence[Any]) -> list[str]:
    """The distinct ``source`` metadata of documents, in rank order."""
    names: list[str] = []
    for doc in docs:
        name = str(doc.metadata.get("source", "?"))
        if name not in names:
            names.append(name)
    return names


@dataclass
class Conversations:
    """Conversations that share opening questions are played once.

    "lenovo-comparison" opens with the whole "dell-warranty" conversation: asking those
    questions again would only recompute the same answers (temperature 0). ``play`` goes on
    from the longest conversation already played whose questions start the requested ones,
    so each answer is computed once per path; the follow-ups are still asked of the live
    memory that holds the earlier turns.

    Args:
        start: a new conversation (empty memory): ``(ask, state)``, where ``ask(question)``
            returns that exchange's result and ``state`` is whatever the test inspects after.
    """

    start: Callable[[], tuple[Callable[[str], Any], Any]]
    _played: dict[tuple[str, ...], tuple[Callable[[str], Any], Any, list[Any]]] = field(
        default_factory=dict
    )

    def play(self, questions: Sequence[str]) -> tuple[list[Any], Any]:
        """The results of ``questions`` asked in order, and the conversation's state."""
        wanted = tuple(questions)
        prefixes = [p for p in self._played if wanted[: len(p)] == p]
        if prefixes:
            prefix = max(prefixes, key=len)
            ask, state, results = self._played.pop(prefix)  # its memory goes on below
            results = list(results)
        else:
            (ask, state), results = self.start(), []
        for question in wanted[len(results) :]:
            results.append(ask(question))
        self._played[wanted] = (ask, state, results)
        return results, state
