"""Normalising a conversation history into ``(role, text)`` turns.

Roles come out as ``"user"`` or ``"assistant"``; system and empty messages are dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from memory_chains._history import Turn, read_history

__all__ = ["Turn", "last_user_text", "normalise_history"]


def last_user_text(turns: Sequence[Turn]) -> str:
    """The text of the latest user turn in ``turns`` ("" if there is none).

    Example:
        >>> last_user_text([("user", "Bonjour"), ("assistant", "Oui ?"), ("user", "Et alors ?")])
        'Et alors ?'
        >>> last_user_text([("assistant", "Bonjour")])
        ''
    """
    return next((text for role, text in reversed(turns) if role == "user"), "")


def normalise_history(history: Iterable[Any] | None) -> tuple[Turn, ...]:
    """Accept ``(role, text)`` pairs or LangChain messages; return ``(user|assistant, text)``
    with each text's whitespace collapsed (:func:`memory_chains._history.read_history`).

    Raises:
        InvalidInputError: an item is neither a message nor a ``(role, text)`` pair with a
            known role.

    Example:
        >>> normalise_history([("human", "Et  la\\ncarte ?")])
        (('user', 'Et la carte ?'),)
    """
    return read_history(history, collapse_whitespace=True)
