"""Unit tests of the extractors (LLM with a fake model, rules) and the LangChain adapter."""

from __future__ import annotations

import json
import logging

import pytest
from langchain_core.messages import SystemMessage

from memory_chains.entities import (
    BUILTIN_RELATIONS,
    EntityMemory,
    EntityTracker,
    LLMEntityExtractor,
    RuleEntityExtractor,
    parse_json_object,
)
from memory_chains.entities._types import Entity
from memory_chains.errors import InvalidInputError, MalformedOutputError
from memory_chains.evaluation.entities import GoldEntity, exchanges, load_dataset, score_entities
from memory_chains.testing import ScriptedChatModel

TYPES = ["PERSON", "PRODUCT", "ORGANIZATION", "MONEY"]
# The LLM extractor keeps only names the turn writes (or the memory knows).
TURN = "User: Le Dell XPS 15 ou le Lenovo ThinkPad X1 ?"
GOOD = json.dumps(
    {
        "entities": [
            {"name": "Dell XPS 15", "type": "PRODUCT", "attributes": {"prix": "1599 €"}},
            {"name": "Lenovo ThinkPad X1", "type": "PRODUCT", "attributes": {}},
        ],
        "relations": [
            {"source": "Dell XPS 15", "relation": "COMPARES_TO", "target": "Lenovo ThinkPad X1"}
        ],
    }
)


# -- JSON repair ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        "```json\n" + GOOD + "\n```",
        "Voici le résultat : " + GOOD + " J'espère que cela aide.",
        GOOD[:-30],  # truncated in the middle of the relations
        GOOD[: GOOD.index('"Lenovo') + 10],  # truncated inside a string
    ],
)
def test_repair_recovers_the_first_entity(raw):
    data = parse_json_object(raw)
    assert data["entities"][0]["name"] == "Dell XPS 15"


@pytest.mark.parametrize("raw", ["", "no json at all", "[1, 2]", "{{{{"])
def test_repair_gives_up_with_the_raw_text(raw):
    with pytest.raises(MalformedOutputError) as info:
        parse_json_object(raw)
    assert info.value.raw == raw


# -- LLM extractor -----------------------------------------------------------------------


def test_one_call_per_turn_for_all_entities_and_relations():
    model = ScriptedChatModel(replies=[GOOD])
    known = ["Dell XPS 15", "Lenovo ThinkPad X1"]
    x = LLMEntityExtractor(model, relations=BUILTIN_RELATIONS).extract(
        "User: XPS ou ThinkPad ?", TYPES, known
    )
    assert len(model.calls) == 1 and x.model_calls == 1 and x.ok
    assert [m.name for m in x.mentions] == ["Dell XPS 15", "Lenovo ThinkPad X1"]
    assert x.mentions[0].attributes == {"prix": "1599 €"}
    assert [(r.source, r.kind, r.target) for r in x.relations] == [
        ("Dell XPS 15", "COMPARES_TO", "Lenovo ThinkPad X1")
    ]
    last = model.calls[0][-1].content
    assert "User: XPS ou ThinkPad ?" in last and "Dell XPS 15" in last


def test_prompt_prefix_is_identical_between_calls_and_lists_the_types():
    model = ScriptedChatModel(replies=[GOOD, GOOD])
    x = LLMEntityExtractor(model)
    x.extract("User: one", TYPES)
    x.extract("User: two, much longer text", TYPES, ["Dell XPS 15"])
    first, second = model.calls
    assert [m.content for m in first[:-1]] == [m.content for m in second[:-1]]
    assert isinstance(first[0], SystemMessage) and "- PRODUCT:" in first[0].content
    assert "TICKET_ID" not in first[0].content  # few-shot filtered to configured types
    for m in first[1:-1]:
        assert "TICKET_ID" not in m.content


def test_truncated_answer_is_repaired_without_a_retry():
    model = ScriptedChatModel(replies=[GOOD[:120]])
    x = LLMEntityExtractor(model).extract(TURN, TYPES)
    assert x.ok and len(model.calls) == 1 and x.mentions[0].name == "Dell XPS 15"


def test_unusable_answer_is_retried_once_then_succeeds():
    model = ScriptedChatModel(replies=["Désolé, je ne peux pas.", GOOD])
    x = LLMEntityExtractor(model).extract(TURN, TYPES)
    assert x.ok and x.model_calls == 2 and len(model.calls) == 2


