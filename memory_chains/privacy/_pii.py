"""Masking personal data before anything is stored: :class:`PIIMasker`, :class:`PIIDetector`.

Built-in detectors (in the order they run; a span taken by one is not re-examined):

* ``EMAIL``: e-mail addresses;
* ``IBAN``: IBANs, grouped by four or not, kept only when the ISO 13616 mod-97 checksum
  holds (so ``FR76 …`` look-alikes with a wrong checksum stay readable);
* ``CARD``: payment card numbers of 13-19 digits (spaces or dashes allowed) passing Luhn;
* ``PHONE``: French numbers (``06 12 34 56 78``, ``+33 6 12 34 56 78``, ``0033…``) and
  international numbers written with a ``+`` country code (8-15 digits).

Example:
    >>> masker = PIIMasker()
    >>> masker.mask("IBAN FR76 3000 6000 0112 3456 7890 189, mail jo@ex.fr, tel 06 12 34 56 78")
    'IBAN [IBAN], mail [EMAIL], tel [PHONE]'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from memory_chains.errors import InvalidInputError

__all__ = [
    "DEFAULT_DETECTORS",
    "PIIDetector",
    "PIIMasker",
    "PIIMatch",
    "iban_is_valid",
    "luhn_is_valid",
    "regex_detector",
]

Finder = Callable[[str], Iterable[tuple[int, int]]]


@dataclass(frozen=True)
class PIIMatch:
    """One piece of personal data found in a text.

    Example:
        >>> PIIMatch("EMAIL", 0, 8, "a@b.com").kind
        'EMAIL'
    """

    kind: str
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class PIIDetector:
    """A kind of personal data and a function finding its ``(start, end)`` spans.

    Use :func:`regex_detector` for the common case of a pattern plus an optional check.

    Example:
        >>> det = regex_detector("TICKET", r"\\bTCK-\\d{6}\\b")
        >>> PIIMasker(extra=[det]).mask("ticket TCK-123456")
        'ticket [TICKET]'
    """

    kind: str
    find: Finder


def regex_detector(
    kind: str, pattern: str | re.Pattern[str], validate: Callable[[str], bool] | None = None
) -> PIIDetector:
    """A detector for the matches of ``pattern`` that ``validate`` accepts (all if None).

    Example:
        >>> regex_detector("X", r"\\d+", lambda s: s == "42").find("7 42")
        [(2, 4)]
    """
    compiled = re.compile(pattern) if isinstance(pattern, str) else pattern

    def find(text: str) -> list[tuple[int, int]]:
        return [
            m.span() for m in compiled.finditer(text) if validate is None or validate(m.group())
        ]

    return PIIDetector(kind, find)


def luhn_is_valid(number: str) -> bool:
    """True when the digits of ``number`` pass the Luhn checksum.

    Example:
        >>> luhn_is_valid("4111 1111 1111 1111"), luhn_is_valid("4111 1111 1111 1112")
        (True, False)
    """
    digits = [int(c) for c in number if c.isdigit()]
    if len(digits) < 2:
        return False
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def iban_is_valid(iban: str) -> bool:
    """True when ``iban`` (spaces allowed) has a plausible shape and a valid mod-97 checksum.

    Example:
        >>> iban_is_valid("FR76 3000 6000 0112 3456 7890 189")
        True
        >>> iban_is_valid("FR76 3000 6000 0112 3456 7890 188")
        False
    """
    compact = re.sub(r"\s", "", iban).upper()
    if not re.fullmatch(r"[A-Z]{2}\d{2}[A-Z0-9]{11,30}", compact):
        return False
    rearranged = compact[4:] + compact[:4]
    as_digits = "".join(str(int(c, 36)) for c in rearranged)
    return int(as_digits) % 97 == 1


_EMAIL_RE = re.compile(
    r"(?<![\w.+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"
)
# Uppercase only: lowercase words after an IBAN must not be swallowed into it.
_IBAN_RE = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{1,4}){3,8}(?![A-Za-z0-9])")
_CARD_RE = re.compile(r"(?<![\d+])\d(?:[ -]?\d){12,18}(?!\d)")
_PHONE_FR_RE = re.compile(
    r"(?<![\w+])(?:(?:\+|00)33[ .-]?(?:\(0\)[ .-]?)?|0)[1-9](?:[ .-]?\d{2}){4}(?!\d)"
)
_PHONE_INTL_RE = re.compile(r"(?<![\w+])\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,6}(?!\d)")


# Cheap pre-checks: most messages hold no "@" and no long digit run, and the full patterns
# are much slower than these searches.


def _digits(text: str) -> int:
    return sum(map(text.count, "0123456789"))


def _find_email(text: str) -> list[tuple[int, int]]:
    if "@" not in text:
        return []
    return [m.span() for m in _EMAIL_RE.finditer(text)]


def _find_iban(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    if _digits(text) < 8:  # every IBAN has more (2 check digits and numeric bank codes)
        return spans
    for m in _IBAN_RE.finditer(text):
        # The pattern may run into a following uppercase word or number: keep the longest
        # prefix (ending on a group boundary) whose checksum holds.
        groups = list(re.finditer(r"\S+", m.group()))
        for n in range(len(groups), 0, -1):
            end = groups[n - 1].end()
            if iban_is_valid(m.group()[:end]):
                spans.append((m.start(), m.start() + end))
                break
    return spans


def _find_card(text: str) -> list[tuple[int, int]]:
    if _digits(text) < 13:
        return []
    return [m.span() for m in _CARD_RE.finditer(text) if luhn_is_valid(m.group())]


def _find_phone(text: str) -> list[tuple[int, int]]:
    if _digits(text) < 8:
        return []
    spans = [m.span() for m in _PHONE_FR_RE.finditer(text)]
    for m in _PHONE_INTL_RE.finditer(text):
        if 8 <= sum(c.isdigit() for c in m.group()) <= 15:
            spans.append(m.span())
    return spans


#: The detectors :class:`PIIMasker` uses by default, in order.
DEFAULT_DETECTORS: tuple[PIIDetector, ...] = (
    PIIDetector("EMAIL", _find_email),
    PIIDetector("IBAN", _find_iban),
    PIIDetector("CARD", _find_card),
    PIIDetector("PHONE", _find_phone),
)


class PIIMasker:
    """Replaces personal data in a text with placeholders such as ``[IBAN]``.

    Args:
        kinds: restrict the built-in detectors to these kinds (e.g. ``{"IBAN", "CARD"}``);
            ``None`` keeps them all.
        extra: additional detectors, run after the built-in ones.
        placeholder: format of the replacement; ``{kind}`` is the detector's kind.

    Raises:
        InvalidInputError: an unknown kind or a placeholder without ``{kind}`` handling.

    Example:
        >>> PIIMasker(kinds={"EMAIL"}).mask("a@b.fr 06 12 34 56 78")
        '[EMAIL] 06 12 34 56 78'
        >>> PIIMasker(placeholder="<{kind}>").mask("carte 4111-1111-1111-1111")
        'carte <CARD>'
    """

    def __init__(
        self,
        kinds: Iterable[str] | None = None,
        *,
        extra: Sequence[PIIDetector] = (),
        placeholder: str = "[{kind}]",
    ) -> None:
        detectors = list(DEFAULT_DETECTORS)
        if kinds is not None:
            wanted = {k.upper() for k in kinds}
            unknown = wanted - {d.kind for d in DEFAULT_DETECTORS}
            if unknown:
                raise InvalidInputError(
                    f"unknown PII kinds {sorted(unknown)}; built-in kinds are "
                    f"{[d.kind for d in DEFAULT_DETECTORS]} (add others with extra=)"
                )
            detectors = [d for d in detectors if d.kind in wanted]
        for det in extra:
            if not isinstance(det, PIIDetector):
                raise InvalidInputError(f"extra detectors must be PIIDetector, got {det!r:.60}")
        try:
            placeholder.format(kind="X")
        except (KeyError, IndexError, ValueError) as exc:
            raise InvalidInputError(f"bad placeholder {placeholder!r}: {exc}") from exc
        self.detectors: tuple[PIIDetector, ...] = (*detectors, *extra)
        self.placeholder = placeholder

    def __repr__(self) -> str:
        return f"PIIMasker(kinds={[d.kind for d in self.detectors]})"

    def find(self, text: str) -> list[PIIMatch]:
        """The non-overlapping pieces of personal data in ``text``, by position."""
        taken: list[PIIMatch] = []
        for det in self.detectors:
            for start, end in det.find(text):
                if start >= end or any(start < m.end and m.start < end for m in taken):
                    continue
                taken.append(PIIMatch(det.kind, start, end, text[start:end]))
        return sorted(taken, key=lambda m: m.start)

    def mask(self, text: str) -> str:
        """``text`` with each piece of personal data replaced by its placeholder."""
        matches = self.find(text)
        if not matches:
            return text
        out, pos = [], 0
        for m in matches:
            out.append(text[pos : m.start])
            out.append(self.placeholder.format(kind=m.kind))
            pos = m.end
        out.append(text[pos:])
        return "".join(out)

    def __call__(self, text: str) -> str:
        return self.mask(text)
