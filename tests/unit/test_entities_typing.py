"""Typing names nobody listed: sentence evidence, the model's confidence, agreement.

Every name here is invented for the test; none is in a gazetteer or an evaluation set.
"""

from __future__ import annotations

import json

import pytest

from memory_chains.entities import (
    BUILTIN_RELATIONS,
    EntityTracker,
    LLMEntityExtractor,
    RuleEntityExtractor,
)
from memory_chains.entities._evidence import best_type, type_evidence
from memory_chains.entities._relrules import fits, implied_relations, rule_relations
from memory_chains.entities._types import Entity, Mention
from memory_chains.testing import ScriptedChatModel

TYPES = ["PERSON", "ORGANIZATION", "PRODUCT", "LOCATION", "DATE", "MONEY", "CONCEPT"]


def _types(text: str) -> dict[str, str]:
    x = RuleEntityExtractor().extract(text, TYPES)
    return {m.name: m.type for m in x.mentions}


@pytest.mark.parametrize(
    ("text", "name", "expected"),
    [
        ("User: On se retrouve à Kervaric demain ?", "Kervaric", "LOCATION"),
        ("User: I live in Dunmorrow, near the station.", "Dunmorrow", "LOCATION"),
        ("User: Mon courtier chez Vendrix m'a appelé.", "Vendrix", "ORGANIZATION"),
        ("User: J'ai vu Mme Palastre hier.", "Palastre", "PERSON"),
        ("User: Bonjour, je suis Ondine Farrac.", "Ondine Farrac", "PERSON"),
        ("User: Is the Halvey Plus plan cheaper?", "Halvey Plus", "PRODUCT"),
        ("User: J'hésite avec la gamme Sorvane.", "gamme Sorvane", "PRODUCT"),
        ("User: We run torvik-py in production.", "torvik-py", "PRODUCT"),
        ("User: Le Cabinet Marquenne gère l'immeuble.", "Cabinet Marquenne", "ORGANIZATION"),
        ("User: The office is on Pellow Street.", "Pellow Street", "LOCATION"),
        ("User: Je visite le 14 rue Vantelot.", "14 rue Vantelot", "LOCATION"),
        ("User: Ça relève de la loi TRAVEN.", "loi TRAVEN", "CONCEPT"),
        ("User: I applied to the MSc Coastal Ecology.", "MSc Coastal Ecology", "CONCEPT"),
        ("User: I'm between Ardlow and Quenby.", "Quenby", "LOCATION"),
        ("User: La CRAV du Vendrel m'a répondu.", "CRAV du Vendrel", "ORGANIZATION"),
    ],
)
def test_unknown_names_are_typed_from_their_sentence(text, name, expected):
    assert _types(text).get(name) == expected, _types(text)


def test_amounts_keep_their_period_and_dates_their_time():
    found = _types("User: C'est 38 € par mois, rendez-vous mardi 9 avril à 10h ou Thursday at 6pm.")
    assert found["38 € par mois"] == "MONEY"
    assert found["mardi 9 avril à 10h"] == "DATE" and found["Thursday at 6pm"] == "DATE"


def test_evidence_adds_up_and_best_type_respects_the_allowed_types():
    scores = type_evidence("User: chez Brellin, à Brellin", "Brellin")
    assert scores["ORGANIZATION"] > 0 and scores["LOCATION"] > 0
    assert best_type(scores, ["PERSON"], "PERSON") == "PERSON"
    assert best_type({}, None, "CONCEPT") == "CONCEPT"


def test_a_names_own_head_noun_outranks_the_preposition_before_it():
    # "à la Clinique …" says place, the name's own word says organization: the name wins.
    assert _types("User: Rendez-vous à la Clinique Vorlane.")["Clinique Vorlane"] == (
        "ORGANIZATION"
    )
    # A name whose words say nothing is still typed from its sentence.
    assert type_evidence("User: chez Brellin", "Brellin")["ORGANIZATION"] > 0


