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

from typing import Any

from memory_chains._history import Turn, read_history

__all__ = ["Turn", "normalise_history", "parse_history", "render_history"]

_PREFIX = {"human": "Human: ", "ai": "Assistant: "}
# Prefixes read back: ours, and those of LangChain's string memories and common transcripts.
_READ_PREFIXES = (
    ("Human: ", "human"),
    ("User: ", "human"),
    ("Assistant: ", "ai"),
    ("AI: ", "ai"),
)
_TYPES = {"user": "human", "assistant": "ai"}
_INDENT = "  "


def normalise_history(history: Any) -> list[Turn]:
    """Turn a string, messages, ``(human, ai)`` pairs or ``(role, text)`` pairs into turns.

    Two-element tuples whose first element is a known role (``human``, ``user``, ``ai``,
    ``assistant``…) are ``(role, text)``; other two-element tuples are the classic chain's
    ``(human_text, ai_text)`` exchanges. A string is a transcript (:func:`parse_history`).
    System, tool and empty messages are dropped. Roles come out as ``human`` and ``ai``,
    LangChain's message types (:func:`memory_chains._history.read_history` reads them).

    Raises:
        InvalidInputError: an element is neither a message nor a pair of strings.

    Example:
        >>> normalise_history([("user", "Bonjour"), ("Et le prix ?", "499 €")])
        [('human', 'Bonjour'), ('human', 'Et le prix ?'), ('ai', '499 €')]
    """
    if history is None:
        return []
    if isinstance(history, str):
        return parse_history(history)
    return [(_TYPES[role], text) for role, text in read_history(history, exchanges=True)]


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
