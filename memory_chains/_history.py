"""One reading of a conversation history, shared by every module that takes one.

A history reaches the library in many shapes: LangChain messages, ``(role, text)`` pairs,
the classic chain's ``(human_text, ai_text)`` exchanges. :func:`read_history` reads them
all into ``(role, text)`` :data:`Turn` pairs whose role is ``"user"`` or ``"assistant"``,
the one convention of the core modules; :func:`canonical_role` maps a role's spellings
onto it. Bad items raise :class:`~memory_chains.errors.InvalidInputError`, whoever calls.

Example:
    >>> from langchain_core.messages import AIMessage, HumanMessage
    >>> read_history([HumanMessage("Bonjour"), AIMessage("Oui ?"), ("Human", "Et alors ?")])
    (('user', 'Bonjour'), ('assistant', 'Oui ?'), ('user', 'Et alors ?'))
    >>> read_history([("Je cherche un vélo", "Lequel ?")], exchanges=True)
    (('user', 'Je cherche un vélo'), ('assistant', 'Lequel ?'))
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from langchain_core.messages import BaseMessage

from memory_chains.errors import InvalidInputError

__all__ = ["Turn", "canonical_role", "message_text", "read_history"]

#: One message of a conversation: ``(role, text)``, the role ``"user"`` or ``"assistant"``.
Turn = tuple[str, str]

_ROLES = {
    "human": "user",
    "user": "user",
    "ai": "assistant",
    "assistant": "assistant",
    "model": "assistant",
    "system": "system",
}


def canonical_role(name: str) -> str | None:
    """``"user"``, ``"assistant"`` or ``"system"`` for a role's spellings, else ``None``.

    Example:
        >>> canonical_role(" Human "), canonical_role("ai"), canonical_role("tool")
        ('user', 'assistant', None)
    """
    return _ROLES.get(name.strip().lower())


def message_text(message: BaseMessage) -> str:
    """The text of a LangChain message, whether its content is a string or blocks.

    Example:
        >>> from langchain_core.messages import AIMessage
        >>> message_text(AIMessage(content=[{"type": "text", "text": "Oui"}]))
        'Oui'
    """
    return message.text if isinstance(message.text, str) else str(message.content)


def read_history(
    history: Iterable[Any] | None, *, exchanges: bool = False, collapse_whitespace: bool = False
) -> tuple[Turn, ...]:
    """``(user|assistant, text)`` turns from messages and pairs; texts are kept as written
    (with ``collapse_whitespace=True``, each run of whitespace becomes one space).

    System messages, messages of other kinds (tool calls and results) and empty texts are
    dropped. A pair whose first element is a known role is ``(role, text)``; with
    ``exchanges=True`` any other pair of strings is a ``(human_text, ai_text)`` exchange.

    Raises:
        InvalidInputError: ``history`` is a string or not iterable, or an item is neither
            a message nor a pair of strings (with ``exchanges=False``, nor a pair with a
            known role).
    """
    if history is None:
        return ()
    if isinstance(history, str):
        raise InvalidInputError(
            "history must be a sequence of (role, text) pairs or messages, not a string"
        )
    if not isinstance(history, Iterable):
        raise InvalidInputError(
            f"history must be a sequence of messages or pairs, got {type(history).__name__}"
        )
    turns: list[Turn] = []
    for item in history:
        pairs: list[tuple[str | None, str]]
        if isinstance(item, BaseMessage):
            pairs = [(_ROLES.get(item.type), message_text(item))]
        elif isinstance(item, (tuple, list)) and len(item) == 2:
            first, second = item
            if not isinstance(first, str) or not isinstance(second, str):
                raise InvalidInputError(f"history pairs must hold two strings, got {item!r}")
            role = canonical_role(first)
            if role is None and not exchanges:
                raise InvalidInputError(
                    f"unknown role in history: {item!r} (use human/user or ai/assistant)"
                )
            pairs = [(role, second)] if role else [("user", first), ("assistant", second)]
        else:
            raise InvalidInputError(
                "history items must be LangChain messages or pairs of strings, "
                f"got {type(item).__name__}"
            )
        turns.extend(
            (role, " ".join(text.split()) if collapse_whitespace else text)
            for role, text in pairs
            if role is not None and role != "system" and text.strip()
        )
    return tuple(turns)
