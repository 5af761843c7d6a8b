"""The app on a real uvicorn (127.0.0.1): concurrent sessions, a full queue, a reader who
leaves mid-answer. Scripted model streaming slowly; about 5 s in all."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import httpx
import pytest
from httpx_sse import aconnect_sse

from memory_chains.web import ChatService
from tests.web._helpers import (
    PILATES,
    PILATES_ANSWER,
    MakeService,
    SlowScriptedModel,
    chat,
    final,
    kb_answer,
    running_uvicorn,
)


@pytest.fixture
def slow_service(make_service: MakeService) -> ChatService:
    return make_service(llm=SlowScriptedModel(default=kb_answer, delay=0.02), max_waiting=32)


@pytest.fixture
def url(slow_service: ChatService) -> Iterator[str]:
    with running_uvicorn(slow_service) as base:
        yield base


async def _idle(http: httpx.AsyncClient) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        queue = (await http.get("/healthz")).json()["queue"]
        if not queue["running"] and not queue["waiting"]:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the model lane did not become idle")


async def test_concurrent_sessions_keep_their_turns_whole_and_in_order(
    url: str, slow_service: ChatService
) -> None:
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:

        async def converse(n: int) -> list[str]:
            answers = []
            for turn in range(3):
                done = final(await chat(http, f"c{n}", f"Question {turn} de la session {n}"))
                answers.append(done["answer"])
            return answers

        results = await asyncio.gather(*(converse(n) for n in range(6)))
    for n, answers in enumerate(results):
        assert answers == [f"Réponse à : Question {t} de la session {n}" for t in range(3)]
        stored = slow_service.store.turns_after("guest", f"c{n}", 0)
        assert [t.seq for t in stored] == [1, 2, 3]
        assert [t.human for t in stored] == [f"Question {t} de la session {n}" for t in range(3)]


async def test_a_full_queue_answers_503_while_the_admitted_ones_complete(
    make_service: MakeService,
) -> None:
    service = make_service(llm=SlowScriptedModel(default=kb_answer, delay=0.05), max_waiting=1)
    with running_uvicorn(service) as base:
        async with httpx.AsyncClient(base_url=base, timeout=30) as http:

            async def ask(n: int) -> int | str:
                body = {"session": f"q{n}", "message": PILATES}
                async with aconnect_sse(http, "POST", "/chat", json=body) as source:
                    if source.response.status_code != 200:
                        assert source.response.headers["retry-after"].isdigit()
                        return source.response.status_code
                    events = [e.event async for e in source.aiter_sse()]
                    return events[-1]

            first = asyncio.create_task(ask(0))
            await asyncio.sleep(0.3)  # the first is streaming
            outcomes = await asyncio.gather(ask(1), ask(2), ask(3))
            assert sorted(map(str, outcomes)) == ["503", "503", "final"]
            assert await first == "final"
            assert (await http.get("/healthz")).json()["queue"]["refused"] == 2


async def test_a_reader_who_leaves_mid_answer_leaves_memory_unchanged(
    url: str, slow_service: ChatService
) -> None:
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        body = {"session": "gone", "message": PILATES}
        async with aconnect_sse(http, "POST", "/chat", json=body) as source:
            async for event in source.aiter_sse():
                if event.event == "token":
                    break  # the tab is closed after the first token
        await _idle(http)
        assert slow_service.store.count_turns("guest", "gone") == 0
        done = final(await chat(http, "gone", PILATES))  # the next complete answer is kept
        assert done["answer"] == PILATES_ANSWER
        assert slow_service.store.count_turns("guest", "gone") == 1
