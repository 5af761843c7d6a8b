"""Repairing a model's almost-JSON answer: fences, prose around it, truncation.

:func:`parse_json_object` returns the first JSON object found in a text, after stripping
Markdown fences and closing the brackets and strings a truncated answer left open. It
raises :class:`~memory_chains.errors.MalformedOutputError` (keeping the raw text) when
nothing can be recovered.

Example:
    >>> parse_json_object('```json\\n{"entities": [{"name": "Dell XPS 15", "type": "PRO')
    {'entities': [{'name': 'Dell XPS 15', 'type': 'PRO'}]}
"""

from __future__ import annotations

import json
import re
from typing import Any

from memory_chains.errors import MalformedOutputError

__all__ = ["parse_json_object"]

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
