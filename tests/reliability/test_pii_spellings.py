"""PII masking, property-based: valid IBANs, card numbers and phone numbers are masked
however they are spelt, and ordinary numbers are left alone.

French social security numbers (NIR) too. Spellings generated: lower, upper or mixed
case; groups of 2, 3 or 4 separated by spaces, non-breaking or thin spaces, dots, dashes
or en dashes (or nothing); full-width digits;
French phones as ``06 …``, ``(0)6-…``, ``+33 (0)6 …``, ``0033 …``, and mobile numbers of
other countries in their international format. Each is embedded in a French sentence and
the masked text must hold none of its digits, while the words around it stay as written.
Finding 1 of issue #21: lower-case or spaced IBANs, cards grouped with dots or NBSP,
full-width digits and ``(0)6-12-…`` phones were stored in clear.

Cost: about 4 s (300 generated examples per kind).
"""

from __future__ import annotations

import re

import phonenumbers
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from stdnum import iban as stdnum_iban
from stdnum import luhn

from memory_chains.privacy import PIIMasker

MASKER = PIIMasker()
PROPERTY = settings(max_examples=300, deadline=None, database=None)

SEPARATORS = [" ", "\u00a0", "\u202f", "\u2009", ".", "-", "\u2013", " - "]
FULL_WIDTH = str.maketrans("0123456789", "０１２３４５６７８９")


def _group(compact: str, size: int, sep: str) -> str:
    return sep.join(compact[i : i + size] for i in range(0, len(compact), size))


@st.composite
def spelt(draw: st.DrawFn, compact: str, *, sizes: tuple[int, ...] = (2, 3, 4)) -> str:
    """One way of writing ``compact`` down."""
    sep = draw(st.sampled_from(SEPARATORS))
    text = compact if draw(st.booleans()) else _group(compact, draw(st.sampled_from(sizes)), sep)
    if draw(st.booleans()):
        text = text.translate(FULL_WIDTH)
    return text


# -- IBAN -------------------------------------------------------------------------------