def test_persistent_failure_is_reported_never_raised(caplog):
    model = ScriptedChatModel(replies=["nope", '{"entities": "not a list"}'])
    extractor = LLMEntityExtractor(model)
    tracker = EntityTracker(extractor, types=TYPES)
    with caplog.at_level(logging.WARNING, logger="memory_chains.entities"):
        report = tracker.observe("Je cherche le Dell XPS 15", "ok")
    assert report.error and report.model_calls == 2 and report.raw == '{"entities": "not a list"}'
    assert extractor.failures == 1 and tracker.failed_turns == [report]
    assert tracker.state.turn == 1  # the turn is counted, nothing crashed
    assert "entity extraction failed" in caplog.text


def test_model_exception_is_reported_and_next_turn_works():
    model = ScriptedChatModel(replies=[RuntimeError("boom"), RuntimeError("boom"), GOOD])
    tracker = EntityTracker(LLMEntityExtractor(model), types=TYPES)
    assert "boom" in tracker.observe("a").error
    assert tracker.observe(TURN).error == ""
    assert [e.name for e in tracker.entities()] == ["Dell XPS 15", "Lenovo ThinkPad X1"]


def test_invalid_items_are_dropped_not_fatal():
    raw = json.dumps(
        {
            "entities": [
                {"name": "", "type": "PRODUCT"},
                {"name": "X", "type": "ALIEN"},
                "junk",
                {
                    "name": "Marie",
                    "type": "person",
                    "attributes": {"skills": ["a", "b"], "n": None},
                },
            ],
            "relations": [{"source": 1, "relation": "OWNS", "target": "x"}],
        }
    )
    turn = "User: je suis Marie."
    x = LLMEntityExtractor(ScriptedChatModel(replies=[raw])).extract(turn, TYPES)
    assert [(m.name, m.type, dict(m.attributes)) for m in x.mentions] == [
        ("Marie", "PERSON", {"skills": "a, b"})
    ]
    assert x.relations == ()


async def test_async_extract_uses_one_call():
    model = ScriptedChatModel(replies=["oops", GOOD])
    x = await LLMEntityExtractor(model).aextract("User: x", TYPES)
    assert x.ok and x.model_calls == 2


def test_response_format_is_a_json_schema_with_the_type_enum():
    model = ScriptedChatModel(replies=[GOOD])
    extractor = LLMEntityExtractor(model, relations=["COMPARES_TO", "works_for"])
    prompt = extractor.prompt(TYPES)
    schema = extractor._options(prompt)["response_format"]["json_schema"]["schema"]
    item = schema["properties"]["entities"]["items"]["properties"]
    assert item["type"]["enum"] == TYPES
    rel = schema["properties"]["relations"]["items"]["properties"]["relation"]["enum"]
    assert rel == ["COMPARES_TO", "WORKS_FOR"]
    assert "response_format" not in LLMEntityExtractor(model, structured=False)._options(prompt)
    with pytest.raises(InvalidInputError):
        extractor.extract("x", [])


# -- rules extractor ---------------------------------------------------------------------


def test_rules_find_ids_amounts_dates_emails_products_people():
    text = (
        "User: Bonjour, je suis Marie Dupont, ma commande 784512 du 3 mars n'est pas arrivée.\n"
        "Assistant: Votre ticket SUP-20931 est ouvert ; le Dell XPS 15 à 1599 € sera "
        "remboursé. Écrivez à aide@shop.fr."
    )
    types = ["PERSON", "ORDER_ID", "DATE", "TICKET_ID", "PRODUCT", "MONEY", "EMAIL"]
    x = RuleEntityExtractor(use_spacy=False).extract(text, types)
    found = {(m.name, m.type) for m in x.mentions}
    assert found >= {
        ("Marie Dupont", "PERSON"),
        ("784512", "ORDER_ID"),
        ("3 mars", "DATE"),
        ("SUP-20931", "TICKET_ID"),
        ("Dell XPS 15", "PRODUCT"),
        ("1599 €", "MONEY"),
        ("aide@shop.fr", "EMAIL"),
    }
    assert ("Bonjour", "PERSON") not in found and x.model_calls == 0


def test_rules_only_emit_configured_types_with_fallbacks():
    x = RuleEntityExtractor(use_spacy=False).extract(
        "User: un vol pour Tokyo à 890 euros", ["CITY", "PRICE"]
    )
    assert {(m.name, m.type) for m in x.mentions} == {("Tokyo", "CITY"), ("890 euros", "PRICE")}


def test_rules_relation_for_a_comparison():
    x = RuleEntityExtractor(use_spacy=False).extract(
        "User: je compare le Dell XPS 15 et le Lenovo ThinkPad X1", ["PRODUCT"]
    )
    assert [(r.source, r.kind, r.target) for r in x.relations] == [
        ("Dell XPS 15", "COMPARES_TO", "Lenovo ThinkPad X1")
    ]


# -- LangChain adapter -------------------------------------------------------------------


