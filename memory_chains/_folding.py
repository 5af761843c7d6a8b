"""Case- and accent-insensitive text folding, shared by every module that compares text.

Example:
    >>> fold("  Le Château   d'Île ")
    "le chateau d'ile"
"""

from __future__ import annotations

import unicodedata

__all__ = ["fold"]


def fold(text: str) -> str:
    """Lower-case ``text`` (casefold), strip accents and collapse whitespace."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(stripped.split())