@pytest.mark.parametrize(
    ("text", "name", "expected"),
    [
        (
            "Ici la Clinique vétérinaire Saint-Orlan, à Kervaric.",
            "Clinique vétérinaire Saint-Orlan",
            "ORGANIZATION",
        ),
        (
            "Mon fils est au Lycée professionnel Jean-Tarvel.",
            "Lycée professionnel Jean-Tarvel",
            "ORGANIZATION",
        ),
        (
            "Le Centre hospitalier de Quenbourg a rappelé.",
            "Centre hospitalier de Quenbourg",
            "ORGANIZATION",
        ),
        (
            "Je suis admise à l'École Supérieure d'Optique du Vendrel.",
            "École Supérieure d'Optique du Vendrel",
            "ORGANIZATION",
        ),
        (
            "On dort à la Résidence universitaire Pellow.",
            "Résidence universitaire Pellow",
            "LOCATION",
        ),
    ],
)
def test_a_french_institution_name_keeps_its_adjectives_and_de(text, name, expected):
    assert _types(text).get(name) == expected, _types(text)


def test_a_verb_after_an_institution_noun_does_not_join_the_name():
    found = _types("La Banque propose Vendrix Flex.")
    assert "Banque propose Vendrix Flex" not in found


@pytest.mark.parametrize(
    ("text", "name", "expected"),
    [
        ("User: Le syndic Marvelot-Brun nous écrit.", "Marvelot-Brun", "ORGANIZATION"),
        ("User: J'ai pris l'abonnement Quarto.", "Quarto", "PRODUCT"),
        ("User: The clinic Ardlow Vale called me back.", "Ardlow Vale", "ORGANIZATION"),
    ],
)
def test_a_determiner_and_a_type_noun_before_a_name_type_it(text, name, expected):
    assert _types(text).get(name) == expected, _types(text)


def test_a_titles_full_stop_does_not_end_the_sentence():
    assert _types("Une heure d'anglais avec M. Trevannec. Merci.").get("Trevannec") == "PERSON"
    assert _types("I saw Dr. Quellow yesterday.").get("Quellow") == "PERSON"


def test_a_name_after_its_head_noun_is_the_same_organization():
    t = EntityTracker(RuleEntityExtractor())
    t.observe("Le syndic Marvelot-Brun nous écrit.", "Ici Sabrine, du Cabinet Marvelot-Brun.")
    orgs = [e for e in t.entities() if "Marvelot-Brun" in (e.name, *e.aliases)]
    assert len(orgs) == 1 and orgs[0].type == "ORGANIZATION", t.entities()


def test_lower_case_repeat_of_a_name_is_an_alias_of_it():
    t = EntityTracker(RuleEntityExtractor())
    t.observe("je suis cliente chez banque torvel", "Bonjour, ici Banque Torvel.")
    [bank] = [e for e in t.entities() if e.type == "ORGANIZATION"]
    assert bank.name == "Banque Torvel" or "Banque Torvel" in bank.aliases
    assert t.get("banque torvel") is bank


# -- relations --------------------------------------------------------------------------


def test_rule_relations_from_cue_words():
    text = (
        "User: J'habite à Quistrel et ma carte Ombrine Gold est bloquée. Je préfère Lotrix.\n"
        "Assistant: Ici Albane Vireau, conseillère chez Lotrix à Quistrel."
    )
    mentions = [
        Mention("Quistrel", "LOCATION"),
        Mention("Ombrine Gold", "PRODUCT"),
        Mention("Lotrix", "ORGANIZATION"),
        Mention("Albane Vireau", "PERSON"),
    ]
    found = {(r.source, r.kind, r.target) for r in rule_relations(text, mentions)}
    assert {
        ("USER", "LOCATED_IN", "Quistrel"),
        ("USER", "OWNS", "Ombrine Gold"),
        ("USER", "PREFERS", "Lotrix"),
        ("Albane Vireau", "WORKS_AT", "Lotrix"),
        ("Lotrix", "LOCATED_IN", "Quistrel"),
    } <= found


def test_a_negated_preference_is_not_one():
    text = "User: I'd rather not take the Velto Card."
    assert rule_relations(text, [Mention("Velto Card", "PRODUCT")]) == ()


