"""The rewriter's rules and verifier, without a model."""

from __future__ import annotations

import pytest

from memory_chains.rewrite import analyse
from memory_chains.rewrite._entities import candidate_entities, names_in
from memory_chains.rewrite._prompt import _EXAMPLES, _MAX_NAMES, response_format
from memory_chains.rewrite._rules import name_phrase, put_referent, rule_rewrite
from memory_chains.rewrite._verify import verify

OFFERS = [
    ("user", "Je compare le Forfait Alizé et le Forfait Mistral."),
    ("assistant", "Le Forfait Alizé coûte 9 € et le Forfait Mistral 12,99 €."),
]


@pytest.mark.parametrize(
    ("question", "referent", "expected"),
    [
        ("Quelle est sa durée d'engagement ?", "Forfait Mistral",
         "Quelle est la durée d'engagement du Forfait Mistral ?"),
        ("elle a la 5G ?", "Formule Nid", "Formule Nid a la 5G ?"),
        ("Combien coûte-t-il ?", "Forfait Mistral", "Combien coûte le Forfait Mistral ?"),
        ("on peut la résilier comment ?", "Forfait Alizé",
         "on peut résilier le Forfait Alizé comment ?"),
        ("Le second a-t-il la 5G ?", "Forfait Mistral", "Le Forfait Mistral a-t-il la 5G ?"),
        ("et celui à 12,99 il marche où ?", "Forfait Mistral",
         "et le Forfait Mistral il marche où ?"),
        ("Y a un engagement ?", "Forfait Mistral", "Y a un engagement pour le Forfait Mistral ?"),
        ("Et la carte graphique ?", "ASUS ROG", "Et la carte graphique d'ASUS ROG ?"),
        ("Is it refundable?", "Kestrel Lite", "Is Kestrel Lite refundable?"),
        ("What's its excess?", "Home Complete", "What's Home Complete's excess?"),
        ("what does the european one cost?", "Kestrel Plus", "what does Kestrel Plus cost?"),
    ],
)  # fmt: skip
def test_the_referent_is_put_in_with_the_conversations_determiner(
    question: str, referent: str, expected: str
) -> None:
    assert put_referent(question, referent, OFFERS) == expected


def test_impersonal_pronouns_are_left_alone() -> None:
    for question in ("Faut-il un dépôt ?", "Y a-t-il des frais ?", "Il y a un engagement ?"):
        assert "pronoun" not in analyse(question).reasons, question
        assert put_referent(question, "Forfait Mistral", OFFERS, ("substitution",)) is None


@pytest.mark.parametrize(
    "question", ["Que se passe-t-il après 12 mois ?", "que se passe t il apres 12 mois ?"]
)
def test_an_inverted_impersonal_pronoun_is_completed_not_replaced(question: str) -> None:
    # "se passe-t-il" names no one; typed without hyphens the "il" is still inverted.
    written = put_referent(question, "Forfait Mistral", OFFERS)
    assert written is not None and written.endswith("pour le Forfait Mistral ?")
    assert "t il" in written.replace("-", " ")


def test_an_ordinal_picks_from_the_latest_list() -> None:
    names = candidate_entities(OFFERS)
    assert rule_rewrite("Le premier a la 5G ?", OFFERS, names) == "Le Forfait Alizé a la 5G ?"
    assert rule_rewrite("et le dernier ?", OFFERS, names) == "et le Forfait Mistral ?"


def test_a_comparison_names_every_thing_at_the_end() -> None:
    written = put_referent("Lequel a la 5G ?", ["Forfait Alizé", "Forfait Mistral"], OFFERS)
    assert written == "Lequel a la 5G, le Forfait Alizé ou le Forfait Mistral ?"


def test_name_phrase_takes_the_last_determiner() -> None:
    history = [("assistant", "La Carte Cobalt est gratuite ; la carte Cobalt a un plafond.")]
    assert name_phrase("Carte Cobalt", history) == "la Carte Cobalt"
    assert name_phrase("Inconnue", history) == "Inconnue"


def test_the_verifier_rejects_a_clause_copied_from_an_answer() -> None:
    answer = "Oui, la conciergerie de la Carte Onyx est joignable 24 h/24, le week-end aussi."
    history = [("user", "La Carte Onyx a une conciergerie ?"), ("assistant", answer)]
    question = "Il faut combien d'apport minimum pour une maison ?"
    copied = question[:-2] + ", la conciergerie de la Carte Onyx est joignable 24 h/24 ?"
    verdict = verify(copied, question, analyse(question), history)
    assert verdict.question is None and "copies" in (verdict.problem or "")


