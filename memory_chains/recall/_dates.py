"""Dates named in a question, matched against the dates of the indexed turns.

A question such as "What did Melanie paint on October 13, 2023?" or "Where did Jon go in
June?" points at the sessions held around that date; the turns carry their session date
(:attr:`~memory_chains.recall.Episode.when`), so the ranking can lift them
(:func:`date_mask`). :func:`question_dates` finds English and French dates: day + month +
year in either order ("13 October, 2023", "October 13th 2023", "le 13 octobre 2023"),
month + year ("July 2023", "juillet 2023") and a bare month after "in" / "en"
("in June", "en juin"). A year alone is too broad to be useful and is ignored.

Example:
    >>> question_dates("What did she paint on October 13, 2023?")
    [DayMention(day=datetime.date(2023, 10, 13))]
    >>> question_dates("Où est-elle partie en juin ?")
    [MonthMention(year=None, month=6)]
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

import numpy as np
import numpy.typing as npt

from memory_chains._calendar import MONTH_NUMBERS
from memory_chains._folding import fold

__all__ = ["DayMention", "MonthMention", "date_mask", "question_dates"]

_MONTHS = MONTH_NUMBERS
_MONTH = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + ")"
_DAY = r"(\d{1,2})(?:st|nd|rd|th|er)?"
_YEAR = r"(\d{4})"
_DAY_MONTH_YEAR = re.compile(rf"\b{_DAY}\s+{_MONTH},?\s+{_YEAR}\b")
_MONTH_DAY_YEAR = re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b")
_MONTH_YEAR = re.compile(rf"\b{_MONTH},?\s+{_YEAR}\b")
_IN_MONTH = re.compile(rf"\b(?:in|en|during|durant)\s+{_MONTH}\b")

# A question dated to the day also finds the sessions of the days around it ("the week
# before August 3", a session logged a day late); the lift fades over this many days.
_DAY_WINDOW = 7


@dataclass(frozen=True)
class DayMention:
    """A question names a day.

    Example:
        >>> DayMention(date(2023, 5, 8)).day.month
        5
    """

    day: date


@dataclass(frozen=True)
class MonthMention:
    """A question names a month, with its year or without (``year=None``).

    Example:
        >>> MonthMention(None, 6).month
        6
    """

    year: int | None
    month: int


Mention = DayMention | MonthMention


def _day(year: str, month: str, day: str) -> DayMention | None:
    try:
        return DayMention(date(int(year), _MONTHS[month], int(day)))
    except ValueError:  # "31 February"
        return None


def question_dates(question: str) -> list[Mention]:
    """The days, else the months, a question names (see the module docstring).

    Example:
        >>> question_dates("What happened to John's job in August 2023?")
        [MonthMention(year=2023, month=8)]
        >>> question_dates("What does Ann like?")
        []
    """
    text = fold(question).lower()
    days = [_day(y, m, d) for d, m, y in _DAY_MONTH_YEAR.findall(text)]
    days += [_day(y, m, d) for m, d, y in _MONTH_DAY_YEAR.findall(text)]
    found: list[Mention] = [mention for mention in days if mention is not None]
    if found:
        return found
    found = [MonthMention(int(y), _MONTHS[m]) for m, y in _MONTH_YEAR.findall(text)]
    if found:
        return found
    return [MonthMention(None, _MONTHS[m]) for m in _IN_MONTH.findall(text)]


def _closeness(when: datetime, mentions: Sequence[Mention]) -> float:
    best = 0.0
    for mention in mentions:
        if isinstance(mention, DayMention):
            gap = abs((when.date() - mention.day).days)
            if gap <= _DAY_WINDOW:
                best = max(best, 1.0 - gap / (_DAY_WINDOW + 1))
        elif when.month == mention.month and mention.year in (None, when.year):
            best = 1.0
    return best


def date_mask(whens: Sequence[datetime | None], question: str) -> npt.NDArray[np.float64]:
    """Per turn, how close its date is to a date the question names (0.0 to 1.0).

    1.0 for a turn of the named day or month, fading to 0 a week away from a named day;
    all zeros when the question names no date (or a turn has no date).

    Example:
        >>> whens = [datetime(2023, 10, 13), datetime(2023, 10, 16), datetime(2023, 6, 1), None]
        >>> date_mask(whens, "What did she paint on 13 October 2023?").round(3).tolist()
        [1.0, 0.625, 0.0, 0.0]
    """
    mentions = question_dates(question)
    if not mentions:
        return np.zeros(len(whens))
    return np.array([_closeness(when, mentions) if when else 0.0 for when in whens])
