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
from functools import lru_cache

__all__ = ["fold", "fold_with_positions", "has_word"]


def fold_with_positions(text: str) -> tuple[str, list[int]]:
    """``text`` casefolded and without accents (whitespace kept), and for each character of
    the result the index of the character of ``text`` it comes from.

    Example:
        >>> fold_with_positions("Élo ß")
        ('elo ss', [0, 1, 2, 3, 4, 4])
    """
    folded: list[str] = []
    where: list[int] = []
    for index, char in enumerate(text):
        for part in unicodedata.normalize("NFKD", char.casefold()):
            if not unicodedata.combining(part):
                folded.append(part)
                where.append(index)
    return "".join(folded), where


@lru_cache(maxsize=8192)
def fold(text: str) -> str:
    """Lower-case ``text`` (casefold), strip accents and collapse whitespace.

    The same folding as :func:`fold_with_positions` (a property test checks it), done on
    the whole string at once: twice as fast, and it runs on every text compared. The same
    names and turns are folded again at every request, so recent results are cached.
    """
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(stripped.split())


def has_word(text: str, word: str) -> bool:
    """True when ``word`` occurs in ``text`` as a whole word (or phrase): not inside a
    longer word. Exact match: fold or casefold both sides first to ignore case."""
    return re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text) is not None
