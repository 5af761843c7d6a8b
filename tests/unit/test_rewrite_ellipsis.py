"""Elliptic follow-ups that move the earlier question to another name ("Et pour le X ?").

Every name here is invented; none comes from an evaluation set.
"""

from __future__ import annotations

import json

import pytest

from memory_chains.rewrite import QueryRewriter
from memory_chains.rewrite._ellipsis import moved_name, reframe
from memory_chains.testing import ScriptedChatModel

FRAME = "Quelle est la garantie de la trottinette Volta S2 ?"
HISTORY = [
    ("user", FRAME),
    ("assistant", "La Volta S2 est garantie deux ans, la batterie un an."),
]


@pytest.mark.parametrize(
    "question",
    ["Et pour la Kinetix ?", "Et celle de Kinetix ?", "Et la Kinetix ?", "Et Kinetix ?"],
)
def test_a_follow_up_naming_another_thing_replaces_the_name_asked_about(question: str) -> None:
    assert reframe(FRAME, question, ["Volta S2"]) == (
        "Quelle est la garantie de la trottinette Kinetix ?"
    )


@pytest.mark.parametrize(
    ("question", "moved"),
    [
        ("What about the Nimbus one?", ("Nimbus", "")),
        ("and for Nimbus?", ("Nimbus", "")),
        ("Et vers le Portugal ?", ("Portugal", "vers")),
        ("Et pour le week-end ?", None),  # no name: a modifier
        ("Et pour annuler ?", None),
        ("Et compare à celle de Kinetix ?", None),  # a comparison keeps both
        ("Quelle est la garantie de la Kinetix ?", None),  # not elliptic
    ],
)
def test_what_a_follow_up_moves_the_question_to(question: str, moved: object) -> None:
    assert moved_name(question) == moved


def test_a_modifier_is_added_to_the_earlier_question() -> None:
    frame = "Quels sont les tarifs du cours de natation ?"
    assert reframe(frame, "Et pour le week-end ?") == (
        "Quels sont les tarifs du cours de natation pour le week-end ?"
    )


def test_after_a_preposition_only_the_name_after_the_same_preposition_changes() -> None:
    frame = "Un colis vers la Suède depuis le Relais Ostrea arrive quand ?"
    assert reframe(frame, "Et vers le Portugal ?", ["Relais Ostrea", "Suède"]) == (
        "Un colis vers le Portugal depuis le Relais Ostrea arrive quand ?"
    )


def test_an_elided_article_is_not_kept_before_a_consonant() -> None:
    frame = "Quel est le prix de l'Orvane X ?"
    assert reframe(frame, "Et pour la Brisa ?", ["Orvane X"]) == "Quel est le prix de Brisa ?"


def test_a_frame_with_several_names_and_no_clue_is_left_alone() -> None:
    frame = "La Volta S2 est-elle plus légère que la Kinetix ?"
    assert reframe(frame, "Et la Zefiro ?", ["Volta S2", "Kinetix"]) is None


def test_the_rules_move_the_last_question_instead_of_splicing_two_names() -> None:
    result = QueryRewriter(use_model=False).rewrite("Et pour la Kinetix ?", HISTORY)
    assert result.standalone == "Quelle est la garantie de la trottinette Kinetix ?"
    assert "Volta" not in result.standalone


def test_a_model_that_returns_the_earlier_question_gets_the_new_name_put_in() -> None:
    reply = json.dumps({"about": ["Volta S2"], "question": FRAME}, ensure_ascii=False)
    llm = ScriptedChatModel(replies=[reply])
    result = QueryRewriter(llm).rewrite("Et celle de Kinetix ?", HISTORY)
    assert result.standalone == "Quelle est la garantie de la trottinette Kinetix ?"
    assert result.method == "model"


def test_the_rules_only_move_a_question() -> None:
    history = [("user", "Je cherche la trottinette Volta S2."), ("assistant", "Elle est en stock.")]
    result = QueryRewriter(use_model=False).rewrite("Et pour la Kinetix ?", history)
    assert "cherche" not in result.standalone


CLASSES = "Quels sont les horaires de l'atelier de Céramique ?"


@pytest.mark.parametrize(
    ("frame", "question", "expected"),
    [
        (CLASSES, "Et l'atelier de Vitrail ?",
         "Quels sont les horaires de l'atelier de Vitrail ?"),
        (CLASSES, "Et pour l'atelier d'Origami ?",
         "Quels sont les horaires de l'atelier d'Origami ?"),
        ("When is the Ceramics workshop on Fridays?", "What about the Stained Glass workshop?",
         "When is the Stained Glass workshop on Fridays?"),
    ],
)  # fmt: skip
def test_a_name_in_the_earlier_questions_own_words_moves_the_question(
    frame: str, question: str, expected: str
) -> None:
    # "l'atelier de Vitrail" says which name changes: the one in "l'atelier de …".
    assert reframe(frame, question, []) == expected


@pytest.mark.parametrize(
    "question",
    ["Et le prix du Vitrail ?", "Et la salle de Vitrail ?", "What about the Vitrail teacher?"],
)
def test_a_follow_up_that_names_its_own_subject_gets_no_other_name(question: str) -> None:
    # Other words around the new name: which part changes is unknown, nothing is spliced.
    assert reframe(CLASSES, question, []) is None
    result = QueryRewriter(use_model=False).rewrite(question, [("user", CLASSES)])
    assert "Céramique" not in result.standalone
