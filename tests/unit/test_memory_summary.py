"""Summary memory: thresholds, one call per compaction, background, failures, no drift."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest
from langchain_core.messages import BaseMessage

from memory_chains.errors import InvalidInputError, MalformedOutputError, ModelCallError
from memory_chains.memory import LLMSummarizer, SummaryCore, SummaryData
from memory_chains.memory._summary_data import (
    SummaryUpdate,
    apply_update,
    fit_budget,
    parse_update,
)
from memory_chains.memory._summary_drift import (
    anchors,
    carry_forward,
    drop_unsupported,
    keep_turn_details,
)
from memory_chains.stores import InMemoryStore, SQLiteStore, Turn
from memory_chains.testing import ScriptedChatModel, word_counter


def update(**sections: list[str]) -> str:
    return json.dumps(sections)


def echo_fact(messages: Sequence[BaseMessage]) -> str:
    """A fake model adding one fact per turn it is asked to fold."""
    prompt = str(messages[-1].content)
    folded = [line for line in prompt.splitlines() if line.startswith("Human (turn")]
    return update(add_facts=[f"Noted: {line.split(': ', 1)[1]}" for line in folded])


def make(llm: ScriptedChatModel, **kwargs: object) -> SummaryCore:
    kwargs.setdefault("background", False)
    kwargs.setdefault("token_counter", word_counter)
    return SummaryCore(llm, **kwargs)  # type: ignore[arg-type]


# -- pure helpers -----------------------------------------------------------------------


def test_parse_update_repairs_fences_and_prose() -> None:
    raw = 'Sure!\n```json\n{"add_facts": ["A", "A", 3], "remove": ["q1"], "junk": 1}\n```'
    parsed = parse_update(raw)
    assert parsed.add == {"key_facts": ("A",)} and parsed.remove == ("Q1",)
    echoed = parse_update('{"add_questions": ["Q1; Q2", "q3.", "Real question?"]}')
    assert echoed.add == {"open_questions": ("Real question?",)}
    full = parse_update('{"key_facts": ["X"], "open_questions": ["Y?"]}')
    assert full.add == {"key_facts": ("X",), "open_questions": ("Y?",)}
    with pytest.raises(MalformedOutputError) as info:
        parse_update("I cannot do that")
    assert info.value.raw == "I cannot do that"


def test_parse_update_keeps_the_complete_items_of_an_answer_cut_at_the_token_cap() -> None:
    cut = (
        '{"add_facts": ["La commande 4821 sera livrée à Lyon.", "Le Dell XPS 15 coûte 1 899 €."],'
        ' "add_decisions": ["Claire paie en trois fois."], "add_preferences": ["Claire préfère le'
    )
    parsed = parse_update(cut)
    assert parsed.add == {
        "key_facts": ("La commande 4821 sera livrée à Lyon.", "Le Dell XPS 15 coûte 1 899 €."),
        "decisions": ("Claire paie en trois fois.",),
    }  # the sentence cut in the middle is dropped, not stored half-written
    assert parse_update('{"add_facts": ["Commande 4821", "Livr').add == {
        "key_facts": ("Commande 4821",)
    }


def test_apply_update_is_pure_and_keeps_previous_items() -> None:
    prev = SummaryData(key_facts=("F one",), open_questions=("Q one?", "Q two?"))
    new = apply_update(prev, SummaryUpdate({"key_facts": ("F two", "f ONE")}, ("Q1", "Z9")))
    assert new.key_facts == ("F one", "F two")
    assert new.open_questions == ("Q two?",)
    assert prev.open_questions == ("Q one?", "Q two?")  # input unchanged


def test_restated_items_replace_the_shorter_version() -> None:
    prev = SummaryData(key_facts=("Order 48213 ships to Lyon.",))
    new = apply_update(
        prev,
        SummaryUpdate(
            {"key_facts": ("Order 48213 ships to Lyon on 14 March.", "ships to Lyon", "New fact")}
        ),
    )
    assert new.key_facts == ("Order 48213 ships to Lyon on 14 March.", "New fact")


def test_anchors() -> None:
    assert anchors("Le client Paul Martin a commandé 2 XPS le 14/03 pour 1 299 €") >= {
        "martin",
        "xps",
        "14/03",
        "2",
        "299",
    }
    assert "le" not in anchors("Le client")


def test_carry_forward_restores_lost_facts_only() -> None:
    prev = SummaryData(
        key_facts=("Order 4821 ships to Lyon.", "The user likes green tea."),
        decisions=("Refund approved on 2 May.",),
        open_questions=("Which colour?",),
    )
    rewritten = SummaryData(key_facts=("The user likes green tea a lot.",))
    repaired, restored = carry_forward(prev, rewritten)
    assert restored == 2
    assert "Order 4821 ships to Lyon." in repaired.key_facts
    assert repaired.decisions == ("Refund approved on 2 May.",)
    assert repaired.open_questions == ()  # open questions may be resolved
    same, none = carry_forward(prev, prev)
    assert (same, none) == (prev, 0)


def test_fit_budget_drops_oldest_questions_first() -> None:
    data = SummaryData(key_facts=("fact one",), open_questions=("old question?", "new question?"))
    fitted, dropped = fit_budget(data, word_counter(data.render()) - 1, word_counter)
    assert dropped == 1 and fitted.open_questions == ("new question?",)
    assert fitted.key_facts == ("fact one",)


def test_summarizer_prompt_prefix_is_fixed() -> None:
    s = LLMSummarizer(ScriptedChatModel())
    a = s.build_messages(SummaryData(), [Turn(1, "h", "a")])
    b = s.build_messages(SummaryData(key_facts=("x",)), [Turn(9, "other", "b")])
    assert [m.content for m in a[:3]] == [m.content for m in b[:3]]
    assert "F1. x" in str(b[-1].content) and "Human (turn 9): other" in str(b[-1].content)


def test_summarizer_example_speaks_the_conversation_language() -> None:
    s = LLMSummarizer(ScriptedChatModel())
    french = s.build_messages(SummaryData(), [Turn(1, "Quels sont vos horaires ?", "9 h-19 h")])
    english = s.build_messages(SummaryData(), [Turn(1, "What are your opening hours?", "9-7")])
    assert "Sofia préfère" in str(french[2].content) and "Tant pis" in str(french[1].content)
    assert "Sofia prefers" in str(english[2].content)
    assert french[0].content == english[0].content  # one system prompt, cached by both
    for messages in (french, english):  # each example answer is a valid change set
        assert parse_update(str(messages[2].content)).add["preferences"]


def test_a_run_on_item_is_split_between_clauses_not_cut_inside_a_word() -> None:
    clauses = [f"Product {i} costs {100 + i} € and ships from Lyon" for i in range(14)]
    raw = update(add_facts=["; ".join(clauses)])
    items = parse_update(raw).add["key_facts"]
    assert len(items) > 1 and all(len(item) <= 400 for item in items)
    assert "; ".join(items) == "; ".join(clauses)  # nothing lost, nothing cut


def test_summarizer_structured_flag() -> None:
    assert LLMSummarizer(ScriptedChatModel()).structured is False
    assert (
        LLMSummarizer(ScriptedChatModel(), structured=True)._kwargs()["response_format"]["type"]
        == "json_schema"
    )
    with pytest.raises(InvalidInputError):
        LLMSummarizer(None)


# -- thresholds and calls ---------------------------------------------------------------


def test_no_model_call_below_threshold() -> None:
    llm = ScriptedChatModel(default=update(add_facts=["x"]))
    mem = make(llm, max_turns=5, keep_last=2)
    for i in range(5):
        mem.add_exchange(f"q{i}", f"a{i}")
    assert llm.calls == []
    assert [t.seq for t in mem.context().turns] == [1, 2, 3, 4, 5]


def test_one_call_per_compaction_and_last_k_verbatim() -> None:
    llm = ScriptedChatModel(replies=[echo_fact] * 10)
    mem = make(llm, max_turns=4, keep_last=2)
    for i in range(1, 6):
        mem.add_exchange(f"q{i}", f"a{i}")
    assert len(llm.calls) == 1
    ctx = mem.context()
    assert [t.seq for t in ctx.turns] == [4, 5]
    assert "Noted: q1." in ctx.summary and "Noted: q3." in ctx.summary
    assert "q4" not in ctx.summary
    # the summary goes first in the rendered context
    assert mem.render().startswith("Summary of the earlier conversation: Key facts: Noted: q1.")
    for i in range(6, 9):
        mem.add_exchange(f"q{i}", f"a{i}")
    assert len(llm.calls) == 2
    assert mem.stats().compactions == 2


@pytest.mark.parametrize(
    ("kwargs", "turns_before_call"),
    [
        ({"max_tokens": 20}, 4),  # 6 words per exchange: 24 > 20 at the 4th
        ({"max_words": 11}, 3),  # 4 words per exchange: 12 > 11 at the 3rd
        ({"max_turns": 2}, 3),
    ],
)
def test_thresholds(kwargs: dict[str, int], turns_before_call: int) -> None:
    llm = ScriptedChatModel(default=update(add_facts=["x"]))
    mem = make(llm, keep_last=1, **kwargs)
    for i in range(1, 10):
        mem.add_exchange(f"question {i}", f"answer {i}")  # 4 words, 6 rendered tokens
        if llm.calls:
            break
    assert i == turns_before_call


def test_keep_last_zero_folds_everything() -> None:
    llm = ScriptedChatModel(default=update(add_facts=["all folded"]))
    mem = make(llm, max_turns=1, keep_last=0)
    mem.add_exchange("q1", "a1")
    mem.add_exchange("q2", "a2")
    ctx = mem.context()
    assert ctx.turns == () and ctx.summary == "Key facts: all folded."


@pytest.mark.parametrize(
    "kwargs",
    [{"max_turns": 0}, {"max_tokens": -1}, {"keep_last": -1}, {"max_summary_tokens": 0}],
)
def test_bad_configuration(kwargs: dict[str, int]) -> None:
    with pytest.raises(InvalidInputError):
        SummaryCore(ScriptedChatModel(), **kwargs)  # type: ignore[arg-type]


# -- failures lose nothing --------------------------------------------------------------


@pytest.mark.parametrize(
    "failure", [RuntimeError("model crashed"), "not json at all", ModelCallError("x")]
)
def test_model_failure_keeps_raw_turns_and_retries(failure: object) -> None:
    llm = ScriptedChatModel(replies=[failure, update(add_facts=["recovered"])])
    store = InMemoryStore()
    mem = make(llm, store=store, max_turns=2, keep_last=1)
    for i in range(1, 4):
        mem.add_exchange(f"q{i}", f"a{i}")
    assert len(llm.calls) == 1
    assert mem.compaction_failures == 1 and mem.last_error is not None
    assert [t.seq for t in mem.context().turns] == [1, 2, 3]  # nothing lost
    assert store.get_summary("default", "default").version == 0
    mem.add_exchange("q4", "a4")  # next turn retries
    assert len(llm.calls) == 2
    ctx = mem.context()
    assert ctx.summary == "Key facts: recovered." and [t.seq for t in ctx.turns] == [4]
    assert mem.stats().compaction_failures == 1


def test_compact_now_raises_for_callers_who_want_it() -> None:
    llm = ScriptedChatModel(replies=[RuntimeError("boom"), RuntimeError("boom again")])
    mem = make(llm, max_turns=1, keep_last=0)
    assert mem.compact_now() is None  # nothing to fold: no call
    mem.add_exchange("q1", "a1")
    assert llm.calls == []  # below the threshold
    mem.add_exchange("q2", "a2")  # inline compaction fails: recorded, not raised
    assert mem.compaction_failures == 1
    with pytest.raises(ModelCallError, match=r"boom again"):
        mem.compact_now()
    assert len(mem.context().turns) == 2


def test_concurrent_writer_conflict_writes_nothing() -> None:
    store = InMemoryStore()
    llm = ScriptedChatModel(default=update(add_facts=["mine"]))
    mem = make(llm, store=store, max_turns=1, keep_last=0, background=False)
    mem.add_exchange("q1", "a1")
    original = store.get_summary

    def stale(user_id: str, session_id: str):  # another process wrote in between
        state = original(user_id, session_id)
        store.replace_summary(user_id, session_id, "theirs", 0, {}, expected_version=state.version)
        return state

    store.get_summary = stale  # type: ignore[method-assign]
    mem.add_exchange("q2", "a2")
    store.get_summary = original  # type: ignore[method-assign]
    assert store.get_summary("default", "default").text == "theirs"


# -- drift ------------------------------------------------------------------------------


def test_fact_from_turn_3_survives_10_compactions_with_a_forgetful_model() -> None:
    """The fake model rewrites the whole summary each time and forgets old facts."""

    def forgetful(messages: Sequence[BaseMessage]) -> str:
        prompt = str(messages[-1].content)
        turns = [line for line in prompt.splitlines() if line.startswith("Human (turn")]
        # records the folded turns, but as a *full* summary that also removes every
        # previous item: each compaction forgets everything older
        new = [line.split(": ", 1)[1] for line in turns]
        return json.dumps({"key_facts": new, "remove": [f"F{i}" for i in range(1, 60)]})

    llm = ScriptedChatModel(replies=[forgetful] * 50)
    mem = make(llm, max_turns=2, keep_last=1, max_summary_tokens=10_000)
    mem.add_exchange("Hello", "Hi")
    mem.add_exchange("I need a laptop", "Sure")
    mem.add_exchange("My order number is 48213, delivery in Lyon on 14 March", "Noted")
    for i in range(4, 40):
        mem.add_exchange(f"filler {i}", "ok")
        if mem.stats().compactions >= 10:
            break
    assert mem.stats().compactions >= 10
    summary = mem.context().summary
    assert "48213" in summary and "Lyon" in summary and "14 March" in summary
    assert len(llm.calls) == mem.stats().compactions


def test_summary_stays_under_budget_at_any_length() -> None:
    llm = ScriptedChatModel(replies=[echo_fact] * 200)
    mem = make(llm, max_turns=4, keep_last=2, max_summary_tokens=40)
    sizes = []
    for i in range(120):
        mem.add_exchange(f"question number {i}", f"answer {i}")
        sizes.append(word_counter(mem.context().summary))
    assert max(sizes) <= 40
    stats = mem.stats()
    assert stats.summary_tokens <= 40
    assert stats.tokens <= 40 + 4 + 6 * 5  # summary + prefix + at most threshold+1 exchanges


# -- background -------------------------------------------------------------------------


def test_background_compaction_is_off_the_critical_path() -> None:
    gate = threading.Event()

    def slow(messages: Sequence[BaseMessage]) -> str:
        gate.wait(5)
        return update(add_facts=["done"])

    llm = ScriptedChatModel(replies=[slow])
    mem = make(llm, max_turns=2, keep_last=1, background=True)
    for i in range(1, 4):
        mem.add_exchange(f"q{i}", f"a{i}")  # returns while the model is still "thinking"
    assert mem.wait_idle(0.05) is False
    assert mem.context().summary == ""  # raw turns still served meanwhile
    mem.add_exchange("q4", "a4")
    gate.set()
    assert mem.wait_idle(5) is True
    assert mem.context().summary == "Key facts: done."
    assert mem.stats().compactions >= 1


async def test_await_idle() -> None:
    llm = ScriptedChatModel(default=update(add_facts=["async"]))
    mem = make(llm, max_turns=1, keep_last=0, background=True)
    await mem.aadd_exchange("q1", "a1")
    await mem.aadd_exchange("q2", "a2")
    assert await mem.await_idle(5)
    assert (await mem.acontext()).summary == "Key facts: async."


def test_persisted_summary_is_reloaded_by_a_new_memory(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    llm = ScriptedChatModel(default=update(add_facts=["Alice lives in Lyon."]))
    first = make(llm, store=SQLiteStore(path), max_turns=2, keep_last=1)
    for i, question in enumerate(("Alice here, from Lyon.", "q1", "q2")):
        first.add_exchange(question, f"a{i}")
    first.store.close()
    again = make(ScriptedChatModel(), store=SQLiteStore(path), max_turns=2, keep_last=1)
    ctx = again.context()
    assert ctx.summary == "Key facts: Alice lives in Lyon." and [t.seq for t in ctx.turns] == [3]
    assert again.stats().compactions == 1


def test_clear_during_a_background_compaction_is_not_undone() -> None:
    gate = threading.Event()

    def slow(messages: Sequence[BaseMessage]) -> str:
        gate.wait(5)
        return update(add_facts=["secret from the old session"])

    llm = ScriptedChatModel(replies=[slow])
    mem = make(llm, max_turns=1, keep_last=0, background=True)
    mem.add_exchange("q1", "a1")
    mem.add_exchange("q2", "a2")  # compaction starts and blocks in the model
    mem.clear()  # the user asks to forget the session meanwhile
    gate.set()
    assert mem.wait_idle(5)
    ctx = mem.context()
    assert ctx.summary == "" and ctx.turns == ()
    assert mem.stats().compactions == 0


def test_numbers_the_model_missed_are_kept_from_the_turns() -> None:
    llm = ScriptedChatModel(default=update(add_facts=["The user bought a laptop."]))
    mem = make(llm, max_turns=1, keep_last=0)
    mem.add_exchange("I take it. My client number is 48213. Thanks!", "Delivery on 14/03.")
    mem.add_exchange("Great", "See you")
    facts = SummaryData.from_json(mem.store.get_summary("default", "default").data).key_facts
    assert facts == (
        "The user bought a laptop.",
        "My client number is 48213.",
        "Delivery on 14/03.",
    )


CATALOGUE = [
    ("Je cherche le Dell XPS 15.", "Le Dell XPS 15 est en stock à 1 899 €."),
    ("Quelle est sa garantie ?", "Garanti 1 an, extensible à 3 ans."),
    ("Parle-moi de l'ASUS ROG Strix G15.", "Un PC gamer 144 Hz à 1 349 €."),
    ("Et la carte graphique ?", "Une NVIDIA GeForce RTX 4060."),
    ("La livraison ?", "Offerte dès 50 €."),
]


def test_a_new_item_mixing_distant_turns_is_dropped_and_counted() -> None:
    invented = "La carte graphique du Dell XPS 15 est une RTX 4060."  # turns 1 and 4
    grounded = [
        "Le Dell XPS 15 est garanti 1 an, extensible à 3 ans.",  # "sa garantie": turns 1-2
        "La carte graphique de l'ASUS ROG Strix G15 est une RTX 4060.",  # turns 3-4
        "La livraison est offerte dès 50 €.",
        "Le client compare des ordinateurs portables.",  # no anchor: nothing to check
    ]
    llm = ScriptedChatModel(default=update(add_facts=[*grounded, invented]))
    mem = make(llm, max_turns=len(CATALOGUE), keep_last=1)
    for human, ai in CATALOGUE:
        mem.add_exchange(human, ai)
    mem.add_exchange("Merci", "Avec plaisir")
    assert mem.store.get_summary("default", "default").upto_seq == 5
    summary = SummaryData.from_json(mem.store.get_summary("default", "default").data)
    assert invented not in summary.key_facts
    assert set(grounded) <= set(summary.key_facts)
    # the RTX 4060 sentence is grounded elsewhere, so no verbatim sentence was needed
    assert not any(f.startswith("Une NVIDIA") for f in summary.key_facts)


def test_unsupported_items_are_reported_and_old_items_never_judged() -> None:
    previous = SummaryData(key_facts=("Claire habite à Lyon.",))
    new = SummaryData(
        key_facts=("Claire habite à Lyon.", "Claire a commandé le Dell XPS 15 le 14/03."),
        decisions=("L'assistant livre à Genève.",),
    )
    turns = [Turn(1, "Mon numéro de client est le 48213.", "Merci, c'est noté.")]
    kept, dropped = drop_unsupported(previous, new, turns)
    assert dropped == 2 and kept == SummaryData(key_facts=("Claire habite à Lyon.",))

    store = InMemoryStore()
    writer = make(ScriptedChatModel(), max_turns=100, store=store)
    writer.add_exchange("Livrez à Lyon le 12 mai", "Entendu, le 12 mai à Lyon")
    writer.add_exchange("Merci", "Bonne journée")
    reply = update(add_decisions=["Livraison à Lyon le 12 mai.", "Livraison à Genève."])
    result = make(ScriptedChatModel(default=reply), max_turns=1, keep_last=0, store=store)
    outcome = result.compact_now()
    assert outcome is not None and outcome.unsupported_items == 1
    assert result.context().summary == "Décisions et engagements: Livraison à Lyon le 12 mai."


def test_a_kept_answer_sentence_says_what_it_answers_once() -> None:
    turns = [
        Turn(1, "Combien coûte la livraison ?", "Elle coûte 4,90 €. Elle est offerte dès 50 €."),
        Turn(2, "x" * 150, "Oui, en 3 fois dès 300 €."),  # a long message is not repeated
    ]
    facts, added = keep_turn_details(SummaryData(), turns)
    assert added == 3
    assert facts.key_facts == (
        "Combien coûte la livraison ? — Elle coûte 4,90 €.",
        "Elle est offerte dès 50 €.",
        "Oui, en 3 fois dès 300 €.",
    )


def test_the_prompts_markers_echoed_back_are_not_items() -> None:
    raw = update(
        add_preferences=["(none)", "Aucun.", "Sofia préfère le matin."],
        add_questions=["Q1. Peut-on changer la RAM ?", "Q1; Q2"],
    )
    parsed = parse_update(raw).add
    assert parsed["preferences"] == ("Sofia préfère le matin.",)
    assert parsed["open_questions"] == ("Peut-on changer la RAM ?",)


def test_a_number_said_of_another_product_does_not_support_an_item() -> None:
    turns = [
        Turn(1, "Quelle est sa garantie ?", "Le Dell XPS 15 est garanti 1 an, extensible à 3 ans."),
        Turn(2, "Et comparé au Lenovo ?", "Le Lenovo ThinkPad X1 Carbon est garanti 3 ans."),
        Turn(3, "Parle-moi de l'ASUS ROG Strix G15.", "Un PC gamer 15,6 pouces à 1 349 €."),
        Turn(4, "Et sa garantie ?", "2 ans."),  # a turn naming nothing supports any name
    ]
    invented = "La garantie de l'ASUS ROG Strix G15 est 3 ans."  # the Lenovo's, next turn
    grounded = (
        "La garantie du Lenovo ThinkPad X1 Carbon est 3 ans.",
        "L'ASUS ROG Strix G15 coûte 1 349 €.",
        "L'ASUS ROG Strix G15 est garanti 2 ans.",
    )
    new = SummaryData(key_facts=(*grounded, invented))
    kept, dropped = drop_unsupported(SummaryData(), new, turns)
    assert dropped == 1 and kept.key_facts == grounded
    # the previous summary's items count under the same rule
    previous = SummaryData(key_facts=("Le Lenovo ThinkPad X1 Carbon est garanti 3 ans.",))
    assert drop_unsupported(previous, new, turns)[1] == 1
    previous = SummaryData(key_facts=("Extension de garantie : 3 ans de plus.",))
    assert drop_unsupported(previous, new, turns)[1] == 0


def test_a_name_or_a_counted_digit_the_summary_lost_brings_its_sentence_back() -> None:
    turns = [
        Turn(1, "Et le yoga ?", "Le yoga a lieu le samedi à 10 h, avec Marc."),
        Turn(2, "Et sa garantie ?", "Elle est de 2 ans."),
        Turn(3, "Qui donne le Pilates ?", "Inès donne le Pilates."),
    ]
    summary = SummaryData(key_facts=("Le yoga a lieu le samedi à 10 h.", "Inès donne le Pilates."))
    facts, added = keep_turn_details(summary, turns)
    assert added == 2
    assert facts.key_facts[2:] == (
        "Et le yoga ? — Le yoga a lieu le samedi à 10 h, avec Marc.",
        "Et sa garantie ? — Elle est de 2 ans.",
    )
    # nothing is missing any more: a second pass adds nothing
    assert keep_turn_details(facts, turns) == (facts, 0)
    # a name is looked for as a word: "Marc" is not in "marche"
    walking = SummaryData(key_facts=("Le yoga a lieu le samedi à 10 h, en marche nordique.",))
    assert keep_turn_details(walking, turns[:1])[1] == 1


def test_section_titles_follow_the_language_of_the_items() -> None:
    french = SummaryData(key_facts=("Claire habite à Lyon.",), open_questions=("Quel budget ?",))
    english = SummaryData(key_facts=("Claire lives in Lyon.",), open_questions=("What budget?",))
    assert french.render() == "Faits clés: Claire habite à Lyon.\nQuestions ouvertes: Quel budget ?"
    assert english.render() == "Key facts: Claire lives in Lyon.\nOpen questions: What budget?"
    assert "Key facts:" in french.numbered()  # the prompt's view stays in the prompt's language
