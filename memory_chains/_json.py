"""JSON read from disk or from a store, with a nesting limit: :func:`loads_bounded`.

``json.loads`` recurses once per nesting level, so a file of ten thousand ``[`` raises
``RecursionError`` (or worse, deep in a C stack) instead of a parse error. Everything the
library reads back (index manifests and docstores, store documents, caches) goes through
:func:`loads_bounded`, which refuses a nesting deeper than :data:`MAX_JSON_DEPTH` with a
plain :class:`JSONDepthError` (a ``ValueError``) that each caller maps onto its typed
error, as it does for a syntax error.

Example:
    >>> loads_bounded('{"a": [1, 2]}')
    {'a': [1, 2]}
    >>> loads_bounded("[" * 500 + "]" * 500)
    Traceback (most recent call last):
    ...
    memory_chains._json.JSONDepthError: JSON nested deeper than 100 levels
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["MAX_JSON_DEPTH", "JSONDepthError", "json_depth", "loads_bounded"]

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
