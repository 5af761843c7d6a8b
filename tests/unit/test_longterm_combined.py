"""TurnExtractor + MemoryUpdater: one model call per turn feeds entities, profile and facts."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import AIMessage

from memory_chains.entities import EntityTracker, RuleEntityExtractor
from memory_chains.errors import (
    InvalidInputError,
    MalformedOutputError,
    ModelCallError,
    StoreError,
)
from memory_chains.longterm import (
    LongTermMemory,
    MemoryUpdater,
    TurnExtraction,
    TurnExtractor,
    UpdateReport,
)
from memory_chains.stores import InMemoryStore
from memory_chains.testing import HashEmbeddings, ScriptedChatModel

XPS = {"name": "Dell XPS 15", "type": "PRODUCT", "attributes": {"prix": "1599 €"}}
NANTES = {"name": "Nantes", "type": "LOCATION"}
NAME = {"text": "L'utilisateur s'appelle Julien.", "key": "name", "supersedes": False}
CITY = {"text": "L'utilisateur habite à Nantes.", "key": "city", "supersedes": False}
LANG = {"key": "language", "value": "fr", "source": "inferred", "confidence": 0.9}
HUMAN = "Je m'appelle Julien, j'habite à Nantes. Le Dell XPS 15 convient-il au montage ?"
AI = "Oui, le Dell XPS 15 convient ; il est à 1599 €."


def answer(
    entities: Sequence[dict[str, Any]] = (),
    profile: Sequence[dict[str, Any]] = (),
    facts: Sequence[dict[str, Any]] = (),
    relations: Sequence[dict[str, Any]] = (),
) -> str:
    return json.dumps(
        {
            "entities": list(entities),
            "relations": list(relations),
            "profile": list(profile),
            "facts": list(facts),
        },
        ensure_ascii=False,
    )


GOOD = answer([XPS, NANTES], [LANG], [NAME, CITY])


def snapshot(store: InMemoryStore) -> list[tuple[object, ...]]:
    return sorted((d.namespace, d.key, json.dumps(d.value)) for d in store.list(()))


def build(
    model: Any, store: InMemoryStore | None = None, **tracker: Any
) -> tuple[MemoryUpdater, EntityTracker, LongTermMemory, InMemoryStore]:
    store = store if store is not None else InMemoryStore()
    entities = EntityTracker(
        RuleEntityExtractor(use_spacy=False), user_id="julien", store=tracker.pop("estore", store)
    )
    long_term = LongTermMemory(store, "julien", tracker.pop("embeddings", HashEmbeddings()))
    extractor = TurnExtractor(model, patterns=None)
    return (
        MemoryUpdater(extractor, entities=entities, long_term=long_term),
        entities,
        long_term,
        store,
    )


# -- one call per turn ---------------------------------------------------------------------
def test_one_call_feeds_entities_profile_and_facts() -> None:
    model = ScriptedChatModel(replies=[GOOD])
    updater, entities, long_term, _ = build(model)
    report = updater.observe(HUMAN, AI, session_id="s1", seq=1)
    assert len(model.calls) == 1 and report.model_calls == 1
    assert isinstance(report, UpdateReport) and report.entities and report.long_term
    assert report.entities.mentioned == ("Dell XPS 15", "Nantes")
    xps = entities.get("Dell XPS 15")
    assert xps is not None and xps.attributes["prix"] == "1599 €"
    assert sorted(f.key or "" for f in long_term.facts()) == ["city", "name"]
    assert long_term.profile().value("language") == "fr"
    assert all(s == ("s1", 1) for f in long_term.facts() for s in f.sources)
    assert updater.last_report == report and report.rejected == ()


def test_each_turn_costs_exactly_one_call() -> None:
    replies = [GOOD, answer([XPS], [], []), answer([], [], [])]
    model = ScriptedChatModel(replies=replies)
    updater, entities, _, _ = build(model)
    turns = [(HUMAN, AI), ("Et sa garantie ?", "2 ans."), ("Merci !", "Avec plaisir.")]
    reports = [updater.observe(h, a, session_id="s1", seq=i) for i, (h, a) in enumerate(turns)]
    assert len(model.calls) == 3
    assert [r.model_calls for r in reports] == [1, 1, 1]
    assert entities.state.turn == 3 and entities.failed_turns == []


async def test_aobserve_costs_one_call() -> None:
    model = ScriptedChatModel(replies=[GOOD])
    updater, entities, long_term, _ = build(model)
    report = await updater.aobserve(HUMAN, AI, session_id="s1")
    assert len(model.calls) == 1 and report.model_calls == 1
    assert entities.get("Dell XPS 15") is not None and len(long_term.facts()) == 2


def test_background_costs_one_call_per_turn_and_flush_waits() -> None:
    model = ScriptedChatModel(replies=[GOOD, answer([XPS])])
    updater, entities, long_term, _ = build(model)
    updater.observe_in_background(HUMAN, AI, session_id="s1", seq=1)
    updater.observe_in_background("Et sa garantie ?", session_id="s1", seq=2)
    assert updater.flush(timeout=30) == 2
    updater.close()
    assert len(model.calls) == 2
    xps = entities.get("Dell XPS 15")
    assert xps is not None and xps.mentions == 2 and len(long_term.facts()) == 2


def test_second_turn_sends_known_names_and_keys_after_a_fixed_prefix() -> None:
    model = ScriptedChatModel(replies=[GOOD, answer()])
    updater, *_ = build(model)
    updater.observe(HUMAN, AI, session_id="s1")
    updater.observe("Et la garantie ?", "2 ans.", session_id="s1")
    first, second = model.calls
    assert [m.content for m in first[:-1]] == [m.content for m in second[:-1]]  # KV cache
    last = str(second[-1].content)
    assert "Known entities: " in last and "Dell XPS 15" in last
    assert "Known keys: city, name" in last and last.endswith("Assistant: 2 ans.")


# -- failures leave both memories unchanged -------------------------------------------------
def test_failed_call_changes_neither_memory() -> None:
    model = ScriptedChatModel(replies=[RuntimeError("llama.cpp crashed")])
    updater, entities, long_term, store = build(model)
    with pytest.raises(ModelCallError, match="crashed"):
        updater.observe(HUMAN, AI, session_id="s1")
    assert snapshot(store) == [] and entities.state.turn == 0 and long_term.facts() == []
    assert updater.last_report is None


def test_malformed_twice_raises_with_raw_and_changes_nothing() -> None:
    model = ScriptedChatModel(replies=["pas du JSON", "toujours pas"])
    updater, entities, _, store = build(model)
    with pytest.raises(MalformedOutputError) as caught:
        updater.observe(HUMAN, AI, session_id="s1")
    assert caught.value.raw == "toujours pas" and len(model.calls) == 2
    assert snapshot(store) == [] and entities.entities() == []


def test_malformed_then_good_is_retried_once() -> None:
    model = ScriptedChatModel(replies=["{oops", GOOD])
    updater, entities, _, _ = build(model)
    report = updater.observe(HUMAN, AI, session_id="s1")
    assert len(model.calls) == 2 and report.model_calls == 2
    assert entities.get("Dell XPS 15") is not None


def test_truncated_fenced_answer_is_repaired_without_a_retry() -> None:
    cut = "```json\n" + GOOD[: GOOD.index("L'utilisateur habite") - 10]
    model = ScriptedChatModel(replies=[cut])
    updater, _, long_term, _ = build(model)
    report = updater.observe(HUMAN, AI, session_id="s1")
    assert len(model.calls) == 1 and report.model_calls == 1
    assert [f.key for f in long_term.facts()] == ["name"]


def test_answer_without_profile_and_facts_is_not_half_applied() -> None:
    only_entities = json.dumps({"entities": [XPS], "relations": []})
    model = ScriptedChatModel(replies=[only_entities, only_entities])
    updater, entities, _, store = build(model)
    with pytest.raises(MalformedOutputError):
        updater.observe(HUMAN, AI, session_id="s1")
    assert snapshot(store) == [] and entities.entities() == []


def test_unusable_items_are_reported_not_dropped_silently() -> None:
    bad_entity = {"name": "Truc", "type": "SPACESHIP"}
    bad_fact = {"text": "  ", "key": "k", "supersedes": False}
    model = ScriptedChatModel(replies=[answer([XPS, bad_entity], [], [NAME, bad_fact])])
    updater, _, long_term, _ = build(model)
    report = updater.observe(HUMAN, AI, session_id="s1")
    assert len(report.rejected) == 2, report.rejected
    assert "entity item" in report.rejected[0] and "fact item" in report.rejected[1]
    assert report.long_term is not None and len(report.long_term.rejected) == 1
    assert [f.key for f in long_term.facts()] == ["name"]


def test_long_term_failure_writes_nothing_anywhere() -> None:
    class BrokenEmbeddings(HashEmbeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            raise StoreError("embedding server down")

    model = ScriptedChatModel(replies=[GOOD])
    updater, entities, _, store = build(model, embeddings=BrokenEmbeddings())
    with pytest.raises(StoreError):
        updater.observe(HUMAN, AI, session_id="s1")
    assert snapshot(store) == [] and entities.entities() == [] and entities.state.turn == 0


def test_entity_store_failure_says_precisely_what_was_applied() -> None:
    class BrokenStore(InMemoryStore):
        def put(self, *args: Any, **kwargs: Any) -> Any:
            raise StoreError("disk full")

    model = ScriptedChatModel(replies=[GOOD])
    updater, entities, long_term, _ = build(model, estore=BrokenStore())
    with pytest.raises(StoreError) as caught:
        updater.observe(HUMAN, AI, session_id="s1", seq=3)
    notes = " ".join(getattr(caught.value, "__notes__", []))
    assert "long-term memory WAS updated" in notes and "entity memory was not" in notes
    assert len(long_term.facts()) == 2 and entities.entities() == []


def test_background_failure_is_kept_and_raised_by_flush() -> None:
    model = ScriptedChatModel(replies=[RuntimeError("boom"), GOOD])
    updater, entities, _, _ = build(model)
    updater.observe_in_background(HUMAN, AI, session_id="s1", seq=1)
    updater.observe_in_background(HUMAN, AI, session_id="s1", seq=2)
    with pytest.raises(ModelCallError):
        updater.flush(timeout=30)
    assert updater.flush(timeout=30) == 2  # reported once
    assert len(updater.errors) == 1 and updater.last_error is updater.errors[0]
    assert entities.state.turn == 1  # the second turn was applied
    updater.close()


# -- privacy and inputs ----------------------------------------------------------------------
def test_personal_data_is_masked_before_the_model_sees_it() -> None:
    model = ScriptedChatModel(replies=[answer()])
    updater, *_ = build(model)
    updater.observe(
        "Mon IBAN est FR7630006000011234567890189, écrivez à julien@example.fr",
        "Noté.",
        session_id="s1",
    )
    sent = str(model.calls[0][-1].content)
    assert "FR7630006000011234567890189" not in sent and "julien@example.fr" not in sent
    assert "[IBAN]" in sent and "[EMAIL]" in sent


def test_bad_input_makes_no_call() -> None:
    model = ScriptedChatModel(replies=[GOOD])
    updater, *_ = build(model)
    with pytest.raises(InvalidInputError):
        updater.observe("   ", session_id="s1")
    with pytest.raises(InvalidInputError):
        updater.observe(HUMAN, session_id="bad id with spaces/")
    with pytest.raises(InvalidInputError):
        updater.observe_in_background(HUMAN, 42, session_id="s1")  # type: ignore[arg-type]
    assert model.calls == []


@pytest.mark.parametrize(
    ("human", "kwargs"),
    [
        ("Bonjour\x00", {}),
        ("Bonjour \ud800", {}),
        (HUMAN, {"seq": -1}),
        (HUMAN, {"seq": True}),
        (HUMAN, {"when": "hier"}),
    ],
)
def test_entities_only_updater_checks_the_turn_like_the_long_term_memory(
    human: str, kwargs: dict[str, Any]
) -> None:
    model = ScriptedChatModel(replies=[GOOD])
    tracker = EntityTracker(RuleEntityExtractor(use_spacy=False))
    updater = MemoryUpdater(TurnExtractor(model), entities=tracker)
    long_term = LongTermMemory(InMemoryStore(), "lt", HashEmbeddings())
    with pytest.raises(InvalidInputError) as from_long_term:
        long_term.observe(human, session_id="s1", **kwargs)
    with pytest.raises(InvalidInputError) as from_updater:
        updater.observe(human, session_id="s1", **kwargs)
    assert str(from_updater.value) == str(from_long_term.value)
    assert model.calls == [] and tracker.get("Dell XPS 15") is None


def test_updater_needs_a_memory_and_a_turn_extractor() -> None:
    with pytest.raises(InvalidInputError, match="memory"):
        MemoryUpdater(TurnExtractor(ScriptedChatModel()))
    with pytest.raises(InvalidInputError, match="TurnExtractor"):
        MemoryUpdater(object(), long_term=LongTermMemory(InMemoryStore(), "a", HashEmbeddings()))


def test_long_term_only_and_entities_only() -> None:
    model = ScriptedChatModel(replies=[GOOD, GOOD])
    store = InMemoryStore()
    long_term = LongTermMemory(store, "lt", HashEmbeddings())
    report = MemoryUpdater(TurnExtractor(model), long_term=long_term).observe(HUMAN, session_id="s")
    assert report.entities is None and report.long_term is not None and len(long_term.facts()) == 2
    tracker = EntityTracker(RuleEntityExtractor(use_spacy=False))
    report = MemoryUpdater(TurnExtractor(model), entities=tracker).observe(HUMAN, session_id="s")
    assert report.long_term is None and tracker.get("Dell XPS 15") is not None


# -- the extractor itself -----------------------------------------------------------------
class RecordingModel:
    """A minimal chat model recording the keyword arguments of each call."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.kwargs: list[dict[str, Any]] = []

    def invoke(self, messages: list[Any], **kwargs: Any) -> AIMessage:
        self.kwargs.append(kwargs)
        return AIMessage(content=self.reply)