def test_the_verifier_lets_a_reference_word_go() -> None:
    question = "tell me more about cancelling the third one"
    history = [("assistant", "We have Kestrel Lite, Kestrel Plus and Kestrel Max.")]
    verdict = verify(
        "Tell me more about cancelling Kestrel Max?", question, analyse(question), history
    )
    assert verdict.accepted, verdict


def test_every_worked_example_chooses_among_its_listed_names() -> None:
    for turns, _, about, _ in _EXAMPLES:
        names = candidate_entities(turns, limit=_MAX_NAMES)
        assert set(about) <= set(names), (about, names)
        schema = response_format(names)["json_schema"]["schema"]["properties"]["about"]
        assert schema.get("items", {}).get("enum", []) == list(names)


_SHOP = [
    ("user", "Je regarde le Zephyr 14 de Norvane, il est dispo ?"),
    ("assistant", "Oui, le Zephyr 14 est en stock."),
    ("user", "Quel est son poids ?"),
    ("assistant", "Le Zephyr 14 pèse 1,3 kg."),
]


def test_an_elliptic_comparison_names_the_missing_side_with_the_aspect_asked() -> None:
    written = put_referent("Et compare à celui de Kovalt ?", ["Zephyr 14"], _SHOP)
    assert written == "Et compare le poids du Zephyr 14 à celui de Kovalt ?"


def test_a_comparison_with_a_pronoun_keeps_the_pronoun_rule() -> None:
    written = put_referent("Is it lighter than the Kovalt?", "Zephyr 14", [("user", "Zephyr 14?")])
    assert written is not None and written.startswith("Is Zephyr 14 lighter")


def test_an_elliptic_complement_goes_back_into_the_question_the_model_returned() -> None:
    turns = [("user", "À quelle heure ouvre la médiathèque Brontë ?"), ("assistant", "À 9 h.")]
    q = "Et le dimanche ?"
    verdict = verify("À quelle heure ouvre la médiathèque Brontë ?", q, analyse(q), turns)
    assert verdict.question == "À quelle heure ouvre la médiathèque Brontë le dimanche ?"
    # a rewrite that drops the question's words without being the earlier question is refused
    assert verify("Quels sont les horaires ?", q, analyse(q), turns).question is None


def test_a_request_in_the_users_words_is_not_an_answer() -> None:
    q = "Et compare à celui de Kovalt ?"
    ok = verify("Comparez le Zephyr 14 à celui de Kovalt.", q, analyse(q), _SHOP, ["Zephyr 14"])
    assert ok.question == "Comparez le Zephyr 14 à celui de Kovalt ?"
    answer = verify("Le Zephyr 14 pèse 1,3 kg.", q, analyse(q), _SHOP, ["Zephyr 14"])
    assert answer.question is None


def test_a_reference_phrase_in_the_users_words_is_not_a_copied_answer() -> None:
    q = "Et compare à celui de Kovalt ?"
    rewrite = "Quel est le poids du Zephyr 14 comparé à celui de Kovalt ?"
    assert verify(rewrite, q, analyse(q), _SHOP, ["Zephyr 14"]).question == rewrite


def test_rules_leave_a_question_that_names_its_subject() -> None:
    turns = [("user", "Je regarde le Zephyr 14."), ("assistant", "Il a une puce Kovalt K3.")]
    names = ["Kovalt K3", "Zephyr 14"]
    assert rule_rewrite("Et la garantie du Zephyr 14 ?", turns, names) is None


def test_rules_prefer_what_the_user_spoke_of_to_a_name_in_an_answer() -> None:
    turns = [("user", "Je regarde le Zephyr 14."), ("assistant", "Il a une puce Kovalt K3.")]
    written = rule_rewrite("Et sa garantie ?", turns, ["Kovalt K3", "Zephyr 14"])
    assert written is not None and "Zephyr 14" in written and "Kovalt" not in written


@pytest.mark.parametrize(
    ("question", "rewrite"),
    [
        (
            "Et si je suis absent à une épreuve ?",
            "Si vous êtes absent à l'examen du BTS, que faire ?",
        ),
        ("and for mine, what photo do they want?", "What photo do they want for your passport?"),
        ("Vous passez le samedi ?", "Je passe le BTS le samedi chez Norvane ?"),
    ],
)
def test_the_verifier_rejects_a_rewrite_that_changes_who_is_speaking(
    question: str, rewrite: str
) -> None:
    history = [("user", "Je passe le BTS et mon passport chez Norvane."), ("assistant", "Bien.")]
    verdict = verify(rewrite, question, analyse(question), history)
    assert verdict.question is None and "changes who" in (verdict.problem or "")


