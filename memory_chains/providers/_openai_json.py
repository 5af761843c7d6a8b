"""How an OpenAI-compatible endpoint is asked for JSON, and the step down when it refuses.

The library's modules ask for structured answers with an OpenAI ``response_format``
(``json_schema``, sometimes ``json_object``). Not every server honours it: some refuse
``json_schema`` and accept ``json_object``, some refuse both. :func:`prepare_call` rewrites
one call for a :data:`JSON_MODES` level: ``json_schema`` sends the request as it is,
``json_object`` sends ``{"type": "json_object"}`` and puts the schema in the prompt,
``prompt`` sends no ``response_format`` and puts the instruction (and schema) in the prompt;
the callers' parsers then repair what the model breaks. :class:`JsonModes` remembers, per
endpoint and model, the level to use: ``auto`` starts at ``json_schema`` and steps down
once for each refusal, saying so once in the log.

The ``response_format`` goes in ``extra_body``: langchain-openai would otherwise send the
call through the SDK's ``parse()``, which raises on an answer cut by ``max_tokens``
instead of returning the text the callers know how to repair.

Example:
    >>> from langchain_core.messages import HumanMessage
    >>> fmt = {"type": "json_schema", "json_schema": {"name": "q", "schema": {"type": "object"}}}
    >>> call = prepare_call([HumanMessage("Et le prix ?")], {"response_format": fmt}, "prompt")
    >>> call.mode, "response_format" in call.kwargs.get("extra_body", {})
    ('prompt', False)
    >>> call.messages[-1].content.splitlines()[-1][-45:]
    'following this JSON schema: {"type":"object"}'
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage
from pydantic import BaseModel

from memory_chains.errors import InvalidInputError

__all__ = ["JSON_MODES", "JsonModes", "PreparedCall", "prepare_call"]

_log = logging.getLogger("memory_chains.providers")

JSON_MODES = ("json_schema", "json_object", "prompt")
"""From the strongest to the weakest way of asking for JSON."""

_STRUCTURED_TYPES = ("json_schema", "json_object")


@dataclass(frozen=True)
class PreparedCall:
    """One call as it is sent: messages, keyword arguments, and the JSON level used.

    Attributes:
        mode: the :data:`JSON_MODES` level of this call; ``None`` when the caller asked
            for no structured answer (nothing to step down from).
    """

    messages: list[BaseMessage]
    kwargs: dict[str, Any]
    mode: str | None


def _as_format(value: Any) -> dict[str, Any]:
    """A ``response_format`` as a dict (a pydantic class becomes its JSON schema)."""
    if isinstance(value, type) and issubclass(value, BaseModel):
        return {
            "type": "json_schema",
            "json_schema": {"name": value.__name__, "schema": value.model_json_schema()},
        }
    if isinstance(value, Mapping):
        return dict(value)
    raise InvalidInputError(
        f"response_format must be a dict or a pydantic model class, got {value!r:.100}"
    )


def _instruction(fmt: Mapping[str, Any]) -> str:
    schema = (fmt.get("json_schema") or {}).get("schema") if fmt["type"] == "json_schema" else None
    text = "Answer with one JSON object only, no prose, no code fence"
    if schema:
        compact = json.dumps(schema, ensure_ascii=False, separators=(",", ":"))
        return f"{text}, following this JSON schema: {compact}"
    return text + "."


def _with_instruction(messages: Sequence[BaseMessage], instruction: str) -> list[BaseMessage]:
    """``messages`` with ``instruction`` at the end of the last human message (new list).

    At the end, so that the prompt's fixed prefix, which servers cache between calls, is
    the same in every mode; in a human message, because some chat templates refuse a
    system message after the first.
    """
    out = list(messages)
    last = out[-1] if out else None
    if isinstance(last, HumanMessage) and isinstance(last.content, str):
        out[-1] = last.model_copy(update={"content": f"{last.content}\n\n{instruction}"})
    else:
        out.append(HumanMessage(content=instruction))
    return out


def prepare_call(
    messages: Sequence[BaseMessage], kwargs: Mapping[str, Any], mode: str
) -> PreparedCall:
    """The call to send at JSON level ``mode`` (the inputs are not modified)."""
    kwargs = dict(kwargs)
    if kwargs.get("response_format") is None:
        kwargs.pop("response_format", None)
        return PreparedCall(list(messages), kwargs, None)
    fmt = _as_format(kwargs.pop("response_format"))
    extra = dict(kwargs.pop("extra_body", None) or {})
    if fmt.get("type") not in _STRUCTURED_TYPES:  # "text" and anything new: as is
        kwargs["extra_body"] = {**extra, "response_format": fmt}
        return PreparedCall(list(messages), kwargs, None)
    used = JSON_MODES[max(JSON_MODES.index(fmt["type"]), JSON_MODES.index(mode))]
    out = list(messages)
    if used == "json_schema":
        extra["response_format"] = fmt
    elif used == "json_object":
        extra["response_format"] = {"type": "json_object"}
        if fmt["type"] == "json_schema":
            out = _with_instruction(out, _instruction(fmt))
    else:
        out = _with_instruction(out, _instruction(fmt))
    if extra:
        kwargs["extra_body"] = extra
    return PreparedCall(out, kwargs, used)


class JsonModes:
    """The JSON level of each endpoint and model in this process, stepping down on refusal.

    Shared by every chat model of the process (the library builds several per endpoint),
    so an endpoint is probed and reported once.

    Example:
        >>> modes = JsonModes()
        >>> modes.current(("http://h/v1", "m"), "auto")
        'json_schema'
        >>> modes.step_down(("http://h/v1", "m"), "auto", "json_schema", "400: unsupported")
        'json_object'
        >>> modes.current(("http://h/v1", "m"), "json_schema")  # a fixed setting wins
        'json_schema'
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._levels: dict[tuple[str, str], str] = {}

    def current(self, key: tuple[str, str], configured: str) -> str:
        """The level to use now: ``configured`` unless it is ``auto``."""
        if configured != "auto":
            return configured
        with self._lock:
            return self._levels.get(key, JSON_MODES[0])

    def step_down(
        self, key: tuple[str, str], configured: str, failed: str, reason: str
    ) -> str | None:
        """After ``failed`` was refused: the next level to try, or ``None`` (give up).

        Only ``auto`` steps down. The first caller to see a refusal logs it; callers that
        were already in flight with the same level just retry at the new one.
        """
        if configured != "auto" or failed == JSON_MODES[-1]:
            return None
        following = JSON_MODES[JSON_MODES.index(failed) + 1]
        with self._lock:
            now = self._levels.get(key, JSON_MODES[0])
            if JSON_MODES.index(now) > JSON_MODES.index(failed):
                return now
            self._levels[key] = following
        how = (
            'response_format {"type": "json_object"} and the schema in the prompt'
            if following == "json_object"
            else "JSON in the prompt only (answers are repaired)"
        )
        _log.warning(
            "%s refused response_format %s for model %r (%s); asking it for %s from now on "
            "(MEMORY_CHAINS_OPENAI_STRUCTURED=%s skips this probe)",
            key[0],
            failed,
            key[1],
            reason,
            how,
            following,
        )
        return following
