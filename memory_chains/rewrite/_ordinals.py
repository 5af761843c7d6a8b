"""Ordinal references ("le second", "la 2e option", "the last one", "number 3") and the
lists they point into.

A small model asked "which of these names does 'the first one' mean?" answers with the most
recent or the most salient name, not the first of the list the user is looking at. Counting
is code's job: :func:`ordinal_referent` finds the latest turn that enumerates enough things
(a numbered list, "d'abord … ensuite … enfin", "first … second …", or a list after a colon)
and returns the item the ordinal designates; the model is then only asked to phrase the
question about it.

Example:
    >>> turns = [("assistant", "Trois cartes : Pivoine (14 €), Glycine (29 €) et Lilas.")]
    >>> ordinal_referent("la 2e a une assurance voyage ?", turns)
    'Glycine'
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memory_chains._folding import fold
from memory_chains.rewrite._history import Turn

__all__ = ["enumerated", "ordinal_index", "ordinal_phrase", "ordinal_referent"]

_I = re.IGNORECASE
# folded spelling → position (0 = first, -1 = last)
_WORDS = {
    "premier": 0, "premiere": 0, "1er": 0, "1re": 0, "1ere": 0, "first": 0, "1st": 0,
    "former": 0, "second": 1, "seconde": 1, "deuxieme": 1, "2e": 1, "2eme": 1, "2nd": 1,
    "troisieme": 2, "3e": 2, "3eme": 2, "third": 2, "3rd": 2, "quatrieme": 3, "4e": 3,
    "4eme": 3, "fourth": 3, "4th": 3, "cinquieme": 4, "5e": 4, "fifth": 4, "5th": 4,
    "dernier": -1, "derniere": -1, "last": -1, "latter": -1,
}  # fmt: skip
_ACCENTED = {"e": "[eéèê]"}
_SPELLINGS = "|".join(
    "".join(_ACCENTED.get(c, re.escape(c)) for c in word)
    for word in sorted(_WORDS, key=len, reverse=True)
)
# The words that stand for the referent: "la première étape", "le second", "the last one",
# "number 3". A noun after the ordinal belongs to it when a comma, the end of the question
# or a pronoun follows ("la deuxième démarche, il faut quoi ?"); "la première fois" is no
# reference.
_REFERENCE = re.compile(
    r"\b(?P<det>le|la|les|du|au|de la|à la|a la|the|that)\s+(?P<word>" + _SPELLINGS + r")\b"
    r"(?!\s+(?:fois|jour|[ée]tage|mois|semaine|trimestre|time|place|year|week|month)\b)"
    r"(?:\s+ones?\b|\s+[^\W\d_][\w-]*(?=\s*[,?!]|\s*$|\s+(?:il|elle|on|je|j'|vous|c'est|ça)\b))?"
    r"|\b(?:number|option|no\.?|n°|numéro|numero|choix)\s*(?P<n>[1-9])\b(?!\s*(?:[€$£%]|h\b))",
    _I,
)
# "1) X", "2. Y", "(3) Z" at the start of the text or after a space / a separator
_NUMBERED = re.compile(r"(?:^|(?<=[\s;:,]))\(?(?P<n>[1-9])[.)]\s+")
_SEQUENCE = re.compile(
    r"(?:^|(?<=[\s;:,.]))(?:d'abord|d’abord|premièrement|ensuite|puis|deuxièmement|"
    r"troisièmement|enfin|first(?:ly)?|second(?:ly)?|third(?:ly)?|then|next|finally|lastly)"
    r"\b[,:]?\s*",
    _I,
)
_LEAD = re.compile(r"^(?:et|ou|and|or|plus|puis|then)\s+", _I)
_DETERMINER = re.compile(r"^(?:(?:le|la|les|un|une|des|the|a|an)\s+|l['’]\s*)(?=\S)", _I)
_HEAD_END = re.compile(r",\s|\s\(|\s[-–—]\s|:|\s(?:qui|which|that|avec|with|à partir|from)\s", _I)
_MAX_HEAD_WORDS = 8
# An enumerated item starts like a noun phrase: a determiner, a name or a number.
_NOUN_PHRASE = re.compile(
    r"(?:le|la|les|l['’]|un|une|des|du|the|a|an|[A-ZÀ-Ý0-9])(?:\s|\b|(?<=['’]))"
    r"|[A-ZÀ-Ý0-9]",
)


def ordinal_phrase(question: str) -> re.Match[str] | None:
    """Where ``question`` says the ordinal reference, with its noun ("la première étape").

    Example:
        >>> ordinal_phrase("la première étape, je la réserve comment ?").group(0)
        'la première étape'
        >>> ordinal_phrase("la 2e a un parking ?").group(0)
        'la 2e'
        >>> ordinal_phrase("does the first one let me keep data?").group(0)
        'the first one'
    """
    return _REFERENCE.search(question)


def ordinal_index(question: str) -> int | None:
    """The position an ordinal of ``question`` designates (0 = first, -1 = last), or None.

    Example:
        >>> ordinal_index("Et le dernier, il coûte combien ?"), ordinal_index("And number 3?")
        (-1, 2)
        >>> ordinal_index("C'est la première fois que je viens.") is None
        True
    """
    match = _REFERENCE.search(question)
    if match is None:
        return None
    if match.group("n"):
        return int(match.group("n")) - 1
    return _WORDS[fold(match.group("word"))]


_SEPARATOR = re.compile(r"\s*;\s*|,?\s+(?P<conj>et|ou|and|or)\s+|,\s+", _I)


def _items_after_colon(text: str) -> list[str]:
    """The items of a list that follows a colon, cut at separators outside parentheses;
    with a final "et" / "and", what follows the last item ("…, avenue de la Gare") stays
    with it."""
    colon = text.find(":")
    if colon < 0:
        return []
    rest = text[colon + 1 :].split(". ")[0]
    separators = re.compile(r"\s*;\s*") if ";" in rest else _SEPARATOR
    items: list[str] = []
    last_joined = -1  # the item a conjunction introduced
    start = 0
    for match in separators.finditer(rest):
        if rest.count("(", 0, match.start()) != rest.count(")", 0, match.start()):
            continue  # inside parentheses
        items.append(rest[start : match.start()])
        start = match.end()
        if match.groupdict().get("conj"):
            last_joined = len(items)
    items.append(rest[start:])
    if 0 < last_joined < len(items) - 1:
        items[last_joined:] = [", ".join(items[last_joined:])]
    return [item for item in items if item.strip()]


def _head(item: str) -> str:
    """The thing an enumerated item names: its first phrase, without the lead word or
    the determiner ("et le vidage du bassin Nord, jusqu'à 3 jours" → "vidage du bassin
    Nord")."""
    item = _LEAD.sub("", item.strip(" \t.;,"))
    end = _HEAD_END.search(item)
    head = item[: end.start()] if end else item
    head = _DETERMINER.sub("", head.strip(" .;,!?"))
    words = head.split()
    return " ".join(words[:_MAX_HEAD_WORDS])


def enumerated(text: str) -> list[str]:
    """What ``text`` enumerates, in order: the items of a numbered list, of a sequence
    ("d'abord …, ensuite …, enfin …") or of a list after a colon; [] when it lists fewer
    than two things.

    Example:
        >>> enumerated("Deux box : 1) la Box Cobalt, 1 Gb/s ; 2) la Box Onyx, 8 Gb/s.")
        ['Box Cobalt', 'Box Onyx']
        >>> enumerated("First, the Founders' Scholarship; second, the Access Bursary.")
        ["Founders' Scholarship", 'Access Bursary']
        >>> enumerated("Nous avons un seul forfait.")
        []
    """
    for marker in (_NUMBERED, _SEQUENCE):
        starts = list(marker.finditer(text))
        if len(starts) >= 2:
            ends = [m.start() for m in starts[1:]] + [len(text)]
            marked = [text[m.end() : end] for m, end in zip(starts, ends, strict=True)]
            heads = [h for h in (_head(i) for i in marked) if h]
            if len(heads) >= 2:
                return heads
    items: list[str] = []
    for item in _items_after_colon(text):
        if _NOUN_PHRASE.match(_LEAD.sub("", item.strip())) or not items:
            items.append(item)
        else:  # "…, au premier étage," or "…, donc vous …" goes on with the item before
            items[-1] += f", {item}"
    if items and not _NOUN_PHRASE.match(_LEAD.sub("", items[0].strip())):
        return []
    heads = [h for h in (_head(i) for i in items) if h]
    return heads if len(heads) >= 2 else []


def ordinal_referent(question: str, turns: Sequence[Turn], names: Sequence[str] = ()) -> str | None:
    """What an ordinal of ``question`` designates, or None (no ordinal, no list).

    The list is the latest turn's that enumerates enough items (:func:`enumerated`),
    else the latest turn naming enough of ``names``, in the order it names them.

    Example:
        >>> turns = [("user", "Je compare le Forfait Azur et le Forfait Mistral."),
        ...          ("assistant", "Très bien.")]
        >>> ordinal_referent("et le second ?", turns, ["Forfait Mistral", "Forfait Azur"])
        'Forfait Mistral'
    """
    index = ordinal_index(question)
    if index is None:
        return None
    needed = max(2, index + 1)
    for _, text in reversed(turns):
        items = enumerated(text)
        if len(items) < needed:
            folded = fold(text)
            named = sorted((folded.find(fold(n)), n) for n in names if fold(n) in folded)
            items = [n for _, n in named]
        if len(items) >= needed:
            return items[index]
    return None