def test_names_imply_made_by_and_part_of_across_turns():
    entities = [
        Entity("e1", "Corvane Bank", "ORGANIZATION"),
        Entity("e2", "gamme Lisbel", "PRODUCT"),
        Entity("e3", "Corvane Flex Card", "PRODUCT"),
        Entity("e4", "Lisbel Teen", "PRODUCT"),
    ]
    assert sorted(implied_relations(entities)) == [
        ("e3", "MADE_BY", "e1"),
        ("e4", "PART_OF", "e2"),
    ]


@pytest.mark.parametrize(
    ("kind", "source", "target", "ok"),
    [
        ("WORKS_AT", "PERSON", "ORGANIZATION", True),
        ("WORKS_AT", "PRODUCT", "ORGANIZATION", False),
        ("PREFERS", "PERSON", "PRODUCT", False),
        ("PREFERS", "USER", "PRODUCT", True),
        ("LOCATED_IN", "ORGANIZATION", "PERSON", False),
        ("COMPARES_TO", "PRODUCT", "ORGANIZATION", False),
        ("MY_OWN_KIND", "PRODUCT", "DATE", True),
        ("MADE_BY", "PRODUCT", "", True),
    ],
)
def test_relation_ends_must_fit_the_kind(kind, source, target, ok):
    assert fits(kind, source, target) is ok


def test_user_relations_are_kept_and_shown_in_the_context():
    t = EntityTracker(RuleEntityExtractor())
    t.observe("J'habite à Quistrel.", "Très bien.")
    assert t.user_relations() == [("LOCATED_IN", "Quistrel")]
    assert t.related("Quistrel") == [("USER", "LOCATED_IN", "in")]
    assert "the user LOCATED_IN it" in t.context("où ?")
    exported = json.loads(t.export_json())
    again = EntityTracker(RuleEntityExtractor())
    again.import_json(json.dumps(exported))
    assert again.user_relations() == [("LOCATED_IN", "Quistrel")]


# -- the model and the rules together ---------------------------------------------------


def _reply(*entities: tuple[str, str, float], relations: tuple = ()) -> str:
    return json.dumps(
        {
            "entities": [{"name": n, "type": t, "confidence": c} for n, t, c in entities],
            "relations": [{"source": s, "relation": k, "target": o} for s, k, o in relations],
        }
    )


def test_strong_sentence_evidence_retypes_an_unsure_model():
    text = "User: Je rentre à Kervaric par le train."
    model = ScriptedChatModel(replies=[_reply(("Kervaric", "PERSON", 0.5))])
    x = LLMEntityExtractor(model).extract(text, TYPES)
    assert [(m.name, m.type) for m in x.mentions] == [("Kervaric", "LOCATION")]


def test_a_sure_model_keeps_its_type_against_weak_evidence():
    text = "User: J'ai parlé avec Kervaric."
    model = ScriptedChatModel(replies=[_reply(("Kervaric", "ORGANIZATION", 0.9))])
    x = LLMEntityExtractor(model).extract(text, TYPES)
    assert [(m.name, m.type) for m in x.mentions] == [("Kervaric", "ORGANIZATION")]


def test_amounts_and_dates_are_left_to_the_patterns_and_invented_names_dropped():
    text = "User: Le forfait Zelto coûte 12 € par mois depuis le 3 mars."
    model = ScriptedChatModel(
        replies=[
            _reply(("forfait Zelto", "PRODUCT", 0.9), ("Banque Verlaine", "ORGANIZATION", 0.9))
        ]
    )
    x = LLMEntityExtractor(model).extract(text, TYPES)
    asked = model.calls[0][0].content
    assert "- MONEY:" not in asked and "- DATE:" not in asked  # not asked of the model
    assert {(m.name, m.type) for m in x.mentions} == {
        ("forfait Zelto", "PRODUCT"),
        ("12 € par mois", "MONEY"),
        ("le 3 mars", "DATE"),
    }
    assert x.model_calls == 1


def test_no_call_when_every_type_is_left_to_the_patterns():
    model = ScriptedChatModel(replies=[])
    x = LLMEntityExtractor(model).extract("User: 12 € le 3 mars", ["MONEY", "DATE"])
    assert model.calls == [] and x.model_calls == 0
    assert {m.type for m in x.mentions} == {"MONEY", "DATE"}


