"""Deterministic pieces of the rewriter: detection, candidate names, fusion, parsing."""

from __future__ import annotations

import pytest

from memory_chains.errors import InvalidInputError, MalformedOutputError
from memory_chains.rewrite import analyse, candidate_entities, detect_language, fuse_rankings
from memory_chains.rewrite._verify import read_question


@pytest.mark.parametrize(
    "question",
    [
        "Et la carte graphique ?",
        "Quelle est sa garantie ?",
        "Et celle du Lenovo ?",
        "Le second est-il moins cher ?",
        "Combien coûtent ces cours ?",
        "Il fait quel temps là-bas ?",
        "Comment y aller ?",
        "Puis-je le retourner ?",
        "Qui en est la prof ?",
        "Quels sont les horaires ?",
        "Combien ?",
        "Does it have a GPU?",
        "What about the Lenovo?",
        "When did they disband?",
        "How do I get there?",
        "Which one is cheaper?",
        "What happened in 1983?",
        "Are there any other interesting aspects about this article?",
        # No pronoun, but nothing named either: an implicit object the model settles.
        "Faut-il un dépôt de garantie ?",
        "C'est quoi le minimum ?",
        "Is a deposit required?",
        "Lequel est le moins cher ?",
    ],
)
def test_follow_ups_need_rewriting(question: str) -> None:
    assert not analyse(question).standalone


@pytest.mark.parametrize(
    "question",
    [
        "Quel est le prix du Dell XPS 15 ?",
        "Quels sont vos horaires d'ouverture ?",
        "Quelle est votre politique de retour ?",
        "Livrez-vous en Belgique ?",
        "Comment se déplacer à Édimbourg ?",
        "What is the warranty of the Dell XPS 15?",
        "Is there a gym in Lyon?",
        "What is the capital of France?",
    ],
)
def test_standalone_questions_are_detected(question: str) -> None:
    assert analyse(question).standalone


def test_language_detection() -> None:
    assert detect_language("Et pour les produits électroniques ?") == "fr"
    assert detect_language("And how do I get around the city?") == "en"
    assert analyse("Does it work?", language="fr").language == "fr"


def test_candidates_recent_first_and_deduplicated() -> None:
    turns = [
        ("user", "Je compare le Dell XPS 15 et le Lenovo ThinkPad X1 Carbon."),
        ("assistant", "Le XPS 15 a une meilleure carte graphique."),
        ("user", "Et l'ASUS ROG Strix G15 ?"),
    ]
    assert candidate_entities(turns) == (
        "ASUS ROG Strix G15",
        "Dell XPS 15",
        "Lenovo ThinkPad X1 Carbon",
    )


def test_candidates_skip_sentence_starts_and_units() -> None:
    turns = [("assistant", "Il a 16 Go de RAM. Oui, Camille anime le cours de Yoga Vinyasa.")]
    assert candidate_entities(turns) == ("Yoga Vinyasa", "Camille")


def test_a_sentence_opening_preposition_is_not_part_of_the_name() -> None:
    turns = [
        ("assistant", "À la Maison Verlaine, le dépôt se fait le matin."),
        ("assistant", "At the Corbel Exchange they open at nine."),
    ]
    assert candidate_entities(turns) == ("Corbel Exchange", "Maison Verlaine")


def test_candidates_hints_after_the_history() -> None:
    assert candidate_entities([("user", "Le Dell XPS 15")], ["Porto"]) == ("Dell XPS 15", "Porto")


def test_fuse_rankings_reciprocal_rank() -> None:
    # a: 1/61 + 1/63, b: 1/62 + 1/61, c: 1/63 + 1/62 -> b > a > c
    assert fuse_rankings([["a", "b", "c"], ["b", "c", "a"]]) == ["b", "a", "c"]
    assert fuse_rankings([["x", "y"]], k=0) == ["x", "y"]
    assert fuse_rankings([]) == []
    with pytest.raises(InvalidInputError):
        fuse_rankings([["a"]], k=-1)


def test_read_question_variants() -> None:
    assert read_question('{"question": "Q ?"}') == "Q ?"
    assert read_question('{"standalone_question": "Q ?"}') == "Q ?"
    assert read_question("« Q ? »") == "Q ?"
    with pytest.raises(MalformedOutputError) as info:
        read_question('{"answer": 3}')
    assert info.value.raw == '{"answer": 3}'
    with pytest.raises(MalformedOutputError):
        read_question("   ")


@pytest.mark.parametrize(
    "module",
    [
        "memory_chains.rewrite",
        "memory_chains.rewrite._detect",
        "memory_chains.rewrite._ellipsis",
        "memory_chains.rewrite._entities",
        "memory_chains.rewrite._ordinals",
        "memory_chains._ranking",
        "memory_chains.rewrite._queries",
        "memory_chains.rewrite._rewriter",
        "memory_chains.rewrite._rules",
        "memory_chains.rewrite._verify",
        "memory_chains.evaluation.metrics",
        "memory_chains.evaluation.rewrite",
    ],
)
def test_docstring_examples_run(module: str) -> None:
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
