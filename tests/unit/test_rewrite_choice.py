"""The default "choice" strategy: rules first, the model picks a referent, templates write.

Also the pieces it is made of (the choice prompt, the templates) and the entity-memory hints.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from memory_chains.entities import EntityTracker, RuleEntityExtractor
from memory_chains.errors import InvalidInputError, MalformedOutputError, ModelCallError
from memory_chains.evaluation.rewrite import (
    DEV_CORPUS,
    DEV_DATASET,
    FAR_DATASET,
    evaluate_rewrites,
    feed_history,
    read_jsonl,
)
from memory_chains.rewrite import QueryRewriter, entity_hints, entity_source, question_type
from memory_chains.rewrite._choice import (
    CHOICE_SYSTEM_PROMPT,
    build_choice_messages,
    choice_format,
    parse_choice,
)
from memory_chains.rewrite._rewriter import continued_name
from memory_chains.rewrite._template import ellipsis_rewrite, ordinal_referent, template_rewrite
from memory_chains.testing import HashEmbeddings, ScriptedChatModel

TWO = [
    ("user", "J'hésite entre le HP Pavilion 14 et le MacBook Air M2."),
    ("assistant", "Le Pavilion coûte moins cher, le MacBook tient plus longtemps."),
]
FAR = [
    ("user", "Je regarde le Dell XPS 15 pour du montage."),
    ("assistant", "Bon choix, son écran est excellent."),
    ("user", "Vous livrez à Marseille ?"),
    ("assistant", "Oui, avec Chronopost en 48 heures."),
]


def choice(referent: str) -> str:
    return json.dumps({"referent": referent}, ensure_ascii=False)


# -- the choice prompt -------------------------------------------------------------------


def test_choice_schema_only_allows_the_candidates_or_none() -> None:
    fmt = choice_format(["Dell XPS 15", "Marseille"])
    prop = fmt["json_schema"]["schema"]["properties"]["referent"]
    assert prop["enum"] == ["Dell XPS 15", "Marseille", "none"]


def test_choice_prompt_prefix_is_fixed_and_request_lists_candidates() -> None:
    a = build_choice_messages("Et sa garantie ?", FAR, ["Chronopost", "Dell XPS 15"])
    b = build_choice_messages("Il coûte combien ?", TWO, ["MacBook Air M2"])
    assert isinstance(a[0], SystemMessage) and a[0].content == b[0].content
    assert a[0].content == CHOICE_SYSTEM_PROMPT
    assert "Candidates: Chronopost | Dell XPS 15 | none" in a[1].content
    assert str(a[1].content).endswith("Question: Et sa garantie ?\nJSON:")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"referent": "Dell XPS 15"}', "Dell XPS 15"),
        ('{"referent": "DELL xps 15"}', "Dell XPS 15"),
        ("Dell XPS 15", "Dell XPS 15"),
        ('Sure: {"referent": "none"}', ""),
    ],
)
def test_parse_choice_accepts_candidates_only(raw: str, expected: str) -> None:
    assert parse_choice(raw, ["Marseille", "Dell XPS 15"]) == expected


def test_parse_choice_rejects_an_invented_name() -> None:
    with pytest.raises(MalformedOutputError, match="not one of the candidates"):
        parse_choice('{"referent": "Lenovo"}', ["Dell XPS 15"])


def test_choice_examples_do_not_leak_into_the_evaluation_sets() -> None:
    for path in (DEV_DATASET, FAR_DATASET):
        for row in read_jsonl(path):
            assert row["question"] not in CHOICE_SYSTEM_PROMPT
            for _, text in row["history"]:
                assert text not in CHOICE_SYSTEM_PROMPT


# -- templates ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Quelle est la garantie du second ?", "MacBook Air M2"),
        ("Le premier a-t-il une carte graphique ?", "HP Pavilion 14"),
        ("Et la batterie du dernier ?", "MacBook Air M2"),
        ("Quelle est sa garantie ?", ""),
    ],
)
def test_ordinal_referent_counts_in_the_listing_turn(question: str, expected: str) -> None:
    candidates = ["MacBook Air M2", "HP Pavilion 14"]
    assert ordinal_referent(question, TWO, candidates) == expected


@pytest.mark.parametrize(
    ("question", "referent", "expected"),
    [
        ("Quelle est sa garantie ?", "Dell XPS 15", "Quelle est la garantie de Dell XPS 15 ?"),
        (
            "Elle vaut combien, sa carte graphique ?",
            "ASUS ROG Strix G15",
            "Elle vaut combien, la carte graphique d'ASUS ROG Strix G15 ?",
        ),
        ("Le premier a-t-il une RTX ?", "HP Pavilion 14", "Le HP Pavilion 14 a-t-il une RTX ?"),
        ("Comment y aller ?", "Porto", "Comment aller à Porto ?"),
        ("Il fait froid là-bas ?", "Cracovie", "Il fait froid à Cracovie ?"),
        ("Combien coûtent ces cours ?", "Pilates", "Combien coûtent les cours Pilates ?"),
        ("Does that one read EPUB?", "Kobo Clara 2E", "Does the Kobo Clara 2E read EPUB?"),
        ("Is it cold there?", "Oslo", "Is it cold in Oslo?"),
        ("Et côté garantie ?", "Dell XPS 15", "Et côté garantie de Dell XPS 15 ?"),
        ("À partir de quel montant ?", "Alma", "À partir de quel montant ? (Alma)"),
        ("Quel est le prix du Dell XPS 15 ?", "Dell XPS 15", "Quel est le prix du Dell XPS 15 ?"),
    ],
)
def test_template_rewrite(question: str, referent: str, expected: str) -> None:
    assert template_rewrite(question, referent) == expected


@pytest.mark.parametrize(
    ("question", "turns", "expected"),
    [
        (
            "Et à Cracovie ?",
            [("user", "Se déplacer à Séville, c'est facile ?"), ("assistant", "Oui.")],
            "Se déplacer à Cracovie, c'est facile ?",
        ),
        (
            "What about the PocketBook?",
            [("user", "How long does the Kindle Paperwhite battery last?")],
            "How long does the PocketBook battery last?",
        ),
        (
            "Et pour le samedi ?",
            [("user", "Quels sont les horaires du cours de Pilates ?")],
            "Quels sont les horaires du cours de Pilates pour le samedi ?",
        ),
        # The previous question was a follow-up: the new name takes its reference.
        (
            "Et compare à celui de Lenovo ?",
            [("user", "Quelle est sa garantie ?"), ("assistant", "2 ans.")],
            "Quelle est la garantie de Lenovo ?",
        ),
        (
            "Et comparé au Lenovo ?",
            [("user", "Quelle est sa garantie ?")],
            "Quelle est la garantie de Lenovo ?",
        ),
        # The previous question is not standalone, or the focus is not a name: the model.
        ("Et pour le samedi ?", [("user", "Il coûte combien ?")], None),
        ("Et la carte graphique ?", [("user", "Quel est le prix du Dell XPS 15 ?")], None),
    ],
)
def test_ellipsis_rewrite(question: str, turns: list[tuple[str, str]], expected: str) -> None:
    assert ellipsis_rewrite(question, turns, []) == expected


# -- the strategy in QueryRewriter -------------------------------------------------------


def test_rules_settle_what_they_can_without_a_model_call() -> None:
    llm = ScriptedChatModel()
    rw = QueryRewriter(llm)
    single = rw.rewrite("Quelle est sa garantie ?", [("user", "Le Dell XPS 15 est-il léger ?")])
    ordinal = rw.rewrite("Quelle est la garantie du second ?", TWO)
    assert (single.method, single.standalone) == (
        "template",
        "Quelle est la garantie de Dell XPS 15 ?",
    )
    assert ordinal.standalone == "Quelle est la garantie du MacBook Air M2 ?"
    assert single.model_calls == ordinal.model_calls == 0 and llm.calls == []


def test_an_elliptic_noun_keeps_the_thing_the_user_last_named_without_a_call() -> None:
    # The answer names the processor and the GPU on the way; the user's thread is the laptop.
    llm = ScriptedChatModel()
    history = [
        ("user", "Parle-moi de l'ASUS ROG Strix G15."),
        ("assistant", "Un PC gamer avec un AMD Ryzen 7 7735HS et une NVIDIA GeForce RTX 4060."),
    ]
    result = QueryRewriter(llm).rewrite("Et la carte graphique ?", history)
    assert result.method == "template" and llm.calls == []
    assert "ASUS ROG Strix G15" in result.standalone
    assert "Ryzen" not in result.standalone and "RTX" not in result.standalone


@pytest.mark.parametrize(
    ("question", "last_user"),
    [
        ("Et celui de Lenovo ?", "Parle-moi de l'ASUS ROG Strix G15."),  # names its own
        ("Et pour le samedi ?", "Parle-moi de l'ASUS ROG Strix G15."),  # "pour": the ellipsis rule
        ("Quelle est sa garantie ?", "Parle-moi de l'ASUS ROG Strix G15."),  # not elliptic
        ("Et la garantie ?", "Compare l'ASUS ROG Strix G15 et le MSI Katana 15."),  # two names
        ("Et la garantie ?", "Et les portables gamer ?"),  # the user named nothing
        ("Et sa garantie ?", "Parle-moi de l'ASUS ROG Strix G15."),  # a possessive
        ("Et il coûte combien ?", "Parle-moi de l'ASUS ROG Strix G15."),  # a pronoun
        ("Et la garantie ?", "Vous livrez le MSI Katana 15 ?"),  # not the subject
    ],
)
def test_continued_name_leaves_the_other_cases_alone(question: str, last_user: str) -> None:
    turns = [("user", last_user), ("assistant", "Le MSI Katana 15 et l'ASUS ROG Strix G15.")]
    usable = ["ASUS ROG Strix G15", "MSI Katana 15"]
    assert continued_name(question, turns, usable, ["ASUS ROG Strix G15"]) == ""


def test_a_question_naming_its_own_subject_never_takes_another_candidate() -> None:
    # "Et celle du Lenovo ?" after two follow-ups about the Dell: the Dell is the only
    # other candidate, yet it is not what the question is about.
    llm = ScriptedChatModel()
    history = [
        ("user", "Je cherche le Dell XPS 15, vous l'avez ?"),
        ("assistant", "Oui, le Dell XPS 15 est en stock."),
        ("user", "Quelle est sa garantie ?"),
        ("assistant", "Deux ans."),
    ]
    result = QueryRewriter(llm).rewrite("Et celle du Lenovo ?", history)
    assert result.standalone == "Quelle est la garantie de Lenovo ?"
    assert "Dell" not in result.standalone and llm.calls == []


def test_the_model_only_picks_the_referent() -> None:
    llm = ScriptedChatModel(replies=[choice("Dell XPS 15")])
    result = QueryRewriter(llm).rewrite("Et sa garantie, elle dure combien ?", FAR)
    assert result.method == "model" and result.model_calls == 1 and result.error is None
    assert result.standalone == "Et la garantie de Dell XPS 15, elle dure combien ?"
    request = llm.calls[0][-1].content
    assert "Candidates: Chronopost | Marseille | Dell XPS 15 | none" in request


def test_a_lone_name_from_the_assistant_is_checked_by_the_model() -> None:
    llm = ScriptedChatModel(replies=[choice("Camille")])
    history = [("user", "Qui anime le yoga ?"), ("assistant", "Camille, le lundi.")]
    result = QueryRewriter(llm).rewrite("Faut-il apporter son tapis ?", history)
    assert result.model_calls == 1 and "Camille" in result.standalone


def test_none_falls_through_to_the_free_rewrite() -> None:
    free = json.dumps({"referent": "", "standalone_question": "Combien coûte le yoga ?"})
    llm = ScriptedChatModel(replies=[choice("none"), free])
    result = QueryRewriter(llm).rewrite("Et il coûte combien ?", FAR)
    assert (result.method, result.standalone, result.model_calls) == (
        "model",
        "Combien coûte le yoga ?",
        2,
    )
    assert "chose no candidate" in (result.error or "")
    assert "Follow-up question:" in llm.calls[1][-1].content  # the free prompt


def test_an_invented_choice_falls_through_to_the_free_rewrite() -> None:
    free = json.dumps({"referent": "Dell XPS 15", "standalone_question": "Le Dell XPS 15 ?"})
    llm = ScriptedChatModel(replies=[choice("Lenovo"), free])
    result = QueryRewriter(llm).rewrite("Et il coûte combien ?", FAR)
    assert result.model_calls == 2 and "not one of the candidates" in (result.error or "")


def test_a_failed_choice_call_falls_back_without_a_second_call() -> None:
    llm = ScriptedChatModel(replies=[ModelCallError("server down")])
    result = QueryRewriter(llm).rewrite("Et il coûte combien ?", FAR)
    assert (result.method, result.model_calls, len(llm.calls)) == ("fallback", 1, 1)
    assert "server down" in (result.error or "")


def test_no_candidate_goes_straight_to_the_free_rewrite() -> None:
    free = json.dumps({"referent": "aquagym", "standalone_question": "Combien coûte l'aquagym ?"})
    llm = ScriptedChatModel(replies=[free])
    history = [("user", "Vous avez de l'aquagym ?"), ("assistant", "Oui, le mercredi.")]
    result = QueryRewriter(llm).rewrite("Combien coûtent ces cours ?", history)
    assert (result.standalone, result.model_calls) == ("Combien coûte l'aquagym ?", 1)


class _CountingModel(ScriptedChatModel):
    """Reports ``usage_metadata`` like the embedded model does."""

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        text = self._next_text(messages)
        usage = {"input_tokens": 100, "output_tokens": 7, "total_tokens": 107}
        message = AIMessage(content=text, usage_metadata=usage)
        return ChatResult(generations=[ChatGeneration(message=message)])


def test_output_tokens_are_counted_over_calls() -> None:
    free = json.dumps({"referent": "", "standalone_question": "Combien coûte le yoga ?"})
    llm = _CountingModel(replies=[choice("none"), free])
    assert QueryRewriter(llm).rewrite("Et il coûte combien ?", FAR).output_tokens == 14


async def test_async_choice_matches_sync() -> None:
    sync = QueryRewriter(ScriptedChatModel(replies=[choice("Dell XPS 15")]))
    asyn = QueryRewriter(ScriptedChatModel(replies=[choice("Dell XPS 15")]))
    a = sync.rewrite("Et sa garantie ?", FAR)
    b = await asyn.arewrite("Et sa garantie ?", FAR)
    assert (a.standalone, a.method, a.model_calls) == (b.standalone, b.method, b.model_calls)


def test_unknown_strategy_is_rejected() -> None:
    with pytest.raises(InvalidInputError, match="strategy"):
        QueryRewriter(ScriptedChatModel(), strategy="magic")  # type: ignore[arg-type]


# -- entity memory -----------------------------------------------------------------------


def tracker_for(history: list[tuple[str, str]]) -> EntityTracker:
    return feed_history(EntityTracker(RuleEntityExtractor(use_spacy=False)), history)


def test_question_type() -> None:
    assert question_type("Et sa garantie, elle dure combien de temps ?") == "PRODUCT"
    assert question_type("Comment se déplacer là-bas ?") == "LOCATION"
    assert question_type("Who coached him?") == "PERSON"
    assert question_type("Et ensuite ?") == ""


def test_entity_hints_put_the_asked_type_first() -> None:
    hints = entity_hints(tracker_for(FAR), "Quelle est sa garantie ?")
    assert hints[0] == "Dell XPS 15"
    assert set(hints) >= {"Marseille", "Chronopost"}


def test_entity_hints_leave_out_dates_and_amounts() -> None:
    history = [("user", "Le Dell XPS 15 coûte 1599 euros ?"), ("assistant", "Oui, le 3 mars.")]
    hints = entity_hints(tracker_for(history), "Et sa garantie ?")
    assert hints == ["Dell XPS 15"]


def test_entity_hints_reach_beyond_the_history_window() -> None:
    long = [
        ("user", "Vous livrez à Marseille ?"),  # the opening names no laptop
        ("assistant", "Oui, avec Chronopost en 48 heures."),
        ("user", "Je m'intéresse à l'ASUS ROG Strix G15."),
        ("assistant", "C'est notre portable de jeu le plus vendu."),
        *FAR[2:] * 2,
    ]
    question = "Quelle carte graphique a-t-il ?"
    hints = entity_hints(tracker_for(long), question)
    name = next(h for h in hints if "ROG" in h)
    blind = ScriptedChatModel(replies=[choice("Chronopost")])
    without = QueryRewriter(blind, max_history_turns=4).rewrite(question, long)
    informed = ScriptedChatModel(replies=[choice(name)])
    with_memory = QueryRewriter(informed, max_history_turns=4).rewrite(
        question, long, entities=hints
    )
    assert "ROG" not in blind.calls[0][-1].content
    assert name in informed.calls[0][-1].content  # offered, after the window's names
    assert "ROG Strix G15" in with_memory.standalone
    assert "ROG" not in without.standalone


def test_the_opening_subject_reaches_beyond_the_history_window() -> None:
    long = [
        ("user", "Je m'intéresse à l'ASUS ROG Strix G15."),
        ("assistant", "C'est notre portable de jeu le plus vendu."),
        *FAR[2:] * 2,
    ]
    question = "Quelle carte graphique a-t-il ?"
    llm = ScriptedChatModel(replies=[choice("ASUS ROG Strix G15")])
    result = QueryRewriter(llm, max_history_turns=4).rewrite(question, long)
    offered = llm.calls[0][-1].content
    assert "ASUS ROG Strix G15" in offered  # offered, after the window's names
    assert offered.index("Chronopost") < offered.index("ASUS ROG Strix G15")
    assert "ASUS ROG Strix G15" in result.standalone
    off = QueryRewriter(use_model=False, max_history_turns=4).rewrite(question, long)
    assert off.model_calls == 0


def test_the_opening_subject_alone_is_settled_without_the_model() -> None:
    long = [
        ("user", "Parlez-moi du cours de Pilates Reformer."),
        ("assistant", "Il a lieu le mardi."),
        *[("user", "Faut-il réserver ?"), ("assistant", "Oui, la veille.")] * 3,
    ]
    llm = ScriptedChatModel(replies=[])
    result = QueryRewriter(llm, max_history_turns=4).rewrite("Quel est son tarif ?", long)
    assert llm.calls == [] and result.method == "template"
    assert result.standalone == "Quel est le tarif de Pilates Reformer ?"


def test_a_person_is_found_by_mentions_over_the_whole_conversation() -> None:
    history = [
        ("user", "Harold Shipman"),
        ("assistant", "Shipman was an English doctor."),
        ("user", "Where was Shipman held?"),
        ("assistant", "Shipman was held in Wakefield Prison."),
        ("user", "Did anyone visit?"),
        ("assistant", "John Smith visited."),
        ("user", "When?"),
        ("assistant", "Often, at Wakefield Prison."),
    ]
    rewriter = QueryRewriter(use_model=False, max_history_turns=4)
    result = rewriter.rewrite("What happened after his death?", history)
    assert result.standalone == "What happened after Harold Shipman's death?"


def test_entity_source_and_bad_memory() -> None:
    source = entity_source(tracker_for(FAR), k=1)
    assert source("Quelle est sa garantie ?") == ["Dell XPS 15"]
    with pytest.raises(InvalidInputError, match="EntityTracker"):
        entity_hints(object(), "Et sa garantie ?")
    with pytest.raises(InvalidInputError, match="k must be"):
        entity_hints(tracker_for(FAR), "Et sa garantie ?", k=0)


def test_evaluation_feeds_an_entity_memory_per_item() -> None:
    made: list[EntityTracker] = []

    def memory() -> EntityTracker:
        made.append(EntityTracker(RuleEntityExtractor(use_spacy=False)))
        return made[-1]

    rw = QueryRewriter(use_model=False)
    report = evaluate_rewrites(
        DEV_CORPUS, FAR_DATASET, rw, HashEmbeddings(), k=3, entity_memory=memory
    )
    rows = read_jsonl(FAR_DATASET)
    assert report["n"] == len(rows) == len(made) >= 15
    assert all(item["entities"] for item in report["items"])
    assert report["model_calls_per_item"] == 0.0  # use_model=False: rules and fallback


def test_far_set_is_consistent() -> None:
    corpus_ids = {row["id"] for row in read_jsonl(DEV_CORPUS)}
    rows = read_jsonl(FAR_DATASET)
    assert all(row["gold_doc"] in corpus_ids and row["must_mention"] for row in rows)
    for row in rows:
        # The referent is named more than one exchange back, not in the last exchange.
        last = " ".join(text for _, text in row["history"][-2:]).lower()
        assert len(row["history"]) >= 4
        assert all(m.lower() not in last for m in row["must_mention"]), row["id"]


def test_build_chain_feeds_an_entity_memory_to_the_rewriter_by_default() -> None:
    from langchain_classic.memory import CombinedMemory
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever

    from memory_chains.entities import EntityMemory
    from memory_chains.memory import BufferMemory
    from memory_chains.rag import ConversationalRAG, build_chain

    class Fixed(BaseRetriever):
        def _get_relevant_documents(self, query: str, *, run_manager: Any = None) -> Any:
            return [Document(page_content="Garantie : 2 ans.", metadata={"source": "kb.md"})]

    class Recording:
        def __init__(self) -> None:
            self.entities: list[tuple[str, ...]] = []

        def rewrite(self, question: str, history: Any, *, entities: Any = ()) -> Any:
            self.entities.append(tuple(entities))
            return type("R", (), {"standalone": question})()

        async def arewrite(self, question: str, history: Any, *, entities: Any = ()) -> Any:
            return self.rewrite(question, history, entities=entities)

    entity_memory = EntityMemory(extractor=RuleEntityExtractor(use_spacy=False))
    buffer = BufferMemory()
    rewriter = Recording()
    llm = ScriptedChatModel(default="Deux ans.")
    memory = CombinedMemory(memories=[buffer, entity_memory])
    rag = ConversationalRAG(build_chain(Fixed(), llm=llm, memory=memory, rewriter=rewriter))
    rag.ask("Je regarde le Dell XPS 15.")
    rag.ask("Vous livrez à Marseille ?")
    rag.ask("Quelle est sa garantie ?")
    assert rewriter.entities[-1][0] == "Dell XPS 15"