def test_one_schema_constrains_all_four_keys() -> None:
    model = RecordingModel(GOOD)
    result = TurnExtractor(model, patterns=None).extract(HUMAN, AI, types="ecommerce")
    assert isinstance(result, TurnExtraction) and not result.empty
    (kwargs,) = model.kwargs
    schema = kwargs["response_format"]["json_schema"]["schema"]
    assert schema["required"] == ["entities", "relations", "profile", "facts"]
    assert "ORDER_ID" in schema["properties"]["entities"]["items"]["properties"]["type"]["enum"]
    assert kwargs["max_tokens"] == 512
    TurnExtractor(model, structured=False).extract(HUMAN)
    assert "response_format" not in model.kwargs[-1]


def test_examples_keep_only_configured_types() -> None:
    messages = TurnExtractor(ScriptedChatModel()).messages("Bonjour", types=["PERSON", "LOCATION"])
    shown = [json.loads(m.content) for m in messages[1:-1] if m.type == "ai"]
    kinds = {e["type"] for answer in shown for e in answer["entities"]}
    assert kinds == {"PERSON", "LOCATION"}
    assert all(a["relations"] == [] for a in shown)  # no relation between kept entities
    assert all(set(a) == {"entities", "relations", "profile", "facts"} for a in shown)


def test_pattern_finds_are_merged_at_no_extra_call() -> None:
    model = ScriptedChatModel(replies=[answer([XPS])])
    result = TurnExtractor(model).extract("Le Dell XPS 15 à 1599 € ?")
    names = [m.name for m in result.entities.mentions]
    assert names[0] == "Dell XPS 15" and "1599 €" in names and len(model.calls) == 1


