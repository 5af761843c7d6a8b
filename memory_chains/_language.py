"""French or English? A function-word vote shared by the rewriter, the summarizer and the
long-term extractor (no model, no dependency).

Example:
    >>> detect_language("Quelle est sa garantie ?"), detect_language("What about it?")
    ('fr', 'en')
    >>> language_votes("Je préfère le matin")
    (3, 0)
"""

from __future__ import annotations

import re

__all__ = ["WORD_RE", "detect_language", "language_votes"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


WORD_RE = re.compile(r"[\w'’-]+", re.UNICODE)
_ACCENT = re.compile(r"[éèêàùçôîâû]")
# An inverted subject pronoun ("arrive-t-elle", "peut-on", "avez-vous").
_INVERSION = re.compile(r"-(?:t-)?(?:il|elle|ils|elles|on|vous|nous|je|tu)$")

_FR_WORDS = _words(
    """
    le la les un une des du de et est sont quel quelle quels quelles qui que quoi où
    comment combien pourquoi est-ce il elle ils elles je tu nous vous on son sa ses leur
    leurs ce cette ces pour avec dans sur pas ne au aux y en a ont peut puis-je mon ma mes
    votre vos c'est qu'est-ce faut-il quand oui non merci bonjour svp stp
    """
)
_EN_WORDS = _words(
    """
    the a an and is are was were what which who whom where when how why does do did it its
    they them their this that these those he she his her of for with in on to can could
    should would i you we my your about there
    """
)


def language_votes(text: str) -> tuple[int, int]:
    """``(french, english)``: function words of each language, plus one French vote for
    accented letters."""
    words = [w.lower().replace("’", "'") for w in WORD_RE.findall(text)]
    fr = sum(w in _FR_WORDS or bool(_INVERSION.search(w)) for w in words)
    en = sum(w in _EN_WORDS for w in words)
    if _ACCENT.search(text.lower()):
        fr += 1
    return fr, en


def detect_language(text: str) -> str:
    """Guess ``"fr"`` or ``"en"`` from function words (ties and unknowns go to ``"en"``)."""
    fr, en = language_votes(text)
    return "fr" if fr > en else "en"
