"""Unit tests of the entity memory's pure core: folding, merging, aliases, TTL, priorities,
relations, resolution, context budget, persistence and export."""

from __future__ import annotations

import copy
import functools
import json

import pytest

from memory_chains.entities import (
    EntityState,
    EntityTracker,
    Extraction,
    Mention,
    RelationMention,
    RuleEntityExtractor,
    fold,
    is_alias,
    resolve_types,
)
from memory_chains.entities._context import rank, render_context
from memory_chains.entities._resolve import resolve
from memory_chains.errors import InvalidInputError, StoreUnavailableError
from memory_chains.stores import InMemoryStore, open_store
from memory_chains.testing import word_counter

from ._threads import run_together, switching_often


def ex(
    *mentions: tuple[str, str] | Mention, relations: tuple[RelationMention, ...] = ()
) -> Extraction:
    ms = tuple(m if isinstance(m, Mention) else Mention(m[0], m[1]) for m in mentions)
    return Extraction(ms, relations)


class ScriptedExtractor:
    """Returns prepared extractions, one per turn, and records what it was given."""

    def __init__(self, *extractions: Extraction) -> None:
        self.extractions = list(extractions)
        self.seen: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = []

    def extract(self, text, types, known=()):
        self.seen.append((text, tuple(types), tuple(known)))
        return self.extractions.pop(0) if self.extractions else Extraction()


# -- folding and aliases -----------------------------------------------------------------


def test_fold_case_accents_determiners():
    assert fold("Le XPS") == fold("xps") == "xps"
    assert fold("L'Équipe") == "equipe"
    assert fold("Société Générale") == "societe generale"


@pytest.mark.parametrize(
    ("a", "b", "etype", "expected"),
    [
        ("XPS 15", "Dell XPS 15", "PRODUCT", True),
        ("le XPS", "Dell XPS 15", "PRODUCT", True),
        ("dell xps 15", "DELL XPS 15", "PRODUCT", True),
        ("Dell", "Dell XPS 15", "PRODUCT", False),  # the brand is not the product
        ("XPS 13", "Dell XPS 15", "PRODUCT", False),  # numbers must agree
        ("Marie", "Marie Dupont", "PERSON", True),
        ("Dupont", "Marie Dupont", "PERSON", True),
        ("Marie", "Marie Curie Institute", "ORGANIZATION", False),
    ],
)
def test_is_alias(a, b, etype, expected):
    assert is_alias(a, b, etype) is expected


# -- merging -----------------------------------------------------------------------------


def test_aliases_merge_into_one_entity_and_canonical_upgrades():
    s = EntityState().merge(ex(("XPS 15", "PRODUCT")), now=1)
    s = s.merge(ex(("Dell XPS 15", "PRODUCT")), now=2)
    s = s.merge(ex(("le XPS", "PRODUCT")), now=3)
    assert len(s.entities) == 1
    e = s.entities[0]
    assert e.name == "Dell XPS 15"  # the more complete form became canonical
    assert set(e.aliases) == {"XPS 15", "le XPS"}
    assert e.mentions == 3 and e.first_seen == 1 and e.last_seen == 3
    assert (e.first_turn, e.last_turn) == (1, 3)


def test_brand_and_product_stay_distinct():
    s = EntityState().merge(ex(("Dell XPS 15", "PRODUCT"), ("Dell", "ORGANIZATION")), now=1)
    assert sorted(e.name for e in s.entities) == ["Dell", "Dell XPS 15"]


def test_attribute_history_is_kept_and_inputs_unchanged():
    s1 = EntityState().merge(ex(Mention("Dell XPS 15", "PRODUCT", {"prix": "1599 €"})), now=1)
    snapshot = copy.deepcopy(s1)
    s2 = s1.merge(ex(Mention("XPS 15", "PRODUCT", {"prix": "1499 €", "garantie": "2 ans"})), now=5)
    assert s1 == snapshot  # immutability: the old state is untouched
    e = s2.entities[0]
    assert dict(e.attributes) == {"prix": "1499 €", "garantie": "2 ans"}
    assert [(h.name, h.value, h.since, h.until) for h in e.history] == [("prix", "1599 €", 1, 5)]