def test_the_verifier_keeps_a_rewrite_in_the_questions_person() -> None:
    history = [("user", "Je regarde la Carte Onyx."), ("assistant", "Elle coûte 9 €.")]
    question = "Et mon plafond ?"
    verdict = verify(
        "Quel est mon plafond avec la Carte Onyx ?", question, analyse(question), history
    )
    assert verdict.accepted, verdict


def test_a_month_or_a_weekday_is_never_the_referent() -> None:
    turns = [
        ("user", "I applied for the Corran Work Visa in February."),
        ("assistant", "Decisions are sent out on Monday; the Corran Work Visa takes 8 weeks."),
    ]
    names = candidate_entities(turns)
    assert names == ("Corran Work Visa",)
    written = rule_rewrite("and my application, how long before they decide?", turns, names)
    assert written is None or ("February" not in written and "Monday" not in written)


def test_a_model_code_stays_inside_the_name_and_a_unit_is_no_name() -> None:
    turns = [("assistant", "La Box 5G Granit coûte 31 € pour 150 Go ; le studio fait 19 m².")]
    assert candidate_entities(turns) == ("Box 5G Granit",)


def test_a_french_name_is_put_in_with_the_noun_that_says_what_it_is() -> None:
    turns = [("user", "La carte Opaline, elle a quels plafonds ?"), ("assistant", "900 €.")]
    assert name_phrase("Opaline", turns) == "la carte Opaline"
    assert put_referent("Et pour la bloquer ?", "Opaline", turns) == (
        "Et pour bloquer la carte Opaline ?"
    )


@pytest.mark.parametrize(
    "question",
    ["et sur l'autre offre, on paie combien ?", "le nombre de places est limité ?"],
)
def test_an_article_before_a_noun_in_re_is_not_an_object_pronoun(question: str) -> None:
    turns = [("assistant", "Le forfait Brise coûte 8 €.")]
    written = put_referent(question, "forfait Brise", turns) or ""
    assert written.startswith(question.rstrip(" ?")), written  # completed, nothing replaced
    assert written.endswith("pour le forfait Brise ?"), written


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Will I pay a fee in Oslo?", ["Oslo"]),
        ("That's Nimbus Basic, our entry plan.", ["Nimbus Basic"]),
        ("What's the Nimbus Pro? It has 5G.", ["Nimbus Pro"]),
        ("Is the Velo Start available?", ["Velo Start"]),
        ("We offer Nimbus Basic and Nimbus Pro.", ["Nimbus Basic", "Nimbus Pro"]),
    ],
)
def test_a_function_word_opening_a_sentence_starts_no_name(text: str, names: list[str]) -> None:
    assert names_in(text) == names


@pytest.mark.parametrize(
    ("question", "referent", "history", "expected"),
    [
        ("Quel est le prix du forfait ?", "Forfait Brume",
         [("assistant", "Le Forfait Brume coûte 9 €.")], "Quel est le prix du Forfait Brume ?"),
        ("Can I close my account online?", "Nimbus Account",
         [("assistant", "The Nimbus Account is free.")], "Can I close my Nimbus Account online?"),
        ("la carte a une assurance ?", "Ambre",
         [("user", "La carte Ambre, c'est combien ?")], "La carte Ambre a une assurance ?"),
    ],
)  # fmt: skip
def test_the_generic_noun_for_the_thing_becomes_its_name(
    question: str, referent: str, history: list[tuple[str, str]], expected: str
) -> None:
    assert put_referent(question, referent, history) == expected


def test_a_short_name_is_kept_beside_a_longer_one_that_only_spells_it() -> None:
    turns = [("user", "I have the Nimbus card."), ("assistant", "It works in the US.")]
    assert candidate_entities(turns) == ("US", "Nimbus")


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("et sur celui des bénévoles ?", "et sur Espace Lierre ?"),
        ("pour celui de la petite, qui vient ?", "pour Espace Lierre, qui vient ?"),
        ("et celui à 12,99 € ?", "et Espace Lierre ?"),
    ],
)
def test_a_demonstrative_is_replaced_with_its_whole_description(
    question: str, expected: str
) -> None:
    assert put_referent(question, "Espace Lierre", []) == expected
