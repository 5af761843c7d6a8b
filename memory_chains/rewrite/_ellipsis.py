"""Elliptic follow-ups put back into the question they continue.

"Et pour le samedi ?" after "Quels sont les horaires du cours de Pilates ?" keeps the
earlier question and adds what changed: "Quels sont les horaires du cours de Pilates pour le
samedi ?". When what changed is another *name* ("Et pour le Lenovo ?", "Et celui de
Lenovo ?", "What about the Lenovo?"), the user moves the same question to another thing:
that name takes the place of the name the earlier question asked about ("Quelle est la
garantie du Lenovo ?"), instead of the two being spliced together. The new name may come
with a few words of the earlier question ("Et le cours de Zumba ?" after "… du cours de
Pilates ?", "the Zumba class" after "the Pilates class"): the name in those same words
changes. With other words around it ("Et le prix du Lenovo ?") the follow-up names its own
subject, and no name of the earlier question is spliced into it.

The name it replaces is the one name of the earlier question; when that question names
several things, the one after the same preposition ("vers l'Espagne" → "vers le Maroc").
A follow-up that names a new thing after a preposition no name of the earlier question
has ("depuis le compte" / "vers le Maroc") adds to it.

Example:
    >>> frame = "Quelle est la garantie du Dell XPS 15 ?"
    >>> reframe(frame, "Et celui de Lenovo ?", ["Dell XPS 15"])
    'Quelle est la garantie du Lenovo ?'
    >>> reframe("Quels sont les horaires du cours de Pilates ?", "Et pour le samedi ?", [])
    'Quels sont les horaires du cours de Pilates pour le samedi ?'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from memory_chains._folding import fold
from memory_chains.rewrite._entities import names_in

__all__ = [
    "ELLIPSIS_LEAD",
    "STARTS_WITH_VOWEL",
    "moved_name",
    "moves_to_another_thing",
    "reframe",
]

ELLIPSIS_LEAD = re.compile(
    r"^\s*(?:et|mais|and|but|what about|how about|and what about|and how about)\s+(?P<rest>.+?)"
    r"\s*[?.!]*\s*$",
    re.IGNORECASE,
)
"""An elliptic follow-up ("Et pour le samedi ?", "What about Zumba?"); ``rest`` is what it adds."""

# What an elliptic follow-up may put before the name it moves the question to: a topic
# marker ("pour", "for", "côté"), a determiner, "celui de" / "the … one". Any other
# preposition ("vers", "depuis", "with") says which part of the question changes.
_TOPIC = re.compile(
    r"^(?:(?:pour|for|côté|cote|concernant|about|regarding)\s+)?"
    r"(?:(?:celui|celle|ceux|celles)\s+(?:de\s+la|de\s+l['’]|du|des|de|d['’])\s*)?"
    r"(?:(?:le|la|les|the)\s+|l['’]\s*)?(?P<name>.+?)(?:\s+(?:one|ones|model|version))?$",
    re.IGNORECASE,
)
_DETERMINERS = r"(?:(?:le|la|les|un|une|des|the|a|an|my|mon|ma|mes)\s+|l['’]\s*)?"
_ELIDED = re.compile(r"(?<!\w)[ld]['’]$", re.IGNORECASE)
STARTS_WITH_VOWEL = re.compile(r"^[aeiouhàâéèêîôûy]", re.IGNORECASE)
"""A word French elides an article before ("l'Orbea", "d'Ambre")."""
_VOWEL = re.compile(r"^[aeiouàâéèêîôû]", re.IGNORECASE)  # not h or y: "de Yoga", "de Hatha"
_PLAIN_DE = re.compile(r"(?<!\w)de\s+$")
_PREPOSITION = re.compile(
    r"^(?P<prep>vers|depuis|chez|à|au|aux|en|dans|sur|avec|sans|entre|to|from|in|at|on|with|"
    rf"into|via|by)\s+{_DETERMINERS}(?P<name>.+)$",
    re.IGNORECASE,
)


class _Move(NamedTuple):
    name: str
    prep: str  # the preposition the name follows ("vers"), or ""
    head: str  # the follow-up's words before the name ("cours de"), folded, or ""
    tail: str  # the follow-up's words after the name ("class"), folded, or ""


# At most this many words around the name in "Et le cours de Zumba ?", "the Zumba class".
_MAX_AROUND = 3
# The word that joins those words to the name: "cours de", "cours d'", "class of".
_OF_WORD = r"(?:\b(?:de|du|des|of|for)\s*|\bd')"
_OF = re.compile(rf"\s*{_OF_WORD}$")


def moved_name(question: str) -> tuple[str, str] | None:
    """``(name, preposition)`` when ``question`` moves the conversation's question to a
    name ("Et pour le Lenovo ?" → ``("Lenovo", "")``, "Et vers le Maroc ?" → ``("Maroc",
    "vers")``), else None: not elliptic, or what it adds is no name ("Et pour le samedi ?").

    Example:
        >>> moved_name("Et celui de Lenovo ?"), moved_name("What about the Zephyr one?")
        (('Lenovo', ''), ('Zephyr', ''))
        >>> moved_name("Et vers le Maroc ?"), moved_name("Et pour le samedi ?")
        (('Maroc', 'vers'), None)
        >>> moved_name("Et le cours de Zumba ?")
        ('Zumba', '')
    """
    lead = ELLIPSIS_LEAD.match(question)
    moved = None if lead is None else _moved(lead["rest"].strip())
    return None if moved is None else (moved.name, moved.prep)


def moves_to_another_thing(question: str) -> bool:
    """True when ``question`` asks the earlier question of another thing, named with no
    preposition of its own ("Et pour le Lenovo ?", "What about the Zephyr one?"): it names
    what it is about, and the earlier question's name is left behind.

    Example:
        >>> [moves_to_another_thing(q) for q in ("Et celui de Lenovo ?", "Et vers le Maroc ?")]
        [True, False]
    """
    moved = moved_name(question)
    return moved is not None and not moved[1]


def _moved(rest: str) -> _Move | None:
    """The name the complement ``rest`` moves the question to: the whole complement, or
    one name with a few plain words around it ("le cours de Zumba", "the Zumba class")."""
    preposition = _PREPOSITION.match(rest)
    prep, phrase = (preposition["prep"].lower(), preposition["name"]) if preposition else ("", "")
    if not preposition:
        topic = _TOPIC.match(rest)
        phrase = topic["name"] if topic else rest
    found = names_in(f"Et {phrase}")  # not the first word of a sentence
    if len(found) != 1:
        return None
    name, whole = found[0], fold(phrase.strip(" ,"))
    if whole == fold(name):
        return _Move(name, prep, "", "")
    head, _, tail = whole.partition(fold(name))
    head, tail = head.strip(), tail.strip()
    around = len(head.split()) + len(tail.split())
    if prep or around > _MAX_AROUND or any(c.isdigit() for c in head + tail):
        return None
    return _Move(name, "", _OF.sub("", head), tail)


def _asked_names(frame: str, names: Sequence[str]) -> list[tuple[int, int]]:
    """Where the frame names one of ``names`` (longest names first, no overlap)."""
    spans: list[tuple[int, int]] = []
    for name in sorted({n for n in names if n.strip()}, key=len, reverse=True):
        for found in re.finditer(rf"(?<!\w){re.escape(name)}(?!\w)", frame, re.IGNORECASE):
            if not any(s < found.end() and found.start() < e for s, e in spans):
                spans.append(found.span())
    return sorted(spans)


def _same_words_around(frame: str, span: tuple[int, int], moved: _Move) -> bool:
    """True when the frame's name at ``span`` has the follow-up's words around it: "du
    cours de Pilates" for "le cours de Zumba", "the Pilates class" for "the Zumba class"."""
    before, after = fold(frame[: span[0]]), fold(frame[span[1] :])
    head = re.escape(moved.head).replace(r"\ ", r"\s+")
    if moved.head and not re.search(rf"(?<!\w){head}\s*{_OF_WORD}?$", before):
        return False
    return not moved.tail or re.match(rf"\s*{re.escape(moved.tail)}(?!\w)", after) is not None