def test_same_value_again_adds_no_history_and_mentions_count_once_per_turn():
    s = EntityState().merge(ex(Mention("A1 Box", "PRODUCT", {"c": "x"})), now=1)
    s = s.merge(ex(Mention("A1 Box", "PRODUCT", {"c": "x"}), Mention("a1 box", "PRODUCT")), now=2)
    e = s.entities[0]
    assert e.history == () and e.mentions == 2


def test_pronouns_and_disallowed_types_are_dropped():
    s = EntityState().merge(
        ex(("it", "PRODUCT"), ("sa", "PRODUCT"), ("Paris", "LOCATION"), ("Bob", "PERSON")),
        now=1,
        types=["PERSON"],
    )
    assert [e.name for e in s.entities] == ["Bob"]


def test_untyped_mention_only_counts_for_known_entities():
    s = EntityState().merge(ex(("Dell XPS 15", "PRODUCT")), now=1)
    s = s.merge(ex(("xps 15", ""), ("Unknown Thing", "")), now=2)
    assert [(e.name, e.mentions) for e in s.entities] == [("Dell XPS 15", 2)]


def test_weak_type_is_upgraded():
    s = EntityState().merge(ex(("Kubernetes", "CONCEPT")), now=1)
    s = s.merge(ex(("Kubernetes", "SKILL")), now=2)
    assert s.entities[0].type == "SKILL"


# -- relations ---------------------------------------------------------------------------


def test_relations_are_recorded_deduplicated_and_queryable():
    rel = (RelationMention("Dell XPS 15", "compares to", "ThinkPad X1"),)
    s = EntityState().merge(
        ex(("Dell XPS 15", "PRODUCT"), ("Lenovo ThinkPad X1", "PRODUCT"), relations=rel), now=1
    )
    s = s.merge(ex(("XPS 15", "PRODUCT"), ("ThinkPad X1", "PRODUCT"), relations=rel), now=2)
    assert len(s.relations) == 1
    r = s.relations[0]
    assert (r.kind, r.mentions) == ("COMPARES_TO", 2)
    t = EntityTracker(ScriptedExtractor())
    t._state = s
    assert t.related("Lenovo ThinkPad X1") == [("Dell XPS 15", "COMPARES_TO", "in")]
    assert t.related("XPS 15") == [("Lenovo ThinkPad X1", "COMPARES_TO", "out")]
    with pytest.raises(InvalidInputError):
        t.related("nobody")


def test_user_defined_relation_and_unresolvable_ends_are_skipped():
    rels = (
        RelationMention("Marie Dupont", "manages", "Paul Martin"),
        RelationMention("Marie Dupont", "OWNS", "ghost"),
        RelationMention("Marie Dupont", "OWNS", "Marie Dupont"),
    )
    s = EntityState().merge(
        ex(("Marie Dupont", "PERSON"), ("Paul Martin", "PERSON"), relations=rels), now=1
    )
    assert [(r.kind) for r in s.relations] == ["MANAGES"]


# -- TTL ---------------------------------------------------------------------------------


def test_ttl_expires_stale_entities_and_their_relations():
    clock = [0.0]
    t = EntityTracker(
        ScriptedExtractor(
            ex(
                ("Dell XPS 15", "PRODUCT"),
                ("Lenovo ThinkPad X1", "PRODUCT"),
                relations=(RelationMention("Dell XPS 15", "COMPARES_TO", "Lenovo ThinkPad X1"),),
            ),
            ex(("Lenovo ThinkPad X1", "PRODUCT")),
        ),
        ttl=60,
        clock=lambda: clock[0],
    )
    t.observe("q1")
    clock[0] = 50
    t.observe("q2")
    clock[0] = 100  # XPS last seen at 0 (> 60 s ago), ThinkPad at 50
    assert [e.name for e in t.entities()] == ["Lenovo ThinkPad X1"]
    assert t.state.relations == ()
    with pytest.raises(InvalidInputError):
        EntityTracker(ScriptedExtractor(), ttl=0)


# -- priority and context ----------------------------------------------------------------


def _three_entities() -> EntityState:
    s = EntityState()
    s = s.merge(ex(("Marie Dupont", "PERSON")), now=1)
    s = s.merge(ex(("Marie Dupont", "PERSON")), now=2)
    s = s.merge(ex(("Dell XPS 15", "PRODUCT")), now=3)
    s = s.merge(ex(("Paris", "LOCATION")), now=4)
    return s


