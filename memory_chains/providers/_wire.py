"""Conversions between LangChain messages and llama.cpp's OpenAI-style dicts (pure).

Requests: :func:`to_llama_messages`. Responses: :func:`result_from_response` for a whole
answer, :func:`chunk_from_event` for one streamed event; both report ``usage_metadata``
(input/output/total tokens) and ``response_metadata`` (finish reason, timings, model).
Errors that llama.cpp returns as data become :class:`~memory_chains.errors.ModelCallError`.

Example:
    >>> from langchain_core.messages import HumanMessage
    >>> to_llama_messages([HumanMessage("salut")])
    [{'role': 'user', 'content': 'salut'}]
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult

from memory_chains.errors import InvalidInputError, ModelCallError

__all__ = ["check_response", "chunk_from_event", "result_from_response", "to_llama_messages"]

_log = logging.getLogger(__name__)


_ROLES: dict[type[BaseMessage], str] = {
    SystemMessage: "system",
    HumanMessage: "user",
    AIMessage: "assistant",
    ToolMessage: "tool",
}


def to_llama_messages(messages: Sequence[BaseMessage]) -> list[dict[str, str]]:
    """Convert LangChain messages to the OpenAI-style dicts llama.cpp expects."""
    converted: list[dict[str, str]] = []
    for message in messages:
        if isinstance(message, ChatMessage):
            role = message.role
        else:
            found = next((r for cls, r in _ROLES.items() if isinstance(message, cls)), None)
            if found is None:
                raise InvalidInputError(
                    f"ChatLlamaCpp cannot send a {type(message).__name__}; use system, "
                    "human, AI, tool or chat messages"
                )
            role = found
        converted.append({"role": role, "content": _text_content(message)})
    if not converted:
        raise InvalidInputError("ChatLlamaCpp needs at least one message")
    return converted


def _text_content(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        else:
            kind = block.get("type") if isinstance(block, dict) else type(block).__name__
            raise InvalidInputError(f"ChatLlamaCpp accepts text only, got a {kind!r} block")
    return "".join(parts)


def check_response(response: Any) -> dict[str, Any]:
    """Return ``response`` if it is an answer; raise ModelCallError for an error dict."""
    if not isinstance(response, dict):
        raise ModelCallError(f"llama.cpp returned {type(response).__name__}, expected a dict")
    if "error" in response:
        error = response["error"]
        detail = str(error.get("message", error) if isinstance(error, dict) else error)
        hint = " (raise MEMORY_CHAINS_N_CTX or shorten the prompt)" if "context" in detail else ""
        raise ModelCallError(f"llama.cpp returned an error: {detail}{hint}")
    timings = response.get("timings")
    if isinstance(timings, Mapping) and _log.isEnabledFor(logging.DEBUG):
        # Where a call's seconds went: prompt tokens computed vs reused from the cache.
        _log.debug(
            "llama.cpp call: %s prompt tokens computed (+%s cached) in %.1f s, "
            "%s generated in %.1f s",
            timings.get("prompt_n"),
            timings.get("cache_n"),
            float(timings.get("prompt_ms", 0)) / 1000,
            timings.get("predicted_n"),
            float(timings.get("predicted_ms", 0)) / 1000,
        )
    return response


def _usage(usage: Mapping[str, Any] | None, timings: Mapping[str, Any] | None) -> UsageMetadata:
    if usage:
        prompt = int(usage.get("prompt_tokens", 0))
        completion = int(usage.get("completion_tokens", 0))
    elif timings:  # a stream's final chunk carries timings even when usage is absent
        prompt = int(timings.get("prompt_n", 0)) + int(timings.get("cache_n", 0))
        completion = int(timings.get("predicted_n", 0))
    else:
        prompt = completion = 0
    return UsageMetadata(
        input_tokens=prompt, output_tokens=completion, total_tokens=prompt + completion
    )


def _metadata(response: Mapping[str, Any], finish_reason: Any) -> dict[str, Any]:
    metadata: dict[str, Any] = {"finish_reason": finish_reason, "model_provider": "llamacpp"}
    if response.get("model"):
        metadata["model_name"] = Path(str(response["model"])).name
    if response.get("timings"):
        metadata["timings"] = dict(response["timings"])
    return metadata


def result_from_response(response: Mapping[str, Any]) -> ChatResult:
    """A whole chat completion → LangChain result, with usage and response metadata."""
    try:
        choice = response["choices"][0]
        text = choice["message"].get("content") or ""
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise ModelCallError(f"unexpected llama.cpp response: {response!r:.300}") from exc
    message = AIMessage(
        content=text,
        usage_metadata=_usage(response.get("usage"), response.get("timings")),
        response_metadata=_metadata(response, choice.get("finish_reason")),
        id=response.get("id"),
    )
    return ChatResult(generations=[ChatGeneration(message=message)])


def chunk_from_event(event: Mapping[str, Any]) -> ChatGenerationChunk | None:
    """One streamed dict → a chunk; None when it carries nothing.

    llama.cpp sends the text deltas, then a chunk with the finish reason, then (with
    ``include_usage``) a chunk with usage and timings. Each piece of metadata is put on one
    chunk only, because LangChain concatenates string metadata when it merges chunks.
    """
    if "error" in event:
        check_response(event)
    choices = event.get("choices") or []
    choice = choices[0] if choices else {}
    text = (choice.get("delta") or {}).get("content") or ""
    metadata: dict[str, Any] = {}
    if choice.get("finish_reason") is not None:
        metadata["finish_reason"] = choice["finish_reason"]
    usage: UsageMetadata | None = None
    if event.get("usage") or event.get("timings"):
        usage = _usage(event.get("usage"), event.get("timings"))
        metadata.update(_metadata(event, metadata.get("finish_reason")))
        if metadata["finish_reason"] is None:
            del metadata["finish_reason"]
    if not text and not metadata:
        return None
    return ChatGenerationChunk(
        message=AIMessageChunk(
            content=text, id=event.get("id"), usage_metadata=usage, response_metadata=metadata
        )
    )
