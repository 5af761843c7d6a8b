"""LongTermMemory: one model call per turn, malformed output, failures, PII, budgets, worker."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence

import pytest
from langchain_core.messages import BaseMessage

from memory_chains.errors import InvalidInputError, MalformedOutputError, ModelCallError
from memory_chains.longterm import (
    LongTermExtraction,
    LongTermExtractor,
    LongTermMemory,
    RuleLongTermExtractor,
)
from memory_chains.longterm._background import BackgroundWorker
from memory_chains.stores import InMemoryStore, export_user
from memory_chains.testing import HashEmbeddings, ScriptedChatModel, word_counter


def answer(
    profile: Sequence[dict[str, object]] = (), facts: Sequence[dict[str, object]] = ()
) -> str:
    return json.dumps({"profile": list(profile), "facts": list(facts)}, ensure_ascii=False)


PILATES = {
    "text": "L'utilisateur préfère les cours de Pilates le samedi matin.",
    "key": "preferred_course_day",
    "supersedes": False,
}
LEVEL = {"key": "technical_level", "value": "débutant", "source": "stated", "confidence": 0.9}


def memory(
    model: ScriptedChatModel, store: InMemoryStore | None = None, user: str = "alice"
) -> LongTermMemory:
    return LongTermMemory(store or InMemoryStore(), user, HashEmbeddings(), llm=model)


def snapshot(store: InMemoryStore) -> list[tuple[object, ...]]:
    return sorted((d.namespace, d.key, json.dumps(d.value)) for d in store.list(()))


def test_one_model_call_gives_profile_and_facts() -> None:
    model = ScriptedChatModel(replies=[answer([LEVEL], [PILATES])])
    mem = memory(model)
    report = mem.observe(
        "Je débute, je préfère le Pilates le samedi matin.", "Noté.", session_id="s1", seq=4
    )
    assert len(model.calls) == 1 and report.model_calls == 1
    assert report.profile == ("technical_level",) and len(report.facts.added) == 1
    entry = mem.profile().get("technical_level")
    assert entry is not None
    assert (entry.value, entry.source, entry.session_id, entry.seq) == (
        "beginner",
        "stated",
        "s1",
        4,
    )
    (fact,) = mem.facts()
    assert fact.sources == (("s1", 4),) and fact.key == "preferred_course_day"
    # the fixed prompt comes first, the turn last (KV cache reuse)
    assert "User: Je débute" in str(model.calls[0][-1].content)
    assert "Known keys" not in str(model.calls[0][-1].content)


def test_known_keys_are_given_to_the_model_and_supersede() -> None:
    moved = {
        "text": "L'utilisateur préfère le Pilates le mardi soir.",
        "key": "preferred_course_day",
        "supersedes": True,
    }
    model = ScriptedChatModel(replies=[answer([], [PILATES]), answer([], [moved])])
    mem = memory(model)
    mem.observe("Je préfère le samedi matin.", session_id="s1")
    report = mem.observe("Finalement plutôt le mardi soir.", session_id="s2")
    assert "Known keys: preferred_course_day" in str(model.calls[1][-1].content)
    assert len(report.facts.superseded) == 1
    assert [f.text for f in mem.facts()] == [moved["text"]]
    assert len(mem.facts(include_superseded=True)) == 2


def test_malformed_answer_is_repaired_without_a_retry() -> None:
    truncated = '```json\n{"profile": [], "facts": [{"text": "L\'utilisateur habite à Lyon.", "key'
    model = ScriptedChatModel(replies=[truncated])
    report = memory(model).observe("J'habite à Lyon.", session_id="s1")
    assert len(model.calls) == 1
    assert report.model_calls == 1 and len(report.facts.added) == 1


def test_unusable_answer_is_retried_once_then_reported_and_memory_unchanged() -> None:
    store = InMemoryStore()
    model = ScriptedChatModel(replies=["Bien sûr !", '["not", "an object"]'])
    mem = memory(model, store)
    before = snapshot(store)
    with pytest.raises(MalformedOutputError) as info:
        mem.observe("Je préfère le thé.", session_id="s1")
    assert len(model.calls) == 2
    assert info.value.raw == '["not", "an object"]'
    assert snapshot(store) == before


def test_retry_success_counts_two_calls() -> None:
    model = ScriptedChatModel(replies=["no json here", answer([LEVEL])])
    report = memory(model).observe("Je débute.", session_id="s1")
    assert report.model_calls == 2 and report.profile == ("technical_level",)


def test_failed_model_call_raises_model_call_error_and_writes_nothing() -> None:
    store = InMemoryStore()
    model = ScriptedChatModel(replies=[answer([LEVEL], [PILATES]), RuntimeError("server down")])
    mem = memory(model, store)
    mem.observe("Je débute.", session_id="s1")
    before = snapshot(store)
    with pytest.raises(ModelCallError, match="server down"):
        mem.observe("Je préfère le mardi.", session_id="s1")
    assert snapshot(store) == before


def test_embedding_failure_writes_nothing() -> None:
    class Broken(HashEmbeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            raise RuntimeError("embedder crashed")

    store = InMemoryStore()
    model = ScriptedChatModel(replies=[answer([LEVEL], [PILATES])])
    mem = LongTermMemory(store, "alice", Broken(), llm=model)
    with pytest.raises(RuntimeError):
        mem.observe("Je débute, Pilates le samedi.", session_id="s1")
    assert store.list(()) == []


def test_unusable_items_are_reported_not_silently_dropped() -> None:
    model = ScriptedChatModel(
        replies=[answer([{"key": "", "value": "x", "source": "stated"}], [{"text": " "}, PILATES])]
    )
    report = memory(model).observe("Pilates le samedi.", session_id="s1")
    assert len(report.rejected) == 2 and len(report.facts.added) == 1


def test_pii_is_masked_before_the_model_and_the_store() -> None:
    iban = "FR7630006000011234567890189"
    echo = {"text": f"L'IBAN de l'utilisateur est {iban}.", "key": "iban", "supersedes": False}
    model = ScriptedChatModel(replies=[answer([], [echo])])
    store = InMemoryStore()
    mem = memory(model, store)
    mem.observe(f"Mon IBAN est {iban}, écrivez à jo@example.com", session_id="s1")
    assert iban not in str(model.calls[0][-1].content)
    assert "jo@example.com" not in str(model.calls[0][-1].content)
    dumped = json.dumps(export_user(store, "alice"), ensure_ascii=False)
    assert iban not in dumped and "[IBAN]" in dumped


def test_bad_input_raises_before_any_model_call() -> None:
    model = ScriptedChatModel(replies=[answer()])
    mem = memory(model)
    with pytest.raises(InvalidInputError):
        mem.observe("   ", session_id="s1")
    with pytest.raises(InvalidInputError):
        mem.observe("ok", session_id="not valid!")
    with pytest.raises(InvalidInputError):
        mem.observe("ok", session_id="s1", seq=-1)
    with pytest.raises(InvalidInputError):
        mem.observe("bad \ud800 text", session_id="s1")
    with pytest.raises(InvalidInputError):
        mem.observe_in_background("ok", session_id="")
    assert model.calls == []


def test_context_blocks_fit_their_budgets() -> None:
    facts = [
        {"text": f"L'utilisateur possède l'objet numéro {i} rangé au garage.", "key": f"k{i}",
         "supersedes": False}
        for i in range(6)
    ]  # fmt: skip
    model = ScriptedChatModel(replies=[answer([LEVEL, {"key": "language", "value": "fr",
                                                       "source": "inferred", "confidence": 0.8}],
                                              facts)])  # fmt: skip
    mem = LongTermMemory(InMemoryStore(), "alice", HashEmbeddings(), llm=model,
                         token_counter=word_counter)  # fmt: skip
    mem.observe("inventaire", session_id="s1")
    for budget in (0, 5, 12, 30, 60, 500):
        ctx = mem.context("objet garage", max_tokens=budget)
        assert word_counter(ctx) <= budget
        assert word_counter(mem.profile_block(budget)) <= budget
        assert word_counter(mem.facts_block("objet garage", budget)) <= budget
    assert mem.context("objet garage", max_tokens=0) == ""
    full = mem.context("objet garage", max_tokens=500)
    assert full.startswith("User profile:") and full.count("numéro") == 6
    assert mem.facts_block("objet", 500, k=2).count("\n- ") == 2


def test_rule_extractor_without_model() -> None:
    mem = LongTermMemory(InMemoryStore(), "alice", HashEmbeddings())
    assert isinstance(mem.extractor, RuleLongTermExtractor)
    report = mem.observe(
        "Je m'appelle Camille et je préfère les cours de Pilates le samedi matin.",
        session_id="s1",
    )
    assert report.model_calls == 0
    assert {f.text for f in mem.facts()} == {
        "L'utilisateur s'appelle Camille.",
        "L'utilisateur préfère les cours de Pilates le samedi matin.",
    }
    mem.observe("Mon adresse est 3 rue des Lilas.", session_id="s1")
    mem.observe("Mon adresse est 12 avenue Foch.", session_id="s2")
    assert [f.text for f in mem.facts() if f.key == "adresse"] == [
        "L'adresse de l'utilisateur est 12 avenue Foch."
    ]
    x = RuleLongTermExtractor().extract("Hi, my name is Tom and I'm an expert.")
    assert [f.text for f in x.facts] == ["The user's name is Tom."]
    assert [(e.key, e.value) for e in x.profile] == [
        ("language", "en"),
        ("technical_level", "expert"),
    ]
    assert RuleLongTermExtractor().extract("Merci, bonne journée").facts == ()


TITLE = "Maintenant ou jamais."


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        ("Ma ville est Nantes maintenant.", "La ville de l'utilisateur est Nantes."),
        ("Ma ville est désormais Nantes.", "La ville de l'utilisateur est Nantes."),
        ("Mes enfants sont grands, à présent !", "Les enfants de l'utilisateur sont grands."),
        ("Je préfère le thé aussi maintenant.", "L'utilisateur préfère le thé."),
        ("My city is Berlin now.", "The user's city is Berlin."),
        ("My favourite sport is tennis too.", "The user's favourite sport is tennis."),
        ("My city is not Paris anymore.", "The user's city is not Paris."),
        # a capitalised title is a name, and a value that is only an adverb stays
        ("Mon film est Maintenant ou jamais.", "Le film de l'utilisateur est " + TITLE),
        ("Ma réponse est maintenant.", "La réponse de l'utilisateur est maintenant."),
    ],
)
def test_rules_leave_time_and_additive_adverbs_out_of_values(said: str, kept: str) -> None:
    assert [f.text for f in RuleLongTermExtractor().extract(said).facts] == [kept]


async def test_aobserve_shares_the_logic_and_uses_ainvoke() -> None:
    model = ScriptedChatModel(replies=[answer([LEVEL], [PILATES])])
    mem = memory(model)
    report = await mem.aobserve("Je débute.", "Ok", session_id="s1", seq=1)
    assert report.model_calls == 1 and len(mem.facts()) == 1
    assert mem.profile().value("technical_level") == "beginner"
    assert await mem.acontext("Pilates", max_tokens=100)


def test_background_worker_processes_in_order_and_flush_waits() -> None:
    gate = threading.Event()

    def slow(messages: Sequence[BaseMessage]) -> str:
        gate.wait(5)
        return answer([], [PILATES])

    model = ScriptedChatModel(replies=[slow, answer([LEVEL])])
    mem = memory(model)
    mem.observe_in_background("Pilates le samedi.", session_id="s1", seq=1)
    mem.observe_in_background("Je débute.", session_id="s1", seq=2)
    with pytest.raises(TimeoutError):
        mem.flush(timeout=0.05)
    gate.set()
    assert mem.flush(timeout=5) == 2
    assert len(mem.facts()) == 1 and mem.profile().value("technical_level") == "beginner"
    assert mem.last_error is None and mem.last_report is not None
    mem.close()


def test_background_errors_are_kept_and_raised_by_flush() -> None:
    store = InMemoryStore()
    model = ScriptedChatModel(
        replies=[RuntimeError("boom"), "garbage", "still garbage", answer([], [PILATES])]
    )
    mem = memory(model, store)
    mem.observe_in_background("Un.", session_id="s1", seq=1)
    mem.observe_in_background("Deux.", session_id="s1", seq=2)
    mem.observe_in_background("Trois.", session_id="s1", seq=3)
    with pytest.raises(ModelCallError) as info:
        mem.flush(timeout=5)
    assert any("s1#1" in note for note in info.value.__notes__)
    assert [type(e) for e in mem.errors] == [ModelCallError, MalformedOutputError]
    assert isinstance(mem.last_error, MalformedOutputError)
    assert len(mem.facts()) == 1  # the failures did not stop the next turn
    assert mem.flush(timeout=5) == 3  # already reported: not raised twice
    mem.close()
    mem.close()  # idempotent


def test_extractor_prompt_is_small_and_stable() -> None:
    model = ScriptedChatModel(replies=[answer(), answer()])
    x = LongTermExtractor(model)
    x.extract("Bonjour !", "Bonjour.")
    x.extract("Merci.", "De rien.", ["city"])
    first, second = model.calls
    assert [m.content for m in first[:-1]] == [m.content for m in second[:-1]]
    prefix_words = sum(len(str(m.content).split()) for m in first[:-1])
    assert prefix_words < 450
    assert x.calls == 2


def test_custom_extractor_must_return_an_extraction() -> None:
    class Wrong:
        def extract(self, human: str, ai: str = "", known_keys: Sequence[str] = ()) -> object:
            return {"facts": []}

        async def aextract(
            self, human: str, ai: str = "", known_keys: Sequence[str] = ()
        ) -> object:
            return {"facts": []}

    mem = LongTermMemory(InMemoryStore(), "alice", HashEmbeddings(), extractor=Wrong())  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        mem.observe("x", session_id="s1")
    with pytest.raises(InvalidInputError):
        LongTermMemory(InMemoryStore(), "alice", HashEmbeddings(), extractor=object())  # type: ignore[arg-type]
    assert isinstance(LongTermExtraction(), LongTermExtraction)


def test_an_item_submitted_while_the_worker_closes_is_still_processed() -> None:
    # Before 2026-12-02 such an item was queued behind close()'s stop marker: never
    # processed, and flush() hung (50 of 50 runs).
    done: list[str] = []

    def process(item: str) -> None:
        if item == "slow":
            time.sleep(0.02)  # an extraction call in progress
        done.append(item)

    for run in range(10):
        done.clear()
        worker = BackgroundWorker(process, name=f"close-race-{run}", what="turn")
        worker.submit("slow")
        closer = threading.Thread(target=worker.close)
        closer.start()
        time.sleep(0.005)  # close() is waiting for "slow"
        worker.submit("late")
        closer.join()
        assert worker.flush(timeout=5) == 2 and done == ["slow", "late"]
        worker.close()