def _substituted(
    frame: str, moved: _Move, rest: str, spans: Sequence[tuple[int, int]]
) -> str | None:
    """The frame with the name it asks about (one of ``spans``) replaced, or None when it
    names no single one."""
    name, prep = moved.name, moved.prep
    if prep:  # only the name after the same preposition changes: "vers l'Espagne"
        before = re.compile(rf"(?<!\w){re.escape(prep)}\s+{_DETERMINERS}$", re.IGNORECASE)
        spans = [(found.start(), e) for s, e in spans if (found := before.search(frame[:s]))]
    if moved.head or moved.tail:  # "le cours de Zumba": the name in the same words
        spans = [span for span in spans if _same_words_around(frame, span, moved)]
    if len(spans) != 1 or fold(name) in fold(frame):
        return None
    start, end = spans[0]
    if prep:  # the follow-up's own words: "vers le Maroc"
        return frame[:start] + rest.strip(" ?.!") + frame[end:]
    head = frame[:start]
    if _ELIDED.search(head) and not STARTS_WITH_VOWEL.match(name):  # "de l'Orbea" → "de Lenovo"
        head = _ELIDED.sub(lambda m: "de " if m[0].lower().startswith("d") else "", head)
    elif _PLAIN_DE.search(head) and _VOWEL.match(name):  # "de Pilates" → "d'Aquagym"
        head = _PLAIN_DE.sub("d'", head)
    return head + name + frame[end:]


def reframe(frame: str, question: str, names: Sequence[str] = ()) -> str | None:
    """The earlier question ``frame`` continued by the elliptic ``question``, or None when
    ``question`` is not elliptic, or moves the question to a name and ``frame`` names
    several things but not which one changes.

    Args:
        frame: the earlier question, as the user asked it or as the model restated it.
        question: the follow-up ("Et pour le samedi ?", "Et celui de Lenovo ?").
        names: the conversation's names (what the frame may be about).

    Example:
        >>> reframe("What's the warranty on the Dell XPS 15?", "What about the Lenovo?",
        ...         ["Dell XPS 15"])
        "What's the warranty on the Lenovo?"
        >>> reframe("Un virement vers l'Espagne depuis le Compte Sillage arrive quand ?",
        ...         "Et vers le Maroc ?", ["Compte Sillage", "Espagne"])
        'Un virement vers le Maroc depuis le Compte Sillage arrive quand ?'
    """
    lead = ELLIPSIS_LEAD.match(question)
    if lead is None:
        return None
    moved = _moved(lead["rest"].strip())
    if moved is not None:
        spans = _asked_names(frame, [*names, *names_in(frame)])
        written = _substituted(frame, moved, lead["rest"], spans)
        if written is not None:
            return written
        if not moved.prep and spans:
            return None  # which of the frame's names the new one replaces is unknown
    body = frame.rstrip(" ?.!")
    mark = "?" if "?" in question else ""
    space = " " if mark and frame.rstrip().endswith(" ?") else ""
    return f"{body} {lead.group('rest')}{space}{mark}"
