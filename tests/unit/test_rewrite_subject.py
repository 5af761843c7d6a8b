"""The conversation's subject: what a follow-up that names nothing is still about.

A conversation opened on one thing stays about it until the user names something else;
the deterministic rewrite adds that subject when it does not name it, and "he"/"she" in a
conversation about a person is that person.
"""

from __future__ import annotations

import pytest

from memory_chains.evaluation.rewrite import canard_history
from memory_chains.rewrite import QueryRewriter
from memory_chains.rewrite._entities import conversation_subject
from memory_chains.rewrite._fallback import fallback_rewrite, subject_person, with_subject
from memory_chains.testing import ScriptedChatModel

GYM = [
    ("user", "Je m'intéresse au cours de Pilates Reformer."),
    ("assistant", "Il a lieu le mardi avec Julien, en petit groupe."),
    ("user", "Il faut réserver ?"),
    ("assistant", "Oui, sur l'application Atlas Fitness."),
]


@pytest.mark.parametrize(
    ("turns", "expected"),
    [
        (GYM, ("Pilates Reformer",)),
        # the user moved on to something else: no subject any more
        ([*GYM, ("user", "Et le cours de Zumba ?"), ("assistant", "Le jeudi.")], ()),
        # a later user turn naming the subject again (or part of it) keeps it
        (
            [*GYM, ("user", "Le Pilates est-il mixte ?"), ("assistant", "Oui.")],
            ("Pilates Reformer",),
        ),
        # two things coordinated in the opening turn: none is *the* subject
        ([("user", "Je compare le Dell XPS 15 et le HP Pavilion 14.")], ()),
        ([("user", "Dell XPS 15 or HP Pavilion 14?")], ()),
        # the thing and its setting: both are what the conversation is about
        ([("user", "Parlez-moi de l'hôtel Belvédère à Annecy.")], ("Belvédère", "Annecy")),
        # an acronym of a common noun is not a subject
        ([("user", "Je cherche un PC portable.")], ()),
        # names only from the assistant: nothing the user opened with
        ([("user", "Bonjour"), ("assistant", "Bienvenue chez Atlas Fitness.")], ()),
        ([], ()),
    ],
)
def test_conversation_subject(turns: list[tuple[str, str]], expected: tuple[str, ...]) -> None:
    assert conversation_subject(turns) == expected


def test_with_subject_adds_it_once() -> None:
    assert (
        with_subject("À quelle heure ?", ("Pilates Reformer",))
        == "À quelle heure ? (Pilates Reformer)"
    )
    assert (
        with_subject("À quelle heure ? (Julien)", ("Pilates",))
        == "À quelle heure ? (Julien; Pilates)"
    )
    # already named (case and accents folded): unchanged
    assert (
        with_subject("Le PILATES est à quelle heure ?", ("Pilates",))
        == "Le PILATES est à quelle heure ?"
    )
    assert with_subject("À quelle heure ?", ()) == "À quelle heure ?"
    # each name of the subject is added once, only when missing
    assert (
        with_subject("Quel est son tarif ? (Belvédère)", ("Belvédère", "Annecy"))
        == "Quel est son tarif ? (Belvédère; Annecy)"
    )


def test_subject_person_needs_a_person_and_an_english_personal_pronoun() -> None:
    assert subject_person("Did he regain power?", ("Patrice Lumumba",)) == "Patrice Lumumba"
    assert subject_person("What was her first album?", ("Jessi Colter",)) == "Jessi Colter"
    assert subject_person("Did they regain power?", ("Patrice Lumumba",)) == ""
    assert (
        subject_person("Did he regain power?", ("Slipknot",)) == ""
    )  # one word: not person-shaped
    assert subject_person("Did Patrice Lumumba regain power?", ("Patrice Lumumba",)) == ""
    assert subject_person("Est-il ouvert ?", ("Atlas Fitness",)) == ""


def test_fallback_keeps_the_recent_referent_and_adds_the_subject() -> None:
    rewritten = fallback_rewrite(
        "À quelle heure ont-ils lieu ?", ["Julien"], GYM, subject=("Pilates Reformer",)
    )
    assert rewritten == "À quelle heure ont-ils lieu ? (Julien; Pilates Reformer)"


def test_fallback_he_is_the_person_the_conversation_is_about() -> None:
    story = [
        ("user", "Patrice Lumumba: Deposition"),
        ("assistant", "Mobutu's troops captured Lumumba in December."),
    ]
    rewritten = fallback_rewrite(
        "Did he regain power?", ["December", "Mobutu"], story, subject=("Patrice Lumumba",)
    )
    assert rewritten == "Did Patrice Lumumba regain power?"


def test_rewriter_without_model_adds_the_subject_to_a_follow_up_naming_nothing() -> None:
    rw = QueryRewriter(use_model=False)
    result = rw.rewrite("Combien coûtent ces séances ?", GYM)
    assert "Pilates Reformer" in result.standalone
    # a question naming something new has left the subject: nothing added
    moved = rw.rewrite("Et combien coûte le cours de Zumba ?", GYM)
    assert "Pilates" not in moved.standalone


def test_he_in_a_conversation_about_a_person_needs_no_model_call() -> None:
    story = canard_history(
        ["Thor Heyerdahl", "Kon-Tiki", "Where did the raft start?", "In Callao, Peru."]
    )
    model = ScriptedChatModel(replies=[])  # any call would fail the test
    result = QueryRewriter(model).rewrite("Who went with him?", story)
    assert (result.standalone, result.model_calls) == ("Who went with Thor Heyerdahl?", 0)