def test_entity_memory_save_load_and_key_errors():
    memory = EntityMemory(llm=ScriptedChatModel(replies=[GOOD]), types=TYPES)
    assert memory.memory_variables == ["entities"]
    memory.save_context(
        {"question": "Dell XPS 15 ou Lenovo ThinkPad X1 ?"}, {"answer": "Les deux sont bons."}
    )
    block = memory.load_memory_variables({"question": "et le ThinkPad ?"})["entities"]
    assert block.splitlines()[1].startswith("- Lenovo ThinkPad X1 [PRODUCT]")
    assert memory.resolve("le second") == "Lenovo ThinkPad X1"
    assert memory.related("Dell XPS 15") == [("Lenovo ThinkPad X1", "COMPARES_TO", "out")]
    assert json.loads(memory.export_json())["entities"][0]["name"] == "Dell XPS 15"
    with pytest.raises(InvalidInputError, match="input_key"):
        memory.save_context({"input": "x"}, {"answer": "y"})
    with pytest.raises(InvalidInputError, match="output_key"):
        memory.save_context({"question": "x"}, {"output": "y"})
    with pytest.raises(InvalidInputError):
        EntityMemory(extractor="magic")
    memory.clear()
    assert memory.entities() == []


def test_entity_memory_composes_in_conversational_retrieval_chain():
    from langchain_classic.chains import ConversationalRetrievalChain
    from langchain_classic.memory import CombinedMemory, ConversationBufferMemory
    from langchain_core.documents import Document
    from langchain_core.prompts import PromptTemplate
    from langchain_core.retrievers import BaseRetriever

    class Fixed(BaseRetriever):
        def _get_relevant_documents(self, query, *, run_manager=None):
            return [Document(page_content="Le Dell XPS 15 est garanti 2 ans.")]

    seen: list[str] = []

    def answer(messages):
        seen.append(messages[-1].content)
        return "Le Dell XPS 15 coûte 1599 €."

    qa_model = ScriptedChatModel(replies=[answer, answer, answer], default="standalone question")
    entity_memory = EntityMemory(extractor=RuleEntityExtractor(use_spacy=False), types="ecommerce")
    memory = CombinedMemory(
        memories=[
            ConversationBufferMemory(
                memory_key="chat_history",
                input_key="question",
                output_key="answer",
                return_messages=True,
            ),
            entity_memory,
        ]
    )
    prompt = PromptTemplate.from_template(
        "{entities}\n\nContexte : {context}\nQuestion : {question}\nRéponse :"
    )
    chain = ConversationalRetrievalChain.from_llm(
        qa_model, Fixed(), memory=memory, combine_docs_chain_kwargs={"prompt": prompt}
    )
    chain.invoke({"question": "Je cherche le Dell XPS 15"})
    chain.invoke({"question": "Quelle est sa garantie ?"})
    assert "Known entities" not in seen[0]  # nothing known before the first turn
    assert "- Dell XPS 15 [PRODUCT]" in seen[-1]
    assert entity_memory.tracker.get("XPS 15").mentions >= 1  # type: ignore[union-attr]


# -- evaluation helpers ------------------------------------------------------------------


def test_exchanges_and_scoring_with_aliases():
    turns = [("user", "a"), ("assistant", "b"), ("user", "c"), ("user", "d"), ("assistant", "e")]
    assert exchanges(turns) == [("a", "b"), ("c", ""), ("d", "e")]
    gold = [
        GoldEntity("Dell XPS 15", "PRODUCT"),
        GoldEntity("Dell", "ORGANIZATION"),
        GoldEntity("Paris", "LOCATION"),
    ]
    pred = [
        Entity("1", "dell", "PERSON"),
        Entity("2", "XPS 15", "PRODUCT"),
        Entity("3", "Paris-Tokyo", "LOCATION"),
    ]
    s = score_entities(gold, pred)
    assert (s.tp, s.fp, s.fn, s.type_ok) == (2, 1, 1, 1)


def test_packaged_dev_set_is_valid_and_big_enough():
    from memory_chains.evaluation import DATA_DIR

    path = DATA_DIR / "entities" / "legacy_dev.jsonl"
    data = load_dataset(path)
    assert len(data) >= 15
    ids = [d.id for d in data]
    assert any(i.startswith("fr-") for i in ids) and any(i.startswith("en-") for i in ids)
    for domain in ("support", "ecom", "hr", "travel"):
        assert any(domain in i for i in ids)


def test_bad_dataset_line_names_the_line(tmp_path):
    p = tmp_path / "d.jsonl"
    p.write_text('{"id": "a", "turns": [], "entities": []}\n{"id": "b"}\n')
    with pytest.raises(InvalidInputError, match=":2:"):
        load_dataset(p)
