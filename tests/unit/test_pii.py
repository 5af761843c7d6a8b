"""PII masking: IBAN (mod-97), cards (Luhn), e-mails, phones; configuration and extension."""

from __future__ import annotations

import re

import pytest

from memory_chains.errors import InvalidInputError
from memory_chains.privacy import (
    PIIDetector,
    PIIMasker,
    iban_is_valid,
    luhn_is_valid,
    regex_detector,
)


@pytest.fixture
def masker() -> PIIMasker:
    return PIIMasker()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("IBAN FR76 3000 6000 0112 3456 7890 189 merci", "IBAN [IBAN] merci"),
        ("IBAN FR7630006000011234567890189.", "IBAN [IBAN]."),
        ("GB82 WEST 1234 5698 7654 32", "[IBAN]"),
        ("DE89 3704 0044 0532 0130 00 OK", "[IBAN] OK"),
        ("carte 4111 1111 1111 1111 exp 12/27", "carte [CARD] exp 12/27"),
        ("carte 5500-0000-0000-0004", "carte [CARD]"),
        ("écrire à jean.dupont+shop@mail.example.fr svp", "écrire à [EMAIL] svp"),
        ("tel 06 12 34 56 78", "tel [PHONE]"),
        ("tel 06.12.34.56.78 ou 0612345678", "tel [PHONE] ou [PHONE]"),
        ("tel +33 6 12 34 56 78", "tel [PHONE]"),
        ("tel +33 (0)1 23 45 67 89", "tel [PHONE]"),
        ("tel 0033612345678", "tel [PHONE]"),
        ("call +1 415 555 2671 now", "call [PHONE] now"),
        ("call +44 20 7946 0958", "call [PHONE]"),
    ],
)
def test_masks_personal_data(masker: PIIMasker, text: str, expected: str) -> None:
    assert masker.mask(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "IBAN FR76 3000 6000 0112 3456 7890 188",  # wrong checksum
        "carte 4111 1111 1111 1112",  # fails Luhn
        "le 2026-11-29 à 14h30, commande 123456789",
        "prix 1 299 € pour 3 ans, modèle XPS 15 9530",
        "version 1.2.3, port 8080, année 2024",
        "ticket FR2024 et code AB12",
        "",
    ],
)
def test_leaves_look_alikes_alone(masker: PIIMasker, text: str) -> None:
    assert masker.mask(text) == text


def test_checksums() -> None:
    assert iban_is_valid("fr76 3000 6000 0112 3456 7890 189")
    assert not iban_is_valid("FR76")
    assert luhn_is_valid("79927398713") and not luhn_is_valid("79927398710")


def test_find_reports_kinds_and_positions(masker: PIIMasker) -> None:
    text = "a@b.fr puis 4111111111111111"
    found = masker.find(text)
    assert [(m.kind, text[m.start : m.end]) for m in found] == [
        ("EMAIL", "a@b.fr"),
        ("CARD", "4111111111111111"),
    ]


def test_kinds_subset_and_placeholder() -> None:
    m = PIIMasker(kinds={"iban"}, placeholder="<{kind}>")
    text = "FR7630006000011234567890189 a@b.fr"
    assert m.mask(text) == "<IBAN> a@b.fr"


def test_extra_detector_runs_after_builtins() -> None:
    ticket = regex_detector("TICKET", re.compile(r"\bTCK-\d{6}\b"))
    custom = PIIDetector(
        "NIR", lambda t: [(i, i + 3) for i in range(len(t)) if t.startswith("NIR", i)]
    )
    m = PIIMasker(extra=[ticket, custom])
    assert m.mask("TCK-123456, NIR, a@b.fr") == "[TICKET], [NIR], [EMAIL]"


@pytest.mark.parametrize(
    "kwargs",
    [{"kinds": {"SSN"}}, {"extra": ["not a detector"]}, {"placeholder": "{other}"}],
)
def test_bad_configuration(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidInputError):
        PIIMasker(**kwargs)  # type: ignore[arg-type]


def test_the_space_before_a_phone_after_a_long_number_is_kept(masker: PIIMasker) -> None:
    # libphonenumber's matcher starts that match on the space (issue #21 review)
    text = "FR7630006000011234567890189 / 06 12 34 56 78 / x@y.com"
    assert masker.mask(text) == "[IBAN] / [PHONE] / [EMAIL]"


def test_masking_is_idempotent(masker: PIIMasker) -> None:
    once = masker.mask("FR7630006000011234567890189 / 06 12 34 56 78 / x@y.com")
    assert masker.mask(once) == once
