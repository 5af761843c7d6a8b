"""Chat history in every shape the classic chain may hand us, as ``(role, text)`` turns.

``ConversationalRetrievalChain`` renders the history to one string before calling the
question generator. :func:`render_history` writes a transcript that reads naturally in a
prompt *and* parses back without ambiguity: each message starts a line with ``Human: `` or
``Assistant: `` and every continuation line of a multi-line message is indented by two
spaces, so a message can never forge the start of another one.

Example:
    >>> text = render_history([("human", "Bonjour"), ("ai", "Salut\\nHuman: pas un tour")])
    >>> parse_history(text)
    [('human', 'Bonjour'), ('ai', 'Salut\\nHuman: pas un tour')]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage

__all__ = ["Turn", "normalise_history", "parse_history", "render_history"]

Turn = tuple[str, str]

_PREFIX = {"human": "Human: ", "ai": "Assistant: "}
# Prefixes read back: ours, and those of LangChain's string memories and common transcripts.
_READ_PREFIXES = (
    ("Human: ", "human"),
    ("User: ", "human"),
    ("Assistant: ", "ai"),
    ("AI: ", "ai"),
)
_ROLE_ALIASES = {
    "human": "human",
    "user": "human",
    "ai": "ai",
    "assistant": "ai",
    "model": "ai",
}
_INDENT = "  "


def normalise_history(history: Any) -> list[Turn]:
    """Turn a string, messages, ``(human, ai)`` pairs or ``(role, text)`` pairs into turns.

    Two-element tuples whose first element is a known role (``human``, ``user``, ``ai``,
    ``assistant``…) are ``(role, text)``; other two-element tuples are the classic chain's
    ``(human_text, ai_text)`` exchanges. System messages and empty messages are dropped.

    Raises:
        TypeError: an element is neither a message nor a pair of strings.
    """
    if history is None:
        return []
    if isinstance(history, str):
        return parse_history(history)
    turns: list[Turn] = []
    for item in history:
        if isinstance(item, BaseMessage):
            role = _ROLE_ALIASES.get(item.type)
            text = item.text if isinstance(item.text, str) else str(item.content)
            if role and text.strip():
                turns.append((role, text))
        elif isinstance(item, Sequence) and not isinstance(item, str) and len(item) == 2:
            first, second = item
            if not isinstance(first, str) or not isinstance(second, str):
                raise TypeError(f"history pairs must hold strings, got {item!r}")
            role = _ROLE_ALIASES.get(first.strip().lower())
            if role is not None:
                if second.strip():
                    turns.append((role, second))
            else:
                turns.extend([("human", first), ("ai", second)])
        else:
            raise TypeError(
                "history items must be LangChain messages or 2-tuples of strings, "
                f"got {type(item).__name__}"
            )
    return turns


def render_history(history: Any) -> str:
    """Render any history shape as a transcript that :func:`parse_history` reads back.

    Usable as ``get_chat_history`` of ``ConversationalRetrievalChain``: unlike the chain's
    default, it also accepts a string (a memory with ``return_messages=False``).
    """
    lines = []
    for role, text in normalise_history(history):
        body = text.strip().replace("\n", "\n" + _INDENT)
        lines.append(_PREFIX[role] + body)
    return "\n".join(lines)


def parse_history(text: str) -> list[Turn]:
    """Parse a transcript written by :func:`render_history` (or LangChain's default one).

    Lines that do not start a message continue the previous message. LangChain's own
    renderings (``Human:`` / ``AI:``, no indentation) are accepted too, at the cost of their
    own ambiguity.
    """
    turns: list[list[str]] = []
    for line in text.split("\n"):
        for prefix, role in _READ_PREFIXES:
            if line.startswith(prefix):
                turns.append([role, line[len(prefix) :]])
                break
        else:
            if not turns:
                if line.strip():
                    turns.append(["human", line])
                continue
            turns[-1][1] += "\n" + (line[len(_INDENT) :] if line.startswith(_INDENT) else line)
    return [(role, body.strip()) for role, body in turns if body.strip()]
