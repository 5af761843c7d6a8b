"""The calendar words of English and French, written once for every module that reads dates.

Month and weekday names (and the parts of a day) are grammar, not names of things: the
rewriter does not take "February" or "Monday" for what a question is about, the entity
rules type them as dates, recall reads the month a question names, and a restated fact must
keep them.

Example:
    >>> MONTH_NUMBERS["fevrier"], MONTH_NUMBERS["august"]
    (2, 8)
    >>> is_calendar_word("Tuesday"), is_calendar_word("mardi"), is_calendar_word("Mars")
    (True, True, True)
    >>> alternation(["août", "mai"])
    'août|aout|mai'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from memory_chains._folding import fold

__all__ = [
    "CALENDAR_WORDS",
    "MONTHS_EN",
    "MONTHS_FR",
    "MONTH_ABBREVIATIONS_EN",
    "MONTH_NUMBERS",
    "PARTS_OF_DAY",
    "WEEKDAYS_EN",
    "WEEKDAYS_FR",
    "alternation",
    "is_calendar_word",
]

MONTHS_EN = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip
MONTHS_FR = (
    "janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre",
    "octobre", "novembre", "décembre",
)  # fmt: skip
MONTH_ABBREVIATIONS_EN = (
    "Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sep", "Sept", "Oct", "Nov", "Dec",
)  # fmt: skip
WEEKDAYS_FR = ("lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche")
WEEKDAYS_EN = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
PARTS_OF_DAY = (
    "matin", "midi", "soir", "nuit", "après-midi", "morning", "noon", "evening", "night",
    "afternoon",
)  # fmt: skip

MONTH_NUMBERS: Mapping[str, int] = {
    fold(name): number
    for number, names in enumerate(zip(MONTHS_EN, MONTHS_FR, strict=True), 1)
    for name in names
}
"""Full month names, folded, to their number (``"fevrier"`` → 2)."""

CALENDAR_WORDS = frozenset(fold(w) for w in (*MONTHS_EN, *MONTHS_FR, *WEEKDAYS_FR, *WEEKDAYS_EN))
"""Month and weekday names, folded (lower case, no accents)."""


def is_calendar_word(word: str) -> bool:
    """True for a month or weekday name, in either language and any case or accent."""
    return fold(word) in CALENDAR_WORDS


def alternation(words: Iterable[str]) -> str:
    """A regular-expression alternation of ``words``, each also without its accents."""
    # A lower-case word folds to itself without accents; a capitalised one is kept as is.
    spelled = {s: None for word in words for s in (word, fold(word) if word.islower() else word)}
    return "|".join(spelled)
