"""Masking personal data before anything is stored: :class:`PIIMasker`, :class:`PIIDetector`.

Built-in detectors (in the order they run; a span taken by one is not re-examined). Each
matches on a normalised view of the text (:func:`~memory_chains.privacy._fold.fold`:
case, NFKC for full-width digits, any space-like, dot or dash separator between digit
groups) and masks the original span; each candidate is then validated by a maintained
library rather than a pattern alone:

* ``EMAIL``: e-mail addresses;
* ``IBAN``: IBANs in any case, grouped or not, kept only when ``python-stdnum`` accepts
  them (ISO 13616 mod-97, a registered country and its BBAN layout), so ``FR76 …``
  look-alikes with a wrong checksum stay readable;
* ``NIR``: French social security numbers (15 characters, ``1 84 12 76 451 089 46``,
  Corsican ``2A``/``2B`` departments included), kept when their key holds
  (``python-stdnum``);
* ``CARD``: payment card numbers of 13-19 digits, unbroken or in groups of 3-6 (the last
  may be shorter), starting with a card network's digit (2-6) and passing the Luhn check
  (``python-stdnum``); a valid ISBN-13 or French SIRET is not a card;
* ``PHONE``: phone numbers that Google's libphonenumber (the ``phonenumbers`` port) finds
  and holds valid: any country when written with ``+`` or ``00``, national spellings of
  the masker's ``phone_regions`` (France by default: ``06 12 34 56 78``,
  ``(0)6-12-34-56-78``).

Example:
    >>> masker = PIIMasker()
    >>> masker.mask("IBAN fr76 3000 6000 0112 3456 7890 189, mail jo@ex.fr, tel 06.12.34.56.78")
    'IBAN [IBAN], mail [EMAIL], tel [PHONE]'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from memory_chains.errors import InvalidInputError
from memory_chains.privacy._fold import fold

__all__ = [
    "DEFAULT_DETECTORS",
    "DEFAULT_PHONE_REGIONS",
    "PIIDetector",
    "PIIMasker",
    "PIIMatch",
    "iban_is_valid",
    "luhn_is_valid",
    "phone_detector",
    "regex_detector",
]

Finder = Callable[[str], Iterable[tuple[int, int]]]

#: Regions whose national phone spellings (without ``+``) the default masker recognises.
DEFAULT_PHONE_REGIONS: tuple[str, ...] = ("FR",)


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
    """True when the digits of ``number`` (separators ignored) pass the Luhn checksum.

    Example:
        >>> luhn_is_valid("4111 1111 1111 1111"), luhn_is_valid("4111 1111 1111 1112")
        (True, False)
    """
    from stdnum import luhn

    digits = "".join(c for c in fold(number).text if c.isdigit() and c.isascii())
    return len(digits) >= 2 and bool(luhn.is_valid(digits))


def iban_is_valid(iban: str) -> bool:
    """True when ``iban`` (any case, separators allowed) is a valid IBAN for its country.

    Example:
        >>> iban_is_valid("fr76 3000 6000 0112 3456 7890 189")
        True
        >>> iban_is_valid("FR76 3000 6000 0112 3456 7890 188")
        False
    """
    from stdnum import iban as stdnum_iban

    compact = _compact(fold(iban).text).upper()
    # mod-97, a registered country and its BBAN layout; not the national bank registries
    # (check_country): one that lags behind a new bank would leave its IBANs in clear
    return 15 <= len(compact) <= 34 and bool(stdnum_iban.is_valid(compact, check_country=False))


def _compact(text: str) -> str:
    return re.sub(r"[ .\-]", "", text)


_EMAIL_RE = re.compile(
    r"(?<![\w.+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"
)
# A run of letters and digits starting like an IBAN (country, check digits), its groups
# separated by up to three separators; possessive: the run is split into groups below.
_IBAN_RUN_RE = re.compile(r"(?<![A-Z0-9])[A-Z]{2}\d{2}[A-Z0-9]*+(?:[ .\-]{1,3}[A-Z0-9]++)*+")
_CARD_RUN_RE = re.compile(r"(?<![\d+])\d++(?:[ .\-]{1,3}\d++)*+")
_GROUP_RE = re.compile(r"[A-Z0-9]+")
_ASCII_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_DIGIT_RE = re.compile(r"\d")


# Cheap pre-checks: most messages hold no "@" and few digits, and the full detectors are
# much slower than these counts.


def _digits(text: str, at_least: int) -> bool:
    found = enumerate(_DIGIT_RE.finditer(text), start=1)
    return any(count >= at_least for count, _ in found)


def _find_email(text: str) -> list[tuple[int, int]]:
    if "@" not in text and "\uff20" not in text:  # the full-width @ folds to "@"
        return []
    folded = fold(text)
    return [folded.span(*m.span()) for m in _EMAIL_RE.finditer(folded.text)]


def _group_spans(run: re.Match[str], group_re: re.Pattern[str]) -> list[tuple[int, int]]:
    offset = run.start()
    return [(offset + g.start(), offset + g.end()) for g in group_re.finditer(run.group())]


def _find_iban(text: str) -> list[tuple[int, int]]:
    if not _digits(text, 8):  # every IBAN has more (2 check digits and numeric bank codes)
        return []
    folded = fold(text)
    upper = folded.text.translate(_ASCII_UPPER)  # same length: spans stay aligned
    spans: list[tuple[int, int]] = []
    for run in _IBAN_RUN_RE.finditer(upper):
        groups = _group_spans(run, _GROUP_RE)[:12]
        # the run may go on into the words after a lower-case IBAN: keep the longest
        # prefix, ending on a group boundary, that is a valid IBAN
        for n in range(len(groups), 0, -1):
            end = groups[n - 1][1]
            if iban_is_valid(upper[run.start() : end]):
                spans.append(folded.span(run.start(), end))
                break
    return spans


def _is_card_number(digits: str) -> bool:
    """Luhn-valid, issued by a bank or card network (first digit 2-6: Mastercard, Visa,
    Amex, Diners, JCB, Discover, UnionPay, Maestro), and not one of the Luhn-checked
    numbers of everyday life: an ISBN-13, a French SIRET."""
    from stdnum import isbn, luhn
    from stdnum.fr import siret

    if digits[0] not in "23456" or not luhn.is_valid(digits):
        return False
    if len(digits) == 13 and digits[:3] in ("978", "979") and isbn.is_valid(digits):
        return False
    # a Diners card (30, 36, 38…) may also pass the SIRET checks: keep it a card
    return not (len(digits) == 14 and digits[0] != "3" and siret.is_valid(digits))


def _find_card(text: str) -> list[tuple[int, int]]:
    if not _digits(text, 13):
        return []
    folded = fold(text)
    spans: list[tuple[int, int]] = []
    for run in _CARD_RUN_RE.finditer(folded.text):
        groups = _group_spans(run, re.compile(r"\d+"))
        i = 0
        while i < len(groups):
            found = None
            for j in range(min(len(groups), i + 7) - 1, i - 1, -1):
                chosen = groups[i : j + 1]
                sizes = [end - start for start, end in chosen]
                # groups of 3-6 digits; the last of three or more may be shorter (4-4-4-1)
                grouped = len(chosen) > 1 and all(3 <= n <= 6 for n in sizes[:-1])
                grouped = grouped and (3 <= sizes[-1] <= 6 or (len(sizes) > 2 and sizes[-1] <= 6))
                if not (grouped or len(chosen) == 1) or not 13 <= sum(sizes) <= 19:
                    continue
                digits = _compact(folded.text[chosen[0][0] : chosen[-1][1]])
                if _is_card_number(digits):
                    found = j
                    spans.append(folded.span(chosen[0][0], chosen[-1][1]))
                    break
            i = (found if found is not None else i) + 1
    return spans


# sex (1/2, 7/8 for temporary numbers), year, month, department (2A/2B in Corsica),
# commune, order, key; no 3 or 4 in front: a 15-digit Amex card starts with 34 or 37
_NIR_RE = re.compile(
    r"(?<![0-9A-Z])[1278](?:[ .\-]{0,3}\d{2}){2}[ .\-]{0,3}(?:\d{2}|2[AB])"
    r"(?:[ .\-]{0,3}\d{3}){2}[ .\-]{0,3}\d{2}(?![0-9A-Z])"
)


def _find_nir(text: str) -> list[tuple[int, int]]:
    if not _digits(text, 13):
        return []
    from stdnum.fr import nir

    folded = fold(text)
    upper = folded.text.translate(_ASCII_UPPER)
    return [
        folded.span(*m.span()) for m in _NIR_RE.finditer(upper) if nir.is_valid(_compact(m.group()))
    ]


def phone_detector(regions: Iterable[str] = DEFAULT_PHONE_REGIONS) -> PIIDetector:
    """A ``PHONE`` detector: numbers libphonenumber finds and holds valid, written with a
    ``+``/``00`` country code (any country) or in a national format of one of ``regions``
    (ISO 3166 codes such as ``"FR"``, ``"BE"``, ``"CH"``).

    Raises:
        InvalidInputError: a region libphonenumber does not know.

    Example:
        >>> PIIMasker(extra=[phone_detector(["BE"])], kinds={"EMAIL"}).mask("tel 0470 12 34 56")
        'tel [PHONE]'
    """
    if isinstance(regions, str):
        regions = [regions]
    wanted = tuple(dict.fromkeys(str(r).upper() for r in regions))
    if wanted != DEFAULT_PHONE_REGIONS:  # the default needs no check: no import at start-up
        import phonenumbers

        unknown = [r for r in wanted if r not in phonenumbers.SUPPORTED_REGIONS]
        if unknown or not wanted:
            raise InvalidInputError(
                f"unknown phone regions {unknown or list(wanted)}: use ISO 3166 codes such as 'FR'"
            )

    def find(text: str) -> list[tuple[int, int]]:
        if not _digits(text, 7):
            return []
        import phonenumbers  # 25 ms: only once a message holds enough digits

        folded = fold(text)
        spans: list[tuple[int, int]] = []
        for region in wanted:
            matcher = phonenumbers.PhoneNumberMatcher(
                folded.text, region, leniency=phonenumbers.Leniency.VALID
            )
            for match in matcher:
                # the matcher may start a match on the space before the number
                start, end = match.start, match.end
                while start < end and folded.text[start].isspace():
                    start += 1
                while end > start and folded.text[end - 1].isspace():
                    end -= 1
                spans.append(folded.span(start, end))
        return spans

    return PIIDetector("PHONE", find)


#: The detectors :class:`PIIMasker` uses by default, in order.
DEFAULT_DETECTORS: tuple[PIIDetector, ...] = (
    PIIDetector("EMAIL", _find_email),
    PIIDetector("IBAN", _find_iban),
    # before cards: a 15-digit NIR may pass Luhn, no 15-digit card starts with 1 or 2
    PIIDetector("NIR", _find_nir),
    PIIDetector("CARD", _find_card),
    phone_detector(),
)


class PIIMasker:
    """Replaces personal data in a text with placeholders such as ``[IBAN]``.

    Args:
        kinds: restrict the built-in detectors to these kinds (e.g. ``{"IBAN", "CARD"}``);
            ``None`` keeps them all.
        extra: additional detectors, run after the built-in ones.
        placeholder: format of the replacement; ``{kind}`` is the detector's kind.
        phone_regions: the countries whose national phone spellings (no ``+``) are
            recognised; numbers written with a country code are recognised for every
            country whatever this says.

    Raises:
        InvalidInputError: an unknown kind or phone region, or a placeholder without
            ``{kind}`` handling.

    Example:
        >>> PIIMasker(kinds={"EMAIL"}).mask("a@b.fr 06 12 34 56 78")
        '[EMAIL] 06 12 34 56 78'
        >>> PIIMasker(placeholder="<{kind}>").mask("carte 4111.1111.1111.1111")
        'carte <CARD>'
        >>> PIIMasker(phone_regions=["FR", "CH"]).mask("Genève 044 668 18 00")
        'Genève [PHONE]'
    """

    def __init__(
        self,
        kinds: Iterable[str] | None = None,
        *,
        extra: Sequence[PIIDetector] = (),
        placeholder: str = "[{kind}]",
        phone_regions: Iterable[str] = DEFAULT_PHONE_REGIONS,
    ) -> None:
        detectors = list(DEFAULT_DETECTORS)
        regions = (phone_regions,) if isinstance(phone_regions, str) else tuple(phone_regions)
        if regions != DEFAULT_PHONE_REGIONS:
            phone = phone_detector(regions)
            detectors = [phone if d.kind == "PHONE" else d for d in detectors]
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
