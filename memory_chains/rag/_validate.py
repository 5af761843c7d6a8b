"""Checking a user's question before any chain runs: :func:`validate_question`.

Shared by the classic chain (:mod:`memory_chains.rag._chain`) and the LangChain 1.x
adapters (:mod:`memory_chains.langchain_v1`), so both refuse the same inputs.

Example:
    >>> validate_question("  Et le samedi ?  ")
    'Et le samedi ?'
"""

from __future__ import annotations

from typing import Any

from memory_chains.errors import InvalidInputError

__all__ = ["MAX_QUESTION_CHARS", "validate_question"]

MAX_QUESTION_CHARS = 8_000


def validate_question(value: Any, *, empty_hint: str = "") -> str:
    """The question, stripped; refuses non-strings, empty and over-long questions.

    Args:
        value: the question as given.
        empty_hint: appended to the message for an empty question (what to pass instead).

    Raises:
        InvalidInputError: not a string, empty once stripped, or over
            :data:`MAX_QUESTION_CHARS` characters.

    Example:
        >>> validate_question("", empty_hint="pass {'input': '...'}")
        Traceback (most recent call last):
        ...
        memory_chains.errors.InvalidInputError: the question is empty: pass {'input': '...'}
    """
    if not isinstance(value, str):
        raise InvalidInputError(f"the question must be a string, got {type(value).__name__}")
    cleaned = value.strip()
    if not cleaned:
        raise InvalidInputError("the question is empty" + (f": {empty_hint}" if empty_hint else ""))
    if len(cleaned) > MAX_QUESTION_CHARS:
        raise InvalidInputError(
            f"the question has {len(cleaned)} characters; the limit is {MAX_QUESTION_CHARS}"
        )
    return cleaned
