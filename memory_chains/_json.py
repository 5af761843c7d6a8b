"""JSON the library reads: from disk or a store, with a nesting limit (:func:`loads_bounded`),
and from a model, repaired (:func:`parse_json_object`).

``json.loads`` recurses once per nesting level, so a file of ten thousand ``[`` raises
``RecursionError`` (or worse, deep in a C stack) instead of a parse error. Everything the
library reads back (index manifests and docstores, store documents, caches) goes through
:func:`loads_bounded`, which refuses a nesting deeper than :data:`MAX_JSON_DEPTH` with a
plain :class:`JSONDepthError` (a ``ValueError``) that each caller maps onto its typed
error, as it does for a syntax error.

:func:`parse_json_object` returns the first JSON object found in a model's answer, after
stripping Markdown fences and closing the brackets and strings a truncated answer left
open; it raises :class:`~memory_chains.errors.MalformedOutputError` (keeping the raw text)
when nothing can be recovered.

Example:
    >>> loads_bounded('{"a": [1, 2]}')
    {'a': [1, 2]}
    >>> loads_bounded("[" * 500 + "]" * 500)
    Traceback (most recent call last):
    ...
    memory_chains._json.JSONDepthError: JSON nested deeper than 100 levels
    >>> parse_json_object('```json\\n{"entities": [{"name": "Dell XPS 15", "type": "PRO')
    {'entities': [{'name': 'Dell XPS 15', 'type': 'PRO'}]}
"""

from __future__ import annotations

import json
import re
from typing import Any

from memory_chains.errors import MalformedOutputError

__all__ = ["MAX_JSON_DEPTH", "JSONDepthError", "json_depth", "loads_bounded", "parse_json_object"]

#: Deepest nesting accepted; nothing the library writes comes near it.
MAX_JSON_DEPTH = 100

# a string (skipped whole, escapes included) or a bracket
_TOKEN_RE = re.compile(r'"(?:[^"\\]|\\.)*+"|[\[\]{}]')


class JSONDepthError(ValueError):
    """A JSON text nested deeper than allowed."""


def json_depth(text: str, stop_after: int = MAX_JSON_DEPTH) -> int:
    """The nesting depth of a JSON text (brackets inside strings do not count); the scan
    stops as soon as it exceeds ``stop_after``.

    Example:
        >>> json_depth('{"a": "[[[", "b": [[1]]}')
        3
    """
    depth = deepest = 0
    for match in _TOKEN_RE.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > stop_after:
                    break
        elif token in "]}":
            depth -= 1
    return deepest


def loads_bounded(data: str | bytes, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads`` of ``data``, refusing a nesting deeper than ``max_depth``.

    Raises:
        JSONDepthError: nested too deep.
        ValueError: not JSON (``json.JSONDecodeError``) or not UTF-8.
    """
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    # few brackets in all (strings included): it cannot be nested deeper, skip the scan
    few = text.count("[") + text.count("{") <= max_depth
    if not few and json_depth(text, max_depth) > max_depth:
        raise JSONDepthError(f"JSON nested deeper than {max_depth} levels")
    try:
        return json.loads(text)
    except RecursionError as exc:  # pragma: no cover - the depth check comes first
        raise JSONDepthError(f"JSON nested too deep: {exc}") from None


_FENCE = re.compile(r"```[a-zA-Z]*")


def parse_json_object(text: str, *, keep_cut_string: bool = True) -> dict[str, Any]:
    """Parse the first JSON object in ``text``, repairing what a small model breaks.

    Args:
        text: the model's answer.
        keep_cut_string: a truncated answer's last, unfinished string is closed and kept
            (an entity's type cut to ``"PRO"``); ``False`` drops it with its element, for
            answers whose strings are sentences (a summary item cut mid-sentence).

    Raises:
        MalformedOutputError: no object could be recovered; ``raw`` holds ``text``.

    Example:
        >>> parse_json_object('{"facts": ["Order 4821.", "Sent to Ly', keep_cut_string=False)
        {'facts': ['Order 4821.']}
    """
    cleaned = _FENCE.sub("", text or "").strip()
    start = cleaned.find("{")
    if start < 0:
        raise MalformedOutputError("the model's answer contains no JSON object", raw=text)
    body = cleaned[start:]
    decoder = json.JSONDecoder()
    try:
        value, _ = decoder.raw_decode(body)  # ignores anything after the first object
    except json.JSONDecodeError:
        value = _close_truncated(body, text, keep_cut_string)
    if not isinstance(value, dict):
        raise MalformedOutputError("the model's answer is not a JSON object", raw=text)
    return value


def _close_truncated(body: str, raw: str, keep_cut_string: bool) -> Any:
    """Cut ``body`` after its last complete value and close what is still open."""
    stack: list[str] = []
    in_string = escaped = False
    safe_cut = 0  # end of the last position where the prefix is a clean cut point
    safe_stack: list[str] = []
    for i, ch in enumerate(body):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if not stack:
                break
            stack.pop()
            safe_cut, safe_stack = i + 1, list(stack)
            if not stack:
                break
        elif ch == ",":
            safe_cut, safe_stack = i, list(stack)
    candidates = []
    if in_string and keep_cut_string:
        # Close the open string, then try to close the structure around it.
        candidates.append(body + '"' + "".join(reversed(stack)))
    candidates.append(body.rstrip().rstrip(",") + "".join(reversed(stack)))
    if safe_cut:
        candidates.append(body[:safe_cut].rstrip().rstrip(",") + "".join(reversed(safe_stack)))
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            continue
    raise MalformedOutputError(
        "the model's answer is not valid JSON and cannot be repaired", raw=raw
    )
