"""Reading the JSONL evaluation sets: one parser per row, one error naming the bad line.

Example:
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "rows.jsonl"
    >>> _ = path.write_text('{"n": 1}\\n\\n{"n": 2}\\n', encoding="utf-8")
    >>> read_jsonl(path, lambda row: int(row["n"]), "{'n': integer}")
    [1, 2]
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from memory_chains._json import loads_bounded
from memory_chains.errors import InvalidInputError

__all__ = ["read_jsonl"]

T = TypeVar("T")


def read_jsonl(path: str | Path, parse: Callable[[Any], T], expected: str) -> list[T]:
    """``parse`` applied to the JSON object of every non-blank line of ``path``.

    Raises:
        InvalidInputError: a line is not JSON, or ``parse`` failed on it (``ValueError``,
            ``KeyError``, ``TypeError``, ``AttributeError``); the message gives the file,
            the line number, ``expected`` and the cause.
    """
    rows = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append(parse(loads_bounded(line)))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise InvalidInputError(f"{path}:{number}: expected {expected} ({exc})") from exc
    return rows