def test_model_relations_whose_ends_do_not_fit_are_dropped():
    text = "User: Albane Vireau travaille chez Lotrix, je préfère Lotrix."
    reply = _reply(
        ("Albane Vireau", "PERSON", 0.9),
        ("Lotrix", "ORGANIZATION", 0.9),
        relations=(("Albane Vireau", "PREFERS", "Lotrix"), ("Lotrix", "WORKS_AT", "Albane Vireau")),
    )
    x = LLMEntityExtractor(ScriptedChatModel(replies=[reply])).extract(text, TYPES)
    kinds = {(r.source, r.kind, r.target) for r in x.relations}
    assert ("Albane Vireau", "PREFERS", "Lotrix") not in kinds
    assert ("Lotrix", "WORKS_AT", "Albane Vireau") not in kinds
    assert ("Albane Vireau", "WORKS_AT", "Lotrix") in kinds  # from the rules
    assert ("USER", "PREFERS", "Lotrix") in kinds


def test_the_schema_has_the_type_enum_and_a_confidence():
    x = LLMEntityExtractor(ScriptedChatModel(replies=[]), relations=BUILTIN_RELATIONS)
    prompt = x.prompt(x._asked(TYPES))
    item = prompt.response_format["json_schema"]["schema"]["properties"]["entities"]["items"]
    assert item["properties"]["type"]["enum"] == [
        "PERSON",
        "ORGANIZATION",
        "PRODUCT",
        "LOCATION",
        "CONCEPT",
    ]
    assert item["properties"]["confidence"] == {"enum": [0.3, 0.6, 0.9]}
    system = prompt.prefix[0][1]
    assert "USER" in system and "WORKS_AT" in system


def test_by_default_the_model_is_not_asked_for_relations_and_the_rules_state_them():
    reply = _reply(
        ("Albane Vireau", "PERSON", 0.9),
        ("Lotrix", "ORGANIZATION", 0.9),
        relations=(("Albane Vireau", "COMPARES_TO", "Lotrix"),),
    )
    x = LLMEntityExtractor(ScriptedChatModel(replies=[reply]))
    prompt = x.prompt(x._asked(TYPES))
    assert "relations" not in prompt.response_format["json_schema"]["schema"]["properties"]
    assert "WORKS_AT" not in prompt.prefix[0][1]
    assert all("relations" not in text for role, text in prompt.prefix if role == "assistant")
    found = x.extract("User: Albane Vireau travaille chez Lotrix.", TYPES)
    assert [(r.source, r.kind, r.target) for r in found.relations] == [
        ("Albane Vireau", "WORKS_AT", "Lotrix")  # the rules'; the model's unasked one goes
    ]


def test_staff_named_in_a_later_turn_work_at_the_house_an_earlier_turn_named() -> None:
    tracker = EntityTracker(RuleEntityExtractor(use_spacy=False, name_typer=None))
    tracker.observe("Vous réparez les pare-brise ?", "Chez Travelune, nous les remplaçons.")
    tracker.observe("Qui fera la pose ?", "Ysolde Marnac, notre technicienne, est là jeudi.")
    tracker.observe("Et après ?", "Our care lead, Tobiah Venn, will call you.")
    assert ("Travelune", "WORKS_AT", "out") in tracker.related("Ysolde Marnac")
    assert ("Travelune", "WORKS_AT", "out") in tracker.related("Tobiah Venn")
    again = type(tracker.state).from_dict(tracker.state.to_dict())
    assert again.house == tracker.state.house != ""


def test_an_organization_merely_named_is_not_taken_for_the_house() -> None:
    tracker = EntityTracker(RuleEntityExtractor(use_spacy=False, name_typer=None))
    tracker.observe("Je suis chez Corvalis.", "Le contrat Corvalis couvre la vitre.")
    tracker.observe("Qui vient ?", "Ysolde Marnac, notre technicienne, est là jeudi.")
    assert not any(kind == "WORKS_AT" for _, kind, _ in tracker.related("Ysolde Marnac"))
