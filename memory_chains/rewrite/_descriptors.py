"""Descriptive references: "celui à 12,99 €", "celle sur devis", "the one with studios",
"the detached one" — a thing picked by what the conversation said about it.

Which name the description fits is a matter of where its words occur: next to one name in
the conversation, not the others. :func:`described_referent` finds, in each sentence that
holds a word of the description, the name mentioned nearest to that word, and returns the
name these votes agree on. Comparatives ("la moins chère", "the cheaper one") are left to
the model: they need arithmetic, not words.

Example:
    >>> turns = [("assistant", "Le Forfait Alizé est à 9,99 € et le Forfait Mistral à 12,99 €.")]
    >>> described_referent("et celui à 12,99, il marche où ?", turns,
    ...                    ["Forfait Mistral", "Forfait Alizé"])
    'Forfait Mistral'
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from memory_chains._folding import fold
from memory_chains._terms import keywords
from memory_chains.rewrite._history import Turn

__all__ = ["described_referent", "description"]

_I = re.IGNORECASE
_STOP = (
    r"(?:il|elle|ils|elles|on|je|j'|vous|nous|c'est|ça|ca|est|sont|a|peut|faut|can|is|are|"
    r"does|do|will|would|has|have|how|what|when|where|which|who)"
)
_FR = re.compile(
    r"\b(?:celui|celle|ceux|celles)(?:-ci|-là)?\s+(?P<desc>(?:à|a|de|du|des|d'|d’|avec|en|"
    r"pour|sans|sur|qui|où|au|aux)\b.*?)(?=\s" + _STOP + r"\b|[,?!.;]|$)",
    _I,
)
_EN = re.compile(
    r"\bthe\s+(?P<adj>(?:[\w-]+\s+){1,2})?ones?\b(?:\s+(?P<desc>(?:with|for|in|at|on|that|"
    r"which|near|from|by|without)\b.*?)(?=\s" + _STOP + r"\b|[,?!.;]|$))?",
    _I,
)
# Words that do not describe one thing apart: comparatives, and the referring words.
_GENERIC_TEXT = """
celui celle ceux celles one ones plus moins cher chere chers cheres grand grande petit petite
cheaper cheapest expensive bigger smaller biggest smallest best better other first second
third last latter former same
"""
_GENERIC = frozenset(_GENERIC_TEXT.split())
_DESCRIPTION_WORDS = 3
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")


def description(question: str) -> list[str]:
    """The describing words of a "celui …" / "the … one" reference in ``question``
    (folded), or [].

    Example:
        >>> description("the one with studios, can I leave early?")
        ['studios']
        >>> description("what are the API limits on the cheaper one?")
        []
    """
    found = _FR.search(question)
    text = _after_preposition(found.group("desc")) if found else ""
    if not found:
        english = _EN.search(question)
        if english:
            adjective, desc = english.group("adj", "desc")
            text = " ".join(x for x in (adjective, _after_preposition(desc or "")) if x)
    return [w for w in keywords(text) if w not in _GENERIC]


def _after_preposition(desc: str) -> str:
    """The words after the description's preposition, at most ``_DESCRIPTION_WORDS``."""
    return " ".join(desc.replace("’", "'").split()[1 : 1 + _DESCRIPTION_WORDS])


def described_referent(question: str, turns: Sequence[Turn], names: Sequence[str]) -> str | None:
    """The one name of ``names`` that the question's description sits next to in the
    conversation, or None (no description, no vote, or a tie).

    Example:
        >>> turns = [("assistant", "Quayside Apartments has studios; Elm Court has shared flats.")]
        >>> described_referent("the one with studios?", turns, ["Elm Court", "Quayside Apartments"])
        'Quayside Apartments'
    """
    words = description(question)
    # a name made of a describing word ("European") is that word, not what it describes
    names = [n for n in names if not set(words) & set(keywords(n))]
    if not words or len(names) < 2:
        return None
    votes: Counter[str] = Counter()
    patterns = [re.compile(rf"\b{re.escape(w)}\b") for w in words]
    for _, text in turns:
        for sentence in _SENTENCE.split(text):
            folded = fold(sentence)
            mentions = [
                (m.start(), m.end(), name)
                for name in names
                for m in re.finditer(re.escape(fold(name)), folded)
            ]
            if not mentions:
                continue
            for pattern in patterns:
                for hit in pattern.finditer(folded):
                    nearest = min(
                        mentions,
                        key=lambda m: max(m[0] - hit.end(), hit.start() - m[1], 0),
                    )
                    votes[nearest[2]] += 1
    ranked = votes.most_common(2)
    if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]