def test_priority_prefers_match_then_recency_and_mentions():
    s = _three_entities()
    assert rank(s)[0].name == "Paris"  # most recent wins without a question
    assert rank(s, "la garantie du XPS 15 ?")[0].name == "Dell XPS 15"
    assert rank(s, "et Marie ?")[0].name == "Marie Dupont"


def test_salient_returns_names_most_recent_first():
    t = EntityTracker(ScriptedExtractor())
    t._state = _three_entities()
    assert t.salient("", k=3) == ["Paris", "Dell XPS 15", "Marie Dupont"]
    assert t.salient("prix du XPS 15", k=1) == ["Dell XPS 15"]


def test_context_block_respects_the_token_budget_and_shrinks_lines():
    s = EntityState().merge(
        ex(
            Mention(
                "Dell XPS 15",
                "PRODUCT",
                {"prix": "1599 €", "garantie": "2 ans", "couleur": "argent", "poids": "1,8 kg"},
            )
        ),
        now=1,
    )
    s = s.merge(ex(Mention("XPS 15", "PRODUCT", {"prix": "1499 €"}), ("Paris", "LOCATION")), now=2)
    full = render_context(s, max_tokens=500, token_counter=word_counter)
    assert "prix: 1499 € (before: 1599 €)" in full and "Paris [LOCATION]" in full
    for budget in (5, 8, 12, 20, 30):
        block = render_context(s, max_tokens=budget, token_counter=word_counter)
        assert word_counter(block) <= budget
    short = render_context(s, question="XPS", max_tokens=12, token_counter=word_counter)
    assert "Dell XPS 15 [PRODUCT]" in short and "prix" not in short  # shrunk, not dropped
    assert render_context(s, max_tokens=2, token_counter=word_counter) == ""


# -- resolution --------------------------------------------------------------------------


@pytest.fixture
def laptops() -> EntityState:
    s = EntityState()
    s = s.merge(ex(("Dell XPS 15", "PRODUCT"), ("1599 €", "MONEY")), now=1)
    s = s.merge(ex(("Dell XPS 15", "PRODUCT"), ("2 ans", "DATE")), now=2)
    s = s.merge(
        ex(
            ("Dell XPS 15", "PRODUCT"),
            ("Lenovo ThinkPad X1", "PRODUCT"),
            ("Lenovo", "ORGANIZATION"),
        ),
        now=3,
    )
    return s


@pytest.mark.parametrize(
    ("phrase", "expected"),
    [
        ("celui de Lenovo", "Lenovo ThinkPad X1"),
        ("the one from Dell", "Dell XPS 15"),
        ("le premier", "Dell XPS 15"),
        ("le second", "Lenovo ThinkPad X1"),
        ("the latter", "Lenovo ThinkPad X1"),
        ("sa", "Dell XPS 15"),
        ("this one", "Dell XPS 15"),
        ("it", "Dell XPS 15"),
        ("ce produit", "Dell XPS 15"),
        ("cette entreprise", "Lenovo"),
        ("le XPS", "Dell XPS 15"),
    ],
)
def test_resolve(laptops, phrase, expected):
    found = resolve(laptops, phrase)
    assert found is not None and found.name == expected


def test_resolve_type_agreement_and_person_pronouns():
    s = EntityState().merge(ex(("Marie Dupont", "PERSON")), now=1)
    s = s.merge(ex(("Dell XPS 15", "PRODUCT"), ("commande 4512", "ORDER_ID")), now=2)
    assert resolve(s, "she").name == "Marie Dupont"  # type: ignore[union-attr]
    assert resolve(s, "it").name == "Dell XPS 15"  # type: ignore[union-attr]
    assert resolve(s, "cette commande").name == "commande 4512"  # type: ignore[union-attr]
    assert resolve(s, "le second", question="le prix du second produit ?") is None
    assert resolve(EntityState(), "sa") is None


def test_resolve_french_gender_from_aliases():
    s = EntityState().merge(ex(("Clio", "PRODUCT")), now=1)
    s = s.merge(ex(("la Clio", "PRODUCT")), now=2)
    s = s.merge(ex(("Model 3", "PRODUCT")), now=3)
    s = s.merge(ex(("le Model 3", "PRODUCT")), now=4)
    assert resolve(s, "celle-ci").name == "Clio"  # type: ignore[union-attr]
    assert resolve(s, "celui-ci").name == "Model 3"  # type: ignore[union-attr]


# -- tracker, persistence, export --------------------------------------------------------


