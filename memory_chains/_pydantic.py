"""Pydantic's ``ValidationError`` mapped onto the library's tree: :class:`TypedValidation`.

The LangChain shells (``BaseMemory`` subclasses, the chat model) are pydantic models, so a
wrong argument raises ``pydantic.ValidationError``, which is not one of ours. Put
:class:`TypedValidation` first among the bases and the constructor raises
:class:`~memory_chains.errors.InvalidInputError` instead, naming each bad field (the
pydantic error stays attached as ``__cause__``).

Example:
    >>> from pydantic import BaseModel
    >>> class Shell(TypedValidation, BaseModel):
    ...     k: int = 5
    >>> Shell(k="many")
    Traceback (most recent call last):
    ...
    memory_chains.errors.InvalidInputError: Shell: k: Input should be a valid integer, ...
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from memory_chains.errors import InvalidInputError

__all__ = ["TypedValidation", "invalid_input"]


def invalid_input(owner: str, exc: ValidationError) -> InvalidInputError:
    """One :class:`InvalidInputError` naming every field pydantic refused (an error of
    ours raised inside the model, which pydantic wrapped, keeps its own message)."""
    problems = []
    for error in exc.errors():
        ours = (error.get("ctx") or {}).get("error")
        where = ".".join(map(str, error.get("loc", ())))
        message = str(ours) if isinstance(ours, InvalidInputError) else error.get("msg", "")
        problems.append(f"{where}: {message}" if where else message)
    return InvalidInputError(f"{owner}: {'; '.join(problems)}")


class TypedValidation:
    """Mixin for pydantic models: ``ValidationError`` becomes ``InvalidInputError``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        try:
            super().__init__(*args, **kwargs)
        except ValidationError as exc:
            raise invalid_input(type(self).__name__, exc) from exc