# country, BBAN alphabet per position ("n" digit, "a" upper letter, "c" either)
IBAN_FORMATS = {
    "DE": "n" * 18,
    "GB": "aaaa" + "n" * 14,
    "NL": "aaaa" + "n" * 10,
    "BE": "n" * 12,
    "IT": "a" + "n" * 10 + "c" * 12,
    "FR": "n" * 10 + "c" * 11 + "nn",
}
_ALPHABETS = {"n": "0123456789", "a": "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "c": "0123456789ABCDEFGHIJ"}


@st.composite
def valid_ibans(draw: st.DrawFn) -> str:
    country = draw(st.sampled_from(sorted(IBAN_FORMATS)))
    bban = "".join(draw(st.sampled_from(_ALPHABETS[k])) for k in IBAN_FORMATS[country])
    iban = country + stdnum_iban.calc_check_digits(country + "00" + bban) + bban
    if not stdnum_iban.is_valid(iban, check_country=False):
        iban = draw(st.sampled_from(KNOWN_IBANS))
    return iban


KNOWN_IBANS = [
    "FR7630006000011234567890189",
    "FR1420041010050500013M02606",
    "DE89370400440532013000",
    "GB82WEST12345698765432",
    "BE68539007547034",
    "IT60X0542811101000000123456",
    "ES9121000418450200051332",
    "CH9300762011623852957",
    "NL91ABNA0417164300",
]


@st.composite
def iban_spellings(draw: st.DrawFn) -> tuple[str, str]:
    iban = draw(valid_ibans())
    text = draw(spelt(iban, sizes=(4,)))
    case = draw(st.sampled_from(["upper", "lower", "title"]))
    text = {"upper": text, "lower": text.lower(), "title": text[:1] + text[1:].lower()}[case]
    return iban, text


def _assert_masked(text: str, placeholder: str, secret_digits: str) -> None:
    sentence = f"Bonjour, voici le numéro {text} pour le dossier, merci."
    masked = MASKER.mask(sentence)
    assert masked == f"Bonjour, voici le numéro {placeholder} pour le dossier, merci.", (
        sentence,
        masked,
    )
    assert secret_digits not in re.sub(r"\D", "", masked)


@PROPERTY
@given(iban_spellings())
def test_every_spelling_of_a_valid_iban_is_masked(case: tuple[str, str]) -> None:
    iban, text = case
    _assert_masked(text, "[IBAN]", re.sub(r"\D", "", iban)[-8:])


# -- cards ------------------------------------------------------------------------------


@st.composite
def card_numbers(draw: st.DrawFn) -> str:
    prefix, length = draw(
        st.sampled_from([("4", 16), ("51", 16), ("22", 16), ("34", 15), ("37", 15), ("4", 13)])
    )
    digits = st.sampled_from("0123456789")
    body = prefix + "".join(draw(digits) for _ in range(length - 1 - len(prefix)))
    return body + luhn.calc_check_digit(body)


@PROPERTY
@given(st.data())
def test_every_spelling_of_a_valid_card_number_is_masked(data: st.DataObject) -> None:
    number = data.draw(card_numbers())
    text = data.draw(spelt(number, sizes=(4,)))
    _assert_masked(text, "[CARD]", number[-8:])


# -- French social security numbers (NIR) ------------------------------------------------


@st.composite
def nir_spellings(draw: st.DrawFn) -> tuple[str, str]:
    from stdnum.fr import nir

    digit = st.sampled_from("0123456789")
    department = draw(st.one_of(st.integers(1, 95).map(lambda d: f"{d:02d}"), st.just("2A")))
    parts = [
        draw(st.sampled_from("12")),
        "".join(draw(digit) for _ in range(2)),
        f"{draw(st.integers(1, 12)):02d}",
        department,
        "".join(draw(digit) for _ in range(3)),
        "".join(draw(digit) for _ in range(3)),
    ]
    parts.append(nir.calc_check_digits("".join(parts)))
    sep = draw(st.sampled_from(["", *SEPARATORS]))
    text = sep.join(parts)
    if draw(st.booleans()):
        text = text.lower()  # 2a
    return "".join(parts), text


@PROPERTY
@given(nir_spellings())
def test_every_spelling_of_a_french_social_security_number_is_masked(
    case: tuple[str, str],
) -> None:
    compact, text = case
    _assert_masked(text, "[NIR]", compact[-8:])


# -- phones -----------------------------------------------------------------------------


@st.composite
def french_phones(draw: st.DrawFn) -> tuple[str, str]:
    national = (
        "0"
        + draw(st.sampled_from("123456789"))
        + "".join(draw(st.sampled_from("0123456789")) for _ in range(8))
    )
    number = phonenumbers.parse(national, "FR")
    if not phonenumbers.is_valid_number(number):
        national = "0612345678"
    digits = national[1:]
    pairs = [digits[0]] + [digits[i : i + 2] for i in range(1, 9, 2)]
    sep = draw(st.sampled_from(SEPARATORS))
    form = draw(st.sampled_from(["0", "(0)", "+33 ", "+33 (0)", "0033 "]))
    text = form + pairs[0] + sep + sep.join(pairs[1:])
    if draw(st.booleans()):
        text = text.translate(FULL_WIDTH)
    return digits, text


@PROPERTY
@given(french_phones())
def test_every_spelling_of_a_french_phone_number_is_masked(case: tuple[str, str]) -> None:
    digits, text = case
    _assert_masked(text, "[PHONE]", digits[-6:])


REGIONS = ["US", "GB", "DE", "BE", "CH", "ES", "IT", "JP", "BR", "IN", "MA", "SN", "CA", "AU"]


@pytest.mark.parametrize("region", REGIONS)
def test_international_mobile_numbers_of_other_countries_are_masked(region: str) -> None:
    example = phonenumbers.example_number_for_type(region, phonenumbers.PhoneNumberType.MOBILE)
    for fmt in (phonenumbers.PhoneNumberFormat.INTERNATIONAL, phonenumbers.PhoneNumberFormat.E164):
        text = phonenumbers.format_number(example, fmt)
        _assert_masked(text, "[PHONE]", str(example.national_number)[-6:])


def test_national_spellings_of_other_countries_need_their_region() -> None:
    belgian = "0470 12 34 56"
    assert PIIMasker(phone_regions=["FR", "BE"]).mask(f"tel {belgian}") == "tel [PHONE]"
    from memory_chains.errors import InvalidInputError

    for bad in (["XX"], []):
        with pytest.raises(InvalidInputError, match="phone regions"):
            PIIMasker(phone_regions=bad)


# -- false positives --------------------------------------------------------------------

ORDINARY = [
    "le 2026-11-29 à 14h30, commande 123456789",
    "prix 1 299 € pour 3 ans, modèle XPS 15 9530",
    "version 1.2.3, port 8080, année 2024",
    "ISBN 978-2-07-036822-8, ou 9782070368228, ou 2-07-036822-X",
    "commande n° 2024112912, facture FAC-2025-000123",
    "colis 6A12345678901, suivi 1Z999AA10123456784",
    "du 01/02/2024 au 15.03.2024, entre 10:30 et 12:45",
    "code postal 75011 Paris, la RN 7 au km 123",
    "total : 12 345,67 €, 1 000 000 habitants en 2023",
    "taille 42, pointure 38.5, score 3-1, 2-0 et 1-1",
    "réf. 4006381333931 (EAN), IP 192.168.1.254",
    "SIRET 732 829 320 00074, SIREN 732 829 320, TVA FR40303265045",
    "lot 2024-11-29-0001, ticket #987654321",
    "numéro de série SN 2X4-55-9931-AB, coordonnées 48.8566, 2.3522",
    "10 000 km, 1 200 kg, 3 500 m, il a eu 25 ans le 12 03 1999",
    "dossier 2023 11 27 004512, IBAN FR76 3000 6000 0112 3456 7890 188 (faux)",
    "carte 4111 1111 1111 1112 (fausse), ticket FR2024 et code AB12",
    "de 14 à 18 heures, 20 % de remise, 3 x 250 g",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_numbers_are_left_alone(text: str) -> None:
    assert MASKER.mask(text) == text


@PROPERTY
@given(
    st.lists(
        st.one_of(
            st.integers(0, 10**6).map(str),
            st.floats(0, 10**5, allow_nan=False).map(lambda x: f"{x:.2f}"),
            st.dates().map(lambda d: d.isoformat()),
            st.dates().map(lambda d: d.strftime("%d/%m/%Y")),
            st.times().map(lambda t: t.strftime("%H:%M")),
        ),
        min_size=1,
        max_size=4,
    ).map(" , ".join)
)
def test_amounts_dates_and_times_are_never_masked(text: str) -> None:
    assert MASKER.mask(text) == text
