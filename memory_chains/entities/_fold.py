"""Folding names for comparison, and the alias rule that says two mentions are one entity.

:func:`fold` lowercases, strips accents and punctuation and drops leading determiners, so
that "le XPS", "XPS" and "xps" compare equal. :func:`is_alias` decides whether a shorter
mention ("XPS 15") names the same thing as a longer one ("Dell XPS 15").

Example:
    >>> fold("  Le Dell   XPS-15 ! ")
    'dell xps 15'
    >>> is_alias("le XPS 15", "Dell XPS 15", "PRODUCT")
    True
    >>> is_alias("Dell", "Dell XPS 15", "PRODUCT")
    False
"""

from __future__ import annotations

import re
from functools import lru_cache

from memory_chains._folding import fold as fold_text
from memory_chains.entities._evidence import NAME_HEADS

__all__ = ["fold", "is_alias", "tokens"]


def _words(text: str) -> list[str]:
    """Split a word list written as one string (keeps long gazetteers compact)."""
    return text.split()


# Determiners and possessives dropped at the start of a mention (French and English).
_LEADING = frozenset(
    _words(
        "le la les l un une des du de d the a an my our your his her their its mon ma mes ton ta "
        "tes son sa ses notre votre leur nos vos leurs ce cet cette ces this that"
    )
)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)

# Words that make a name an organization's without changing which one ("Bank", "Group").
_ORG_WORDS = NAME_HEADS["ORGANIZATION"] | frozenset(_words("corp corporation"))
# Types whose members are commonly referred to by any single part of their name
# ("Marie" for "Marie Dupont", "Dupont" too).
_ANY_PART_TYPES = frozenset({"PERSON"})


@lru_cache(maxsize=8192)
def fold(text: str) -> str:
    """Lowercase, strip accents and punctuation, drop leading determiners (cached: the
    same names are compared at every turn).

    Example:
        >>> fold("L'Équipe Réseau")
        'equipe reseau'
    """
    words = _WORD.findall(fold_text(text))
    while len(words) > 1 and words[0] in _LEADING:
        words = words[1:]
    return " ".join(words)


@lru_cache(maxsize=8192)
def tokens(text: str) -> tuple[str, ...]:
    """The folded words of ``text``.

    Example:
        >>> tokens("Le ThinkPad X1")
        ('thinkpad', 'x1')
    """
    folded = fold(text)
    return tuple(folded.split()) if folded else ()


def _singular(words: tuple[str, ...]) -> tuple[str, ...]:
    """Words without a plural -s ("Cartes Ambassadeur" names "Carte Ambassadeur")."""
    return tuple(
        w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in words
    )


def is_alias(short: str, long: str, entity_type: str = "") -> bool:
    """Whether ``short`` can name the entity called ``long``.

    Equal folded names always match. Otherwise every word of the shorter must appear in
    the longer, and the shorter must not be just the longer's first word (a brand, "Dell",
    is not its product, "Dell XPS 15"), except for people, who are called by any part of
    their name. Numbers must agree: "XPS 13" never names "XPS 15".

    Args:
        short: a mention (the order of the two names does not matter).
        long: another mention or canonical name.
        entity_type: the entity's type, when known.

    Example:
        >>> is_alias("Marie", "Marie Dupont", "PERSON"), is_alias("XPS 13", "Dell XPS 15")
        (True, False)
    """
    a, b = _singular(tokens(short)), _singular(tokens(long))
    if not a or not b:
        return False
    if a == b:
        return True
    if len(a) > len(b):
        a, b = b, a
    if not set(a) <= set(b):
        return False
    if entity_type.upper() in _ANY_PART_TYPES:
        return True
    if (a == b[: len(a)] and set(b[len(a) :]) <= _ORG_WORDS) or (
        a == b[len(b) - len(a) :] and set(b[: len(b) - len(a)]) <= _ORG_WORDS
    ):
        # "Maplestone" names "Maplestone Bank", "Quillmark" "Quillmark Analytics",
        # "Berthelot-Janin" "Cabinet Berthelot-Janin"; "Marie" does not name "Marie Curie
        # Institute", nor "Dell" "Dell XPS 15".
        return True
    if a == b[:1]:
        # An organization is called by its first word ("Quillmark" for "Quillmark
        # Analytics", "Harcourt" for "Harcourt & Vance Lettings") unless that word is a
        # first name ("Marie" does not name "Marie Curie Institute").
        from memory_chains.entities._lexicon import FOLDED_FIRST

        return (
            entity_type.upper() == "ORGANIZATION"
            and len(a[0]) >= 4
            and bool(set(b[1:]) & _ORG_WORDS)
            and a[0] not in FOLDED_FIRST
        )
    # A lone short word that is not a model token is too weak an anchor ("pro", "air").
    return not (len(a) == 1 and len(a[0]) < 3 and not any(ch.isdigit() for ch in a[0]))
