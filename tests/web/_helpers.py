"""Helpers of the web app's tests: the scripted assistant and an SSE reader."""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import httpx
from httpx_sse import aconnect_sse
from langchain_core.messages import BaseMessage

from memory_chains.testing import ScriptedChatModel
from memory_chains.web import ChatService, create_app

PILATES = "Quels sont les horaires du cours de Pilates ?"
SATURDAY = "Et pour le samedi ?"
PILATES_ANSWER = "Le cours de Pilates a lieu le mardi à 12 h 30 et le jeudi à 19 h."
SATURDAY_ANSWER = "Il n'y a pas de cours de Pilates le samedi."
SATURDAY_REWRITE = (
    '{"about": ["Pilates"], "question": "Quels sont les horaires du cours de Pilates le samedi ?"}'
)


MakeService = Callable[..., ChatService]
"""``make_service(store_url=…, llm=…, **WebConfig fields)``."""


def kb_answer(messages: Sequence[BaseMessage]) -> str:
    """A scripted assistant: answers the question at the end of the answer prompt."""
    prompt = str(messages[-1].content)
    if "Context documents:" not in prompt:
        if SATURDAY in prompt and PILATES in prompt:
            return SATURDAY_REWRITE  # the rewrite the embedded model writes for the seed
        return '{"referent": "none"}'  # a rewriter call: no opinion (the rules rewrite)
    question = prompt.rsplit("Question:", 1)[-1].strip()
    if re.search(r"pilates", question, re.I) and re.search(r"samedi", question, re.I):
        return SATURDAY_ANSWER
    if re.search(r"pilates", question, re.I):
        return PILATES_ANSWER
    return f"Réponse à : {question}"


async def chat(
    http: httpx.AsyncClient, session: str, message: str, **extra: Any
) -> list[tuple[str, Any]]:
    """POST /chat and read every server-sent event as ``(event, decoded data)``."""
    body = {"session": session, "message": message, **extra}
    async with aconnect_sse(http, "POST", "/chat", json=body) as source:
        assert source.response.status_code == 200, await source.response.aread()
        return [(event.event, event.json()) async for event in source.aiter_sse()]


def final(events: list[tuple[str, Any]]) -> dict[str, Any]:
    """The ``final`` event's data (fails when the stream ended otherwise)."""
    kind, data = events[-1]
    assert kind == "final", events[-1]
    return dict(data)


class SlowScriptedModel(ScriptedChatModel):
    """A scripted model streaming one token every ``delay`` seconds (to see them arrive)."""

    delay: float = 0.04

    def _stream(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        for chunk in super()._stream(*args, **kwargs):
            time.sleep(self.delay)
            yield chunk


@contextmanager
def running_uvicorn(service: ChatService) -> Iterator[str]:
    """Serve ``service`` with a real uvicorn on 127.0.0.1 (a thread); yields its base URL."""
    import uvicorn

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = uvicorn.Config(create_app(service), host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
