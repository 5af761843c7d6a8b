"""Text helpers shared by the memories: input normalisation, token counting, rendering.

:func:`normalize_message` is the one gate every message passes before it is masked and
stored. Its rules (documented for users in :class:`~memory_chains.memory.ShortTermMemory`):

* ``None`` and non-strings are refused with :class:`~memory_chains.errors.InvalidInputError`;
* text is put in Unicode NFC, ``\\r\\n`` and ``\\r`` become ``\\n``, other control
  characters (except tab and newline) are removed, surrounding whitespace is stripped;
* an empty human message is refused; an empty AI reply is stored as ``""``;
* a message longer than ``max_chars`` is refused, or cut with a ``" […]"`` marker when
  ``on_overflow="truncate"``.

Example:
    >>> normalize_message("  Bonjour\\x07 !\\r\\n ", "question")
    'Bonjour !'
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from typing import Literal

from memory_chains.errors import InvalidInputError
from memory_chains.stores import Turn

__all__ = [
    "DEFAULT_MAX_CHARS",
    "Overflow",
    "TokenCounter",
    "approximate_tokens",
    "default_token_counter",
    "normalize_message",
    "render_turns",
    "word_count",
]

TokenCounter = Callable[[str], int]
Overflow = Literal["error", "truncate"]

#: Longest message accepted by default (characters, after normalisation).
DEFAULT_MAX_CHARS = 32_000
_TRUNCATION_MARK = " […]"
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u200b\u2028\u2029\ufeff]")


def normalize_message(
    value: object,
    what: str,
    *,
    allow_empty: bool = False,
    max_chars: int = DEFAULT_MAX_CHARS,
    on_overflow: Overflow = "error",
) -> str:
    """Apply the normalisation rules above and return the clean text.

    Raises:
        InvalidInputError: ``None``, a non-string, an empty text (unless ``allow_empty``),
            or a text longer than ``max_chars`` with ``on_overflow="error"``.
    """
    if value is None:
        raise InvalidInputError(f"{what} is None: pass the message text as a string")
    if not isinstance(value, str):
        raise InvalidInputError(f"{what} must be a string, got {type(value).__name__}")
    text = unicodedata.normalize("NFC", value).replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL_RE.sub("", text).strip()
    if not text and not allow_empty:
        raise InvalidInputError(
            f"{what} is empty (after removing whitespace and control characters)"
        )
    if len(text) > max_chars:
        if on_overflow != "truncate":
            raise InvalidInputError(
                f"{what} has {len(text):,} characters, more than max_chars={max_chars:,}; "
                "raise max_chars or pass on_overflow='truncate'"
            )
        text = text[: max(0, max_chars - len(_TRUNCATION_MARK))].rstrip() + _TRUNCATION_MARK
    return text


def approximate_tokens(text: str) -> int:
    """A model-agnostic token estimate (:func:`memory_chains.providers.approximate_token_count`).

    Example:
        >>> approximate_tokens("un deux trois")
        4
    """
    from memory_chains.providers import approximate_token_count

    return approximate_token_count(text)


def default_token_counter(model: object = None) -> TokenCounter:
    """The project's offline token counter for ``model``: exact for the embedded model,
    the documented approximation otherwise (never LangChain's, which is 0 offline)."""
    from memory_chains.providers import get_token_counter

    counter: TokenCounter = get_token_counter(model)  # type: ignore[arg-type]
    return counter


def word_count(text: str) -> int:
    """Whitespace-separated words (the seed's ``memory_counter``).

    Example:
        >>> word_count("deux mots")
        2
    """
    return len(text.split())


def render_turns(turns: Sequence[Turn], human_prefix: str = "Human", ai_prefix: str = "AI") -> str:
    """Render turns as ``Human: …`` / ``AI: …`` lines, oldest first.

    Example:
        >>> render_turns([Turn(1, "Salut", "Bonjour")])
        'Human: Salut\\nAI: Bonjour'
    """
    lines: list[str] = []
    for t in turns:
        lines.append(f"{human_prefix}: {t.human}")
        lines.append(f"{ai_prefix}: {t.ai}")
    return "\n".join(lines)