def test_extractor_arguments_are_checked() -> None:
    with pytest.raises(InvalidInputError):
        TurnExtractor(ScriptedChatModel(), retries=-1)
    with pytest.raises(InvalidInputError):
        TurnExtractor(ScriptedChatModel()).extract("Bonjour", types=[])


def test_combined_prompt_is_shorter_than_the_two_separate_prompts() -> None:
    from memory_chains.entities import LLMEntityExtractor
    from memory_chains.longterm import LongTermExtractor
    from memory_chains.providers import approximate_token_count

    def size(messages: list[Any]) -> int:
        return sum(approximate_token_count(str(m.content)) for m in messages)

    model = ScriptedChatModel(replies=[answer(), answer(), answer()])
    types = ("PERSON", "PRODUCT", "LOCATION", "MONEY")
    LLMEntityExtractor(model, patterns=None).extract(f"User: {HUMAN}\nAssistant: {AI}", types)
    LongTermExtractor(model).extract(HUMAN, AI)
    TurnExtractor(model, patterns=None).extract(HUMAN, AI, types=types)
    entity_call, long_term_call, combined_call = model.calls
    assert size(combined_call) < 0.85 * (size(entity_call) + size(long_term_call))


# -- both extractors share one retry loop, driven sync or async ------------------------------
@pytest.mark.parametrize("kind", ["turn", "long-term"])
async def test_sync_and_async_extraction_retry_and_fail_alike(kind: str) -> None:
    from memory_chains.longterm import LongTermExtractor

    good = GOOD if kind == "turn" else json.dumps({"profile": [LANG], "facts": [CITY]})
    scripts: list[list[Any]] = [["{oops", good], [RuntimeError("server down")], ["no", "nope"]]

    async def outcomes(flavour: str) -> list[tuple[object, ...]]:
        seen: list[tuple[object, ...]] = []
        for replies in scripts:
            model = ScriptedChatModel(replies=list(replies))
            x = TurnExtractor(model) if kind == "turn" else LongTermExtractor(model)
            try:
                result = x.extract(HUMAN, AI) if flavour == "sync" else await x.aextract(HUMAN, AI)
            except (ModelCallError, MalformedOutputError) as exc:
                raw = exc.raw if isinstance(exc, MalformedOutputError) else None
                cause = type(exc.__cause__).__name__
                seen.append((type(exc).__name__, str(exc), raw, cause, x.calls, len(model.calls)))
            else:
                seen.append((result, x.calls, len(model.calls)))
        return seen

    sync = await outcomes("sync")
    assert await outcomes("async") == sync
    (result, calls, sent), failed, malformed = sync
    assert result.model_calls == calls == sent == 2  # type: ignore[attr-defined]
    assert failed[:1] == ("ModelCallError",) and failed[3:] == ("RuntimeError", 0, 1)
    assert f"the {kind} extraction call failed" in str(failed[1])
    assert malformed[0] == "MalformedOutputError" and malformed[2:] == ("nope", "NoneType", 2, 2)
