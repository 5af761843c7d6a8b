"""UserProfile: upsert rules (stated beats inferred, newer, confidence), history, render."""

from __future__ import annotations

import pytest

from memory_chains.errors import InvalidInputError
from memory_chains.longterm import ProfileEntry, UserProfile, merge_entry, profile_instructions
from memory_chains.stores import InMemoryStore, export_user, forget_user
from memory_chains.testing import word_counter


def entry(
    key: str, value: object, source: str = "inferred", conf: float = 0.7, at: float = 1.0
) -> ProfileEntry:
    return ProfileEntry(key, value, source=source, confidence=conf, updated_at=at)  # type: ignore[arg-type]


def test_stated_beats_inferred_whatever_the_confidence() -> None:
    stated = entry("preferred_day", "samedi", "stated", 0.5, at=1.0)
    assert merge_entry(stated, entry("preferred_day", "lundi", "inferred", 0.99, at=5.0)) is None
    inferred = entry("preferred_day", "lundi", "inferred", 0.99, at=1.0)
    merged = merge_entry(inferred, entry("preferred_day", "samedi", "stated", 0.3, at=2.0))
    assert merged is not None
    assert (merged.value, merged.source) == ("samedi", "stated")
    assert merged.history[0] == {
        "value": "lundi",
        "source": "inferred",
        "confidence": 0.99,
        "updated_at": 1.0,
    }


def test_newer_stated_replaces_older_stated_but_not_the_reverse() -> None:
    old = entry("city", "Lyon", "stated", at=10.0)
    newer = merge_entry(old, entry("city", "Nantes", "stated", at=20.0))
    assert newer is not None and newer.value == "Nantes"
    assert merge_entry(old, entry("city", "Nantes", "stated", at=5.0)) is None


def test_inferred_needs_at_least_the_same_confidence() -> None:
    old = entry("communication_style", "formel", conf=0.8)
    assert merge_entry(old, entry("communication_style", "détendu", conf=0.5, at=2.0)) is None
    got = merge_entry(old, entry("communication_style", "détendu", conf=0.9, at=2.0))
    assert got is not None and got.value == "détendu"


def test_same_value_upgrades_source_and_confidence_without_history() -> None:
    old = entry("language", "fr", conf=0.6)
    assert merge_entry(old, entry("language", "français", conf=0.5)) is None
    got = merge_entry(old, entry("language", "French", "stated", 0.9, at=3.0))
    assert got is not None
    assert (got.value, got.source, got.confidence, got.history) == ("fr", "stated", 0.9, ())


def test_history_is_capped_at_five_newest_first() -> None:
    profile = UserProfile("u")
    for i in range(8):
        profile, _ = profile.apply([entry("budget", f"{i}00 €", "stated", at=float(i))])
    e = profile.get("budget")
    assert e is not None and e.value == "700 €"
    assert [h["value"] for h in e.history] == ["600 €", "500 €", "400 €", "300 €", "200 €"]


def test_topics_are_merged_as_a_set() -> None:
    p, _ = UserProfile("u").apply([entry("topics", "yoga, Pilates")])
    p, changed = p.apply([entry("topics", ["pilates", "course à pied"])])
    assert p.value("topics") == ("yoga", "Pilates", "course à pied")
    assert changed == ("topics",)
    _, changed = p.apply([entry("topics", ["YOGA"])])
    assert changed == ()


def test_apply_does_not_modify_the_original() -> None:
    p0 = UserProfile("u")
    p1, _ = p0.apply([entry("language", "fr")])
    assert len(p0) == 0 and len(p1) == 1


@pytest.mark.parametrize(
    "kwargs",
    [
        {"key": "  ", "value": "x"},
        {"key": "k", "value": ""},
        {"key": "k", "value": "x", "source": "guessed"},
        {"key": "k", "value": "x", "confidence": 1.5},
        {"key": "k", "value": {"a": 1}},
    ],
)
def test_bad_entries_are_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidInputError):
        ProfileEntry(**kwargs)  # type: ignore[arg-type]


def test_persisted_one_document_per_key_covered_by_forget_user() -> None:
    store = InMemoryStore()
    p, keys = UserProfile("alice").apply(
        [entry("language", "fr"), entry("Technical Level", "expert", "stated")]
    )
    p.save(store, keys)
    UserProfile("bob").apply([entry("language", "en")])[0].save(store)
    loaded = UserProfile.load(store, "alice")
    assert loaded.as_dict() == {"language": "fr", "technical_level": "expert"}
    assert loaded.get("technical_level") == p.get("technical_level")
    assert {d["key"] for d in export_user(store, "alice")["documents"]} == {
        "language",
        "technical_level",
    }
    assert forget_user(store, "alice").documents == 2
    assert len(UserProfile.load(store, "alice")) == 0
    assert UserProfile.load(store, "bob").value("language") == "en"


def test_render_respects_the_budget_and_puts_standard_keys_first() -> None:
    p, _ = UserProfile("u").apply(
        [
            entry("favourite_colour", "bleu", "stated"),
            entry("language", "fr"),
            entry("technical_level", "débutant", "stated"),
        ]
    )
    assert p.render(100, token_counter=word_counter).splitlines() == [
        "User profile:",
        "- language: fr (inferred)",
        "- technical_level: beginner",
        "- favourite_colour: bleu",
    ]
    small = p.render(9, token_counter=word_counter)
    assert word_counter(small) <= 9
    assert small.splitlines()[1] == "- language: fr (inferred)"
    assert p.render(1, token_counter=word_counter) == ""
    assert UserProfile("u").render(100) == ""


def test_profile_instructions_adapt_language_level_and_tone() -> None:
    p, _ = UserProfile("u").apply(
        [
            entry("language", "anglais"),
            entry("technical_level", "expert"),
            entry("communication_style", "informel et concis"),
        ]
    )
    text = profile_instructions(p)
    assert text.splitlines()[0] == "Answer in English."
    assert "expert" in text and "relaxed" in text and "short" in text
    assert profile_instructions(UserProfile("u")) == ""
    odd, _ = UserProfile("u").apply([entry("technical_level", "wizard")])
    assert profile_instructions(odd) == ""