def test_tracker_passes_types_and_known_names_to_the_extractor():
    x = ScriptedExtractor(ex(("Dell XPS 15", "PRODUCT")), ex())
    t = EntityTracker(x, types=["product", "person"])
    t.observe("je cherche le Dell XPS 15", "ok")
    t.observe("et sa garantie ?")
    assert x.seen[0][0] == "User: je cherche le Dell XPS 15\nAssistant: ok"
    assert x.seen[1][1] == ("PRODUCT", "PERSON") and x.seen[1][2] == ("Dell XPS 15",)


def test_failed_extraction_keeps_the_turn_and_reports_it():
    t = EntityTracker(ScriptedExtractor(Extraction(model_calls=2, error="bad json", raw="{")))
    report = t.observe("bonjour")
    assert report.error == "bad json" and report.raw == "{" and report.turn == 1
    assert t.failed_turns == [report] and t.model_calls == 2 and t.state.turn == 1


def test_persistence_per_user_through_the_store(tmp_path):
    store = open_store(f"sqlite:///{tmp_path / 'm.sqlite3'}")
    a = EntityTracker(
        ScriptedExtractor(ex(Mention("Dell XPS 15", "PRODUCT", {"prix": "1599 €"}))),
        user_id="alice",
        store=store,
    )
    a.observe("q")
    EntityTracker(ScriptedExtractor(ex(("Paris", "LOCATION"))), user_id="bob", store=store).observe(
        "q"
    )
    store.close()
    store2 = open_store(f"sqlite:///{tmp_path / 'm.sqlite3'}")
    again = EntityTracker(ScriptedExtractor(), user_id="alice", store=store2)
    assert [e.name for e in again.entities()] == ["Dell XPS 15"]
    assert again.get("xps 15").attributes["prix"] == "1599 €"  # type: ignore[union-attr]
    again.clear()
    assert EntityTracker(ScriptedExtractor(), user_id="alice", store=store2).entities() == []
    assert [
        e.name for e in EntityTracker(ScriptedExtractor(), user_id="bob", store=store2).entities()
    ] == ["Paris"]


def test_a_failed_store_write_leaves_the_tracker_as_it_was():
    class FailingStore(InMemoryStore):
        fail = False

        def _put(self, *args: object) -> None:
            if self.fail:
                raise StoreUnavailableError("store down")
            super()._put(*args)  # type: ignore[arg-type]

    store = FailingStore()
    t = EntityTracker(
        ScriptedExtractor(ex(("Dell XPS 15", "PRODUCT")), ex(("Lenovo", "ORGANIZATION"))),
        store=store,
    )
    t.observe("je cherche le Dell XPS 15")
    store.fail = True
    with pytest.raises(StoreUnavailableError):
        t.observe("et chez Lenovo ?")
    assert [e.name for e in t.entities()] == ["Dell XPS 15"] and t.state.turn == 1


def test_bad_user_id_is_refused_before_any_io():
    with pytest.raises(InvalidInputError):
        EntityTracker(ScriptedExtractor(), user_id="../etc", store=InMemoryStore())


def test_export_import_roundtrip_and_bad_documents():
    t = EntityTracker(
        ScriptedExtractor(ex(Mention("Marie Dupont", "PERSON", {"poste": "CTO"}))), user_id="u1"
    )
    t.observe("q")
    exported = json.loads(t.export_json())
    assert exported["user_id"] == "u1" and exported["entities"][0]["attributes"] == {"poste": "CTO"}
    other = EntityTracker(ScriptedExtractor())
    other.import_json(t.export_json())
    assert other.state == t.state
    with pytest.raises(InvalidInputError):
        other.import_json("not json")
    with pytest.raises(InvalidInputError):
        other.import_json(json.dumps({"version": 99}))
    with pytest.raises(InvalidInputError):
        other.import_json(json.dumps({"version": 1, "entities": [{"name": "x"}]}))


def test_forget():
    t = EntityTracker(ScriptedExtractor(ex(("Paris", "LOCATION"), ("Lyon", "LOCATION"))))
    t.observe("q")
    t.forget("paris")
    assert [e.name for e in t.entities()] == ["Lyon"]
    with pytest.raises(InvalidInputError):
        t.forget("Tokyo")


def test_type_presets_and_validation():
    assert "TICKET_ID" in resolve_types("support")
    assert "SKILL" in resolve_types("HR")
    assert resolve_types(["order_id", "ORDER_ID"]) == ("ORDER_ID",)
    for bad in ("nope", [], ["a b"]):
        with pytest.raises(InvalidInputError):
            resolve_types(bad)


