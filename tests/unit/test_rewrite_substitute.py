"""Writing the referent into a follow-up question without a model.

``_substitute`` (the pronoun / possessive substitution shared by the fallback and the
templates) and ``template_rewrite``: a pronoun that resumes a noun phrase of the question
itself, an impersonal "il" / "it", and the neighbouring cases of the same family.
"""

from __future__ import annotations

import pytest

from memory_chains.rewrite import fallback_rewrite
from memory_chains.rewrite._substitute import _substitute
from memory_chains.rewrite._template import template_rewrite


@pytest.mark.parametrize(
    ("question", "referent", "expected"),
    [
        # left dislocation: the pronoun is the noun phrase before the comma, which takes the
        # name as its complement
        (
            "Et la version express, elle coûte combien ?",
            "Colissimo",
            "Et la version express de Colissimo, elle coûte combien ?",
        ),
        (
            "Le cours de yoga, il commence à quelle heure ?",
            "Atlas Fitness",
            "Le cours de yoga d'Atlas Fitness, il commence à quelle heure ?",
        ),
        (
            "Et la batterie, combien de temps tient-elle ?",
            "Kobo Clara 2E",
            "Et la batterie de Kobo Clara 2E, combien de temps tient-elle ?",
        ),
        (
            "Et sa garantie, elle couvre combien d'années ?",
            "ThinkPad X1 Carbon",
            "Et la garantie de ThinkPad X1 Carbon, elle couvre combien d'années ?",
        ),
        (
            "Et ces points, ils expirent quand ?",
            "Fnac",
            "Et les points Fnac, ils expirent quand ?",
        ),
        # a noun phrase of a clause before the pronoun
        (
            "Si la batterie lâche, elle est couverte combien de temps ?",
            "ASUS ROG Strix G15",
            "Si la batterie d'ASUS ROG Strix G15 lâche, elle est couverte combien de temps ?",
        ),
        # the subject of a complex inversion
        (
            "La livraison est-elle gratuite ?",
            "Colissimo",
            "La livraison de Colissimo est-elle gratuite ?",
        ),
        (
            "Combien de temps la batterie tient-elle ?",
            "Kobo Clara 2E",
            "Combien de temps la batterie de Kobo Clara 2E tient-elle ?",
        ),
        # a noun phrase dislocated to the right
        (
            "Quelle carte graphique a-t-il, ce portable ?",
            "HP Pavilion 14",
            "Quelle carte graphique a-t-il, le portable HP Pavilion 14 ?",
        ),
        (
            "Elle vaut combien, sa carte graphique ?",
            "ASUS ROG Strix G15",
            "Elle vaut combien, la carte graphique d'ASUS ROG Strix G15 ?",
        ),
        # a noun phrase of another gender is not what the pronoun stands for
        (
            "Pour la garantie, il couvre quoi ?",
            "Dell XPS 15",
            "Pour la garantie, Dell XPS 15 couvre quoi ?",
        ),
        (
            "The express version, how much is it?",
            "Colissimo",
            "The express version of Colissimo, how much is it?",
        ),
        (
            "Its battery, how long does it last?",
            "Kobo Clara 2E",
            "Kobo Clara 2E's battery, how long does it last?",
        ),
    ],
)
def test_a_pronoun_resuming_the_question_s_own_noun_phrase_stays(
    question: str, referent: str, expected: str
) -> None:
    assert template_rewrite(question, referent) == expected


@pytest.mark.parametrize(
    "question",
    [
        "Votre boutique, elle ouvre à quelle heure ?",  # needs no name
        "Le premier a-t-il une vraie carte graphique ?",  # only the listing resolves it
        "Le Dell XPS 15 est-il léger ?",  # names its subject
        "The Kindle, how much is it?",
    ],
)
def test_a_noun_phrase_that_takes_no_name_leaves_the_pronoun_alone(question: str) -> None:
    assert _substitute(question, "Lenovo ThinkPad") is None


@pytest.mark.parametrize(
    ("question", "referent", "expected"),
    [
        ("Quel temps fait-il là-bas ?", "Porto", "Quel temps fait-il à Porto ?"),
        ("Quel temps fait-il là-bas en été ?", "Porto", "Quel temps fait-il à Porto en été ?"),
        ("Quel temps y fait-il en été ?", "Porto", "Quel temps fait-il à Porto en été ?"),
        ("Il y fait chaud en été ?", "Séville", "Il fait chaud en été à Séville ?"),
        ("Il pleut souvent là-bas ?", "Dublin", "Il pleut souvent à Dublin ?"),
        ("Quelle heure est-il là-bas ?", "Tokyo", "Quelle heure est-il à Tokyo ?"),
        ("Y a-t-il un métro là-bas ?", "Porto", "Y a-t-il un métro à Porto ?"),
        ("Y a-t-il un métro ?", "Porto", "Y a-t-il un métro ? (Porto)"),
        ("Il y a un parking ?", "Atlas Fitness", "Il y a un parking ? (Atlas Fitness)"),
        ("Faut-il réserver ?", "Pilates", "Faut-il réserver ? (Pilates)"),
        ("Vaut-il mieux réserver ?", "Porto", "Vaut-il mieux réserver ? (Porto)"),
        ("Reste-t-il des places ?", "Pilates", "Reste-t-il des places ? (Pilates)"),
        ("S'agit-il d'un écran OLED ?", "Dell XPS 15", "S'agit-il d'un écran OLED ? (Dell XPS 15)"),
        (
            "Est-il possible de payer en trois fois ?",
            "Alma",
            "Est-il possible de payer en trois fois ? (Alma)",
        ),
        (
            "Il fait combien de degrés en août ?",
            "Séville",
            "Il fait combien de degrés en août ? (Séville)",
        ),
        (
            "Vous pouvez m'aider s'il vous plaît ?",
            "Dell XPS 15",
            "Vous pouvez m'aider s'il vous plaît ? (Dell XPS 15)",
        ),
        ("Is it cold there?", "Oslo", "Is it cold in Oslo?"),
        ("What time is it there?", "Tokyo", "What time is it in Tokyo?"),
        (
            "How long does it take to get there?",
            "Dublin",
            "How long does it take to get to Dublin?",
        ),
        ("Does it rain a lot in April?", "Dublin", "Does it rain a lot in April? (Dublin)"),
    ],
)
def test_an_impersonal_pronoun_is_not_replaced(question: str, referent: str, expected: str) -> None:
    assert template_rewrite(question, referent) == expected


