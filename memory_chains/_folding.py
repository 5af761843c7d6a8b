"""Case- and accent-insensitive text folding, shared by every module that compares text.

Example:
    >>> fold("  Le Château   d'Île ")
    "le chateau d'ile"
    >>> has_word("en marche nordique", "marc"), has_word("avec marc.", "marc")
    (False, True)
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["fold", "has_word"]


def fold(text: str) -> str:
    """Lower-case ``text`` (casefold), strip accents and collapse whitespace."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(stripped.split())


def has_word(text: str, word: str) -> bool:
    """True when ``word`` occurs in ``text`` as a whole word (or phrase): not inside a
    longer word. Exact match: fold or casefold both sides first to ignore case."""
    return re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text) is not None
