"""Helpers of the web app's tests: the scripted assistant and an SSE reader."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import httpx
from httpx_sse import aconnect_sse
from langchain_core.messages import BaseMessage

from memory_chains.web import ChatService

PILATES = "Quels sont les horaires du cours de Pilates ?"
SATURDAY = "Et pour le samedi ?"
PILATES_ANSWER = "Le cours de Pilates a lieu le mardi à 12 h 30 et le jeudi à 19 h."
SATURDAY_ANSWER = "Il n'y a pas de cours de Pilates le samedi."


MakeService = Callable[..., ChatService]
"""``make_service(store_url=…, llm=…, **WebConfig fields)``."""


def kb_answer(messages: Sequence[BaseMessage]) -> str:
    """A scripted assistant: answers the question at the end of the answer prompt."""
    prompt = str(messages[-1].content)
    if "Context documents:" not in prompt:
        return '{"referent": "none"}'  # a rewriter call: no opinion
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