@pytest.mark.parametrize(
    ("question", "referent", "expected"),
    [
        # the same verbs with a referring pronoun
        (
            "Reste-t-il ouvert le dimanche ?",
            "Atlas Fitness",
            "Atlas Fitness reste-t-il ouvert le dimanche ?",
        ),
        (
            "À quelle heure est-il ouvert ?",
            "Atlas Fitness",
            "À quelle heure Atlas Fitness est-il ouvert ?",
        ),
        ("Il fait combien de kilos ?", "Dell XPS 15", "Dell XPS 15 fait combien de kilos ?"),
        ("Is it easy to use?", "Kobo Clara 2E", "Is Kobo Clara 2E easy to use?"),
    ],
)
def test_a_referring_pronoun_of_the_same_verbs_is_replaced(
    question: str, referent: str, expected: str
) -> None:
    assert template_rewrite(question, referent) == expected


@pytest.mark.parametrize(
    ("question", "referent", "expected"),
    [
        # a wh-question takes the name after the verb, as before
        ("Combien pèse-t-il ?", "Dell XPS 15", "Combien pèse Dell XPS 15 ?"),
        ("Combien de RAM a-t-il ?", "Dell XPS 15", "Combien de RAM a Dell XPS 15 ?"),
        ("Que propose-t-elle en promo ?", "Fnac", "Que propose Fnac en promo ?"),
        # else the name goes before the inversion
        (
            "Comment connecte-t-il le téléphone ?",
            "Kobo Clara 2E",
            "Comment Kobo Clara 2E connecte-t-il le téléphone ?",
        ),
        ("A-t-il une bonne batterie ?", "Dell XPS 15", "Dell XPS 15 a-t-il une bonne batterie ?"),
        ("Est-elle étanche ?", "Kobo Clara 2E", "Kobo Clara 2E est-elle étanche ?"),
        ("Pourquoi est-il si cher ?", "Dell XPS 15", "Pourquoi Dell XPS 15 est-il si cher ?"),
        # "avoir lieu" is not split
        ("Quels jours a-t-elle lieu ?", "Aquagym", "Quels jours a lieu Aquagym ?"),
        # elided "qu'" and "s'" before a name
        ("Est-ce qu'il est en stock ?", "Dell XPS 15", "Est-ce que Dell XPS 15 est en stock ?"),
        ("Est-ce qu'elle est en stock ?", "ASUS ROG", "Est-ce qu'ASUS ROG est en stock ?"),
        (
            "S'il tombe en panne, qui le répare ?",
            "Dell XPS 15",
            "Si Dell XPS 15 tombe en panne, qui le répare ?",
        ),
        # the pronoun "y"
        ("On peut y manger le soir ?", "Porto", "On peut manger à Porto le soir ?"),
        ("J'y vais comment ?", "Porto", "Je vais comment à Porto ?"),
        ("It's waterproof?", "Kobo Clara 2E", "Kobo Clara 2E is waterproof?"),
    ],
)
def test_pronoun_replacement_keeps_the_question_grammatical(
    question: str, referent: str, expected: str
) -> None:
    assert template_rewrite(question, referent) == expected


@pytest.mark.parametrize(
    ("question", "referent", "expected"),
    [
        # "de" is not elided before a "y" sounded as a consonant
        (
            "Faut-il apporter son tapis à ses séances ?",
            "yoga",
            "Faut-il apporter le tapis de yoga à ses séances ?",
        ),
        # "de ce cours" → "du cours"
        (
            "Combien coûte une séance de ce cours ?",
            "Pilates",
            "Combien coûte une séance du cours Pilates ?",
        ),
        # a common noun is a complement, a proper name stays in apposition
        ("Combien coûtent ces cours ?", "aquagym", "Combien coûtent les cours d'aquagym ?"),
        ("Combien coûtent ces cours ?", "Pilates", "Combien coûtent les cours Pilates ?"),
        # the existential "there" is not a place
        ("Is there a metro?", "Dublin", "Is there a metro? (Dublin)"),
    ],
)
def test_template_wording(question: str, referent: str, expected: str) -> None:
    assert template_rewrite(question, referent) == expected


def test_fallback_uses_the_same_substitution() -> None:
    assert fallback_rewrite("Quel temps fait-il là-bas ?", ["Porto"], []) == (
        "Quel temps fait-il à Porto ?"
    )
    assert fallback_rewrite("Et la version express, elle coûte combien ?", ["Colissimo"], []) == (
        "Et la version express de Colissimo, elle coûte combien ?"
    )
    assert fallback_rewrite("Faut-il réserver ?", ["Pilates"], []) == (
        "Faut-il réserver ? (Pilates)"
    )
