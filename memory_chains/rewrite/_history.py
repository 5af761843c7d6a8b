"""Normalising a conversation history into ``(role, text)`` turns.

Roles come out as ``"user"`` or ``"assistant"``; system and empty messages are dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from langchain_core.messages import BaseMessage

from memory_chains.errors import InvalidInputError

Turn = tuple[str, str]

_ROLES = {
    "human": "user",
    "user": "user",
    "ai": "assistant",
    "assistant": "assistant",
    "system": "system",
}


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
    """Accept ``(role, text)`` pairs or LangChain messages; return ``(user|assistant, text)``.

    Raises:
        InvalidInputError: an item is neither a message nor a ``(role, text)`` pair with a
            known role.
    """
    if history is None:
        return ()
    if isinstance(history, str):
        raise InvalidInputError(
            "history must be a sequence of (role, text) pairs or messages, not a string"
        )
    turns: list[Turn] = []
    for item in history:
        if isinstance(item, BaseMessage):
            role = _ROLES.get(item.type)
            text = item.text if isinstance(item.text, str) else str(item.content)
        elif isinstance(item, (tuple, list)) and len(item) == 2:
            raw_role, text = item
            if not isinstance(raw_role, str) or not isinstance(text, str):
                raise InvalidInputError(f"history pairs must hold two strings, got {item!r}")
            role = _ROLES.get(raw_role.strip().lower())
        else:
            raise InvalidInputError(
                "history items must be LangChain messages or (role, text) pairs, "
                f"got {type(item).__name__}"
            )
        if role is None:
            raise InvalidInputError(
                f"unknown role in history: {item!r} (use human/user or ai/assistant)"
            )
        if role != "system" and text.strip():
            turns.append((role, " ".join(text.split())))
    return tuple(turns)
