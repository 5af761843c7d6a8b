"""The web app's conversation path with the embedded model: the Pilates seed scenario
through :class:`~memory_chains.web.ChatService` (every memory in one context, the context
prompt, streaming), on a real SQLite store. Two answers of the model (about 30 s idle)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memory_chains.providers import get_embeddings
from memory_chains.stores import open_store

from ._scenarios import SCENARIOS, build_parts, check_follow_up

pytestmark = pytest.mark.integration

web = pytest.importorskip("memory_chains.web", reason="needs the web extra")


async def test_the_pilates_follow_up_is_answered_from_memory(tmp_path: Path) -> None:
    scenario = next(s for s in SCENARIOS if s.id == "pilates-saturday")
    parts = build_parts(tmp_path / "kb")
    service = web.ChatService(
        parts["retriever"],
        llm=parts["llm"],
        store=open_store(f"sqlite:///{tmp_path / 'memory.sqlite3'}", resilient=True),
        embeddings=get_embeddings(),
        rewriter=parts["rewriter"],
    )
    finals: list[dict[str, Any]] = []
    for question in scenario.questions:
        events = [e async for e in service.chat(service.admit(), "claire", "s1", question)]
        tokens = "".join(data["text"] for kind, data in events if kind == "token")
        kind, data = events[-1]
        assert kind == "final", events[-1]
        assert tokens.strip() == data["answer"]  # streamed, then whole in the final event
        assert data["memory"]["stored"]
        finals.append(data)
    last = finals[-1]
    sources = list(dict.fromkeys(s["source"] for s in last["sources"]))
    check_follow_up(scenario, scenario.follow_up, last["rewritten"], sources, last["answer"])
    view = await service.memory_view("claire", "s1")
    assert view["turns"] == 2
