"""JSON-schema structured output: the schema to send, and the parser of the answer.

:func:`structured_schema` accepts a pydantic model class or a JSON schema dict (or an
OpenAI function dict) and returns the schema llama.cpp turns into a grammar, plus a parser
that raises :class:`~memory_chains.errors.MalformedOutputError` (keeping the raw text) when
the answer is not valid JSON or does not validate. The parser skips a Markdown fence and
prose around the JSON value, which a server that ignores ``response_format`` lets through.
:func:`structured_runnable` is ``with_structured_output`` for any of our chat models.

Example:
    >>> name, schema, parse = structured_schema({"type": "object", "required": ["q"]})
    >>> parse('{"q": "Et le prix ?"}')
    {'q': 'Et le prix ?'}
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from langchain_core.language_models import LanguageModelInput
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable, RunnableLambda
from pydantic import BaseModel, ValidationError

from memory_chains.errors import InvalidInputError, MalformedOutputError

__all__ = ["structured_runnable", "structured_schema"]

_FENCE = re.compile(r"```[a-zA-Z]*")


def structured_schema(
    schema: dict[str, Any] | type,
) -> tuple[str, dict[str, Any], Callable[[str], Any]]:
    """(name, JSON schema, parser) for a pydantic class or a JSON schema dict."""
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        model = schema

        def parse_model(text: str) -> Any:
            data = _load_json(text)
            try:
                return model.model_validate(data)
            except ValidationError as exc:
                raise MalformedOutputError(
                    f"the model's answer does not match {model.__name__}: {exc}", raw=text
                ) from exc

        return model.__name__, model.model_json_schema(), parse_model
    if isinstance(schema, dict):
        if "parameters" in schema and "name" in schema:  # OpenAI function format
            name, json_schema = str(schema["name"]), dict(schema["parameters"])
        else:
            name, json_schema = str(schema.get("title", "output")), dict(schema)
        required = list(json_schema.get("required", ()))

        def parse_dict(text: str) -> Any:
            data = _load_json(text)
            if json_schema.get("type", "object") == "object":
                if not isinstance(data, dict):
                    raise MalformedOutputError("the model's answer is not a JSON object", raw=text)
                missing = [key for key in required if key not in data]
                if missing:
                    raise MalformedOutputError(
                        f"the model's answer lacks required keys {missing}", raw=text
                    )
            return data

        return name, json_schema, parse_dict
    raise InvalidInputError(
        f"with_structured_output needs a pydantic model class or a JSON schema dict, "
        f"got {schema!r:.100}"
    )


def _load_json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        error = exc
    cleaned = _FENCE.sub("", text)
    starts = [i for i in (cleaned.find("{"), cleaned.find("[")) if i >= 0]
    if starts:
        try:
            return json.JSONDecoder().raw_decode(cleaned[min(starts) :])[0]
        except ValueError:
            pass
    raise MalformedOutputError(
        f"the model's answer is not valid JSON ({error}); it may have hit max_tokens",
        raw=text,
    ) from error


def structured_runnable(
    model: BaseChatModel,
    schema: dict[str, Any] | type,
    *,
    include_raw: bool = False,
    method: str = "json_schema",
) -> Runnable[LanguageModelInput, Any]:
    """``model`` bound to a ``response_format`` for ``schema``, then the answer parsed.

    Args:
        model: the chat model (it must send ``response_format`` to its server).
        schema: a pydantic model class (the output is an instance) or a JSON schema dict.
        include_raw: return ``{"raw", "parsed", "parsing_error"}`` instead of raising.
        method: ``"json_schema"`` (the schema constrains the answer) or ``"json_mode"``
            (any JSON object; the prompt must describe it).

    Raises:
        InvalidInputError: the schema type or the method is not supported.
        MalformedOutputError: (at call time) the answer cannot be parsed or validated;
            ``exc.raw`` holds the model's text.
    """
    name, json_schema, parse = structured_schema(schema)
    if method == "json_schema":
        fmt: dict[str, Any] = {
            "type": "json_schema",
            "json_schema": {"name": name, "schema": json_schema},
        }
    elif method == "json_mode":
        fmt = {"type": "json_object"}
    else:
        raise InvalidInputError(
            f"{type(model).__name__}.with_structured_output supports method='json_schema' "
            f"or 'json_mode', not {method!r}"
        )
    bound = model.bind(
        response_format=fmt,
        ls_structured_output_format={"kwargs": {"method": method}, "schema": json_schema},
    )

    def parse_message(message: BaseMessage) -> Any:
        return parse(message.text)

    if not include_raw:
        return bound | RunnableLambda(parse_message, name="parse_structured_output")

    def parse_with_raw(message: BaseMessage) -> dict[str, Any]:
        try:
            return {"raw": message, "parsed": parse(message.text), "parsing_error": None}
        except MalformedOutputError as exc:
            return {"raw": message, "parsed": None, "parsing_error": exc}

    return bound | RunnableLambda(parse_with_raw, name="parse_structured_output")
