"""A normalised view of a text for the PII detectors, with a map back to the original.

Personal numbers are written in many ways: ``fr76 3000 …`` or ``FR7630…``, digits grouped
with spaces, non-breaking or thin spaces, dots or dashes of any kind, full-width digits
(``４１１１``). :func:`fold` gives the detectors one spelling to match — NFKC (full-width
digits and letters become ASCII), every space-like character a plain space, every dash a
``-``, every dot-like character a ``.``, invisible format characters (zero-width spaces)
dropped — and :meth:`Folded.span` maps a match in that view back to the span of the
original text, which is what gets masked.

Example:
    >>> folded = fold("carte ４１１１\u00a0１１１１")
    >>> folded.text
    'carte 4111 1111'
    >>> folded.span(6, 15)
    (6, 15)
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["Folded", "fold"]

# dots other than "." that people put between digit groups (NFKC maps "．" and "․" already)
_DOTS = frozenset("·•‧∙⋅・")


@dataclass(frozen=True)
class Folded:
    """A normalised text and, for each of its characters, the index it came from.

    Attributes:
        text: the normalised text (the same length as the original when it is ASCII).
        origin: ``origin[i]`` is the index in the original of ``text[i]``; empty when the
            two are the same length and aligned (ASCII input).
        length: the length of the original text.
    """

    text: str
    origin: tuple[int, ...]
    length: int

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The span of the original text that ``text[start:end]`` comes from."""
        if not self.origin:
            return start, end
        if start >= end:
            return self.origin[start] if start < len(self.origin) else self.length, end
        return self.origin[start], self.origin[end - 1] + 1


def _fold_char(char: str) -> str:
    if char.isspace():
        return " "
    category = unicodedata.category(char)
    if category == "Pd" or char == "\u2212":  # dashes, and the minus sign
        return "-"
    if category == "Cf":  # zero-width spaces and joiners, soft hyphens, BOM
        return ""
    if char in _DOTS:
        return "."
    folded = unicodedata.normalize("NFKC", char)
    return " " if folded.isspace() else folded


@lru_cache(maxsize=64)
def fold(text: str) -> Folded:
    """The normalised view of ``text`` (cached: every detector of a masker folds the same
    text).

    Example:
        >>> fold("06\u202f12").text, fold("06\u202f12").origin
        ('06 12', ())
    """
    if text.isascii():
        return Folded(text.replace("\t", " "), (), len(text))
    parts: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        piece = (" " if char == "\t" else char) if char.isascii() else _fold_char(char)
        parts.append(piece)
        origin.extend([index] * len(piece))
    folded = "".join(parts)
    if origin == list(range(len(text))):
        return Folded(folded, (), len(text))  # one character for one: aligned
    return Folded(folded, tuple(origin), len(text))