async def test_async_observe_matches_sync():
    x1 = ScriptedExtractor(ex(("Dell XPS 15", "PRODUCT")))
    x2 = ScriptedExtractor(ex(("Dell XPS 15", "PRODUCT")))
    t1, t2 = EntityTracker(x1, clock=lambda: 1.0), EntityTracker(x2, clock=lambda: 1.0)
    t1.observe("a", "b")
    await t2.aobserve("a", "b")
    assert t1.state == t2.state


def test_rule_extractor_seed_dialogue_end_to_end():
    t = EntityTracker(RuleEntityExtractor(use_spacy=False), types="ecommerce")
    t.observe("Je cherche le Dell XPS 15", "Le Dell XPS 15 est un excellent laptop à 1599 €.")
    t.observe("Quelle est sa garantie ?", "La garantie du XPS 15 est de 2 ans.")
    t.observe("Et comparé à celui de Lenovo ?", "Le Lenovo ThinkPad X1 coûte 1799 €.")
    xps = t.get("XPS 15")
    assert xps is not None and xps.mentions == 2 and xps.attributes["warranty"] == "2 ans"
    assert t.resolve("celui de Lenovo").name == "Lenovo ThinkPad X1"  # type: ignore[union-attr]
    assert t.model_calls == 0


def test_public_surface_is_sorted_resolvable_and_core_avoids_langchain_classic():
    import subprocess
    import sys

    import memory_chains.entities as entities

    names = list(entities.__all__)
    # ruff's isort-style order: CONSTANTS, then Classes, then functions.
    assert names == sorted(names, key=lambda n: (not n.isupper(), not n[:1].isupper(), n))
    assert all(getattr(entities, n) is not None for n in names)
    code = (
        "import sys, memory_chains.entities as e; "
        "e.EntityTracker(e.RuleEntityExtractor(use_spacy=False)).observe('Dell XPS 15'); "
        "print('langchain_classic' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_question_nouns_guide_ordinals_but_not_pronouns():
    s = EntityState().merge(ex(("Marie Dupont", "PERSON"), ("Paul Martin", "PERSON")), now=1)
    s = s.merge(ex(("Dell XPS 15", "PRODUCT"), ("Fnac", "ORGANIZATION")), now=2)
    assert resolve(s, "it", question="is it in stock at this store?").name == "Dell XPS 15"  # type: ignore[union-attr]
    assert resolve(s, "le second", question="et le second candidat ?").name == "Paul Martin"  # type: ignore[union-attr]


def test_ordinals_fall_back_to_order_of_introduction():
    s = EntityState().merge(ex(("Dell XPS 15", "PRODUCT"), ("Dell", "ORGANIZATION")), now=1)
    s = s.merge(ex(("Lenovo ThinkPad X1", "PRODUCT")), now=2)
    assert resolve(s, "le premier").name == "Dell XPS 15"  # type: ignore[union-attr]
    assert resolve(s, "le second").name == "Lenovo ThinkPad X1"  # type: ignore[union-attr]
    assert resolve(s, "le troisième") is None


class _OneProductPerTurn:
    """A fake extractor: the user's message is the name of a new product."""

    def extract(self, text: str, types: object, known: object = ()) -> Extraction:
        name = text.split("User: ", 1)[1].split("\n")[0]
        return Extraction((Mention(name, "PRODUCT"),), model_calls=1)


def test_a_reader_loading_the_state_never_writes_back_over_a_new_turn() -> None:
    # Before 2026-12-02 ``state`` loaded and expired the state outside the lock: a reader
    # could assign its older copy after a concurrent observe() had merged a turn.
    store = InMemoryStore()
    first = EntityTracker(_OneProductPerTurn(), types=["PRODUCT"], user_id="bob", store=store)
    first.observe("P0", "ok")
    lost = 0
    with switching_often():
        for i in range(1, 201):
            tracker = EntityTracker(
                _OneProductPerTurn(), types=["PRODUCT"], user_id="bob", store=store
            )
            run_together(tracker.entities, functools.partial(tracker.observe, f"P{i}", "ok"))
            lost += tracker.state.turn != i + 1
    assert lost == 0
    assert EntityTracker(_OneProductPerTurn(), user_id="bob", store=store).state.turn == 201
