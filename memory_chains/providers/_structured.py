"""JSON-schema structured output: the schema to send, and the parser of the answer.

:func:`structured_schema` accepts a pydantic model class or a JSON schema dict (or an
OpenAI function dict) and returns the schema llama.cpp turns into a grammar, plus a parser
that raises :class:`~memory_chains.errors.MalformedOutputError` (keeping the raw text) when
the answer is not valid JSON or does not validate.

Example:
    >>> name, schema, parse = structured_schema({"type": "object", "required": ["q"]})
    >>> parse('{"q": "Et le prix ?"}')
    {'q': 'Et le prix ?'}
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ValidationError

from memory_chains.errors import InvalidInputError, MalformedOutputError

__all__ = ["structured_schema"]


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
        raise MalformedOutputError(
            f"the model's answer is not valid JSON ({exc}); it may have hit max_tokens",
            raw=text,
        ) from exc
