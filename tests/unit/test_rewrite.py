"""QueryRewriter's free rewrite with a scripted model: skipping, repairing, rejecting, falling
back."""

from __future__ import annotations

import functools
import json

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from memory_chains.errors import InvalidInputError, ModelCallError
from memory_chains.rewrite import QueryRewriter, RewriteResult, fallback_rewrite
from memory_chains.testing import ScriptedChatModel

# These tests cover the free rewrite (the model writes the whole question);
# tests/unit/test_rewrite_choice.py covers the default "choice" strategy.
FreeRewriter = functools.partial(QueryRewriter, strategy="free")

HISTORY = [
    ("human", "Je cherche un portable pour jouer."),
    ("ai", "Je vous conseille l'ASUS ROG Strix G15."),
]
GOOD = {
    "referent": "ASUS ROG Strix G15",
    "question": "Quelle est la carte graphique de l'ASUS ROG Strix G15 ?",
}


def answer(payload: dict[str, str]) -> str:
    return json.dumps(payload, ensure_ascii=False)


def test_standalone_question_makes_no_model_call() -> None:
    llm = ScriptedChatModel(replies=[answer(GOOD)])
    result = FreeRewriter(llm).rewrite("Quel est le prix du Dell XPS 15 ?", HISTORY)
    assert result.method == "unchanged"
    assert result.standalone == "Quel est le prix du Dell XPS 15 ?"
    assert result.model_calls == 0 and result.error is None
    assert result.queries == ("Quel est le prix du Dell XPS 15 ?",)
    assert llm.calls == []


@pytest.mark.parametrize(
    "question",
    [
        "Quelle est la politique de retour du magasin ?",
        "Comment se déplacer à Édimbourg ?",
        "What is the warranty of the Dell XPS 15?",
        "Is there a gym in Lyon?",
    ],
)
def test_topic_changes_stay_unchanged(question: str) -> None:
    llm = ScriptedChatModel()
    result = FreeRewriter(llm).rewrite(question, HISTORY)
    assert (result.method, result.standalone, len(llm.calls)) == ("unchanged", question, 0)


def test_empty_history_makes_no_model_call() -> None:
    llm = ScriptedChatModel()
    result = FreeRewriter(llm).rewrite("Et la carte graphique ?", [])
    assert result.method == "unchanged" and llm.calls == []


def test_follow_up_uses_the_model_rewrite() -> None:
    llm = ScriptedChatModel(replies=[answer(GOOD)])
    result = FreeRewriter(llm).rewrite("Et la carte graphique ?", HISTORY)
    assert result.method == "model"
    assert result.standalone == GOOD["question"]
    assert result.queries[0] == result.standalone
    assert result.model_calls == 1 and result.error is None
    assert len(llm.calls) == 1


def test_prompt_has_fixed_prefix_and_candidates() -> None:
    llm = ScriptedChatModel(replies=[answer(GOOD), answer(GOOD)])
    rw = FreeRewriter(llm)
    rw.rewrite("Et la carte graphique ?", HISTORY)
    rw.rewrite("Et sa garantie ?", [("user", "Le Dell XPS 15 est-il léger ?"), ("ai", "Oui.")])
    first, second = llm.calls
    assert isinstance(first[0], SystemMessage) and first[0].content == second[0].content
    assert "Entities: ASUS ROG Strix G15" in first[-1].content
    assert first[:-1] == second[:-1]  # instructions + few-shot: an identical, cacheable prefix
    assert "\nFollow-up question: Et la carte graphique ?" in first[-1].content
    assert "Dell XPS 15" in second[-1].content


def test_entity_hints_follow_the_names_of_the_history() -> None:
    # An entity memory reaches names that left the window; the recent ones stay first
    # (`memory-chains eval rewrite --set far --entities rules`: hints first drowned them).
    llm = ScriptedChatModel(replies=[answer(GOOD)])
    FreeRewriter(llm).rewrite("Et la carte graphique ?", HISTORY, entities=["MSI Katana 15"])
    assert "Entities: ASUS ROG Strix G15; MSI Katana 15" in llm.calls[0][-1].content


@pytest.mark.parametrize(
    "raw",
    [
        "```json\n" + answer(GOOD) + "\n```",
        "Voici la réponse : " + answer(GOOD) + " J'espère que cela aide.",
        json.dumps(GOOD["question"], ensure_ascii=False),
        GOOD["question"],
        "Question: " + GOOD["question"],
    ],
)
def test_malformed_answers_are_repaired(raw: str) -> None:
    result = FreeRewriter(ScriptedChatModel(replies=[raw])).rewrite(
        "Et la carte graphique ?", HISTORY
    )
    assert result.method == "model", result.error
    assert result.standalone == GOOD["question"]


def test_unrepairable_json_falls_back_with_error() -> None:
    llm = ScriptedChatModel(replies=['{"referent": "ASUS", "question": '])
    result = FreeRewriter(llm).rewrite("Et la carte graphique ?", HISTORY)
    assert result.method == "fallback"
    assert result.standalone == "Et la carte graphique ? (ASUS ROG Strix G15)"
    assert result.error is not None and "JSON" in result.error
    assert result.model_calls == 1


def test_answer_instead_of_question_is_rejected() -> None:
    reply = answer(
        {"referent": "ASUS ROG Strix G15", "question": "L'ASUS ROG Strix G15 a une RTX 4070."}
    )
    result = FreeRewriter(ScriptedChatModel(replies=[reply])).rewrite(
        "Et la carte graphique ?", HISTORY
    )
    assert result.method == "fallback"
    assert result.error is not None and "answer" in result.error
    assert "RTX 4070" in result.error  # the rejected text is kept, not silently dropped
    assert "ASUS ROG Strix G15" in result.standalone


def test_invented_facts_are_rejected() -> None:
    reply = answer(
        {"referent": "", "question": "La carte graphique de 8 Go de l'ASUS ROG Strix G15 ?"}
    )
    result = FreeRewriter(ScriptedChatModel(replies=[reply])).rewrite(
        "Et la carte graphique ?", HISTORY
    )
    assert result.method == "fallback" and "facts" in (result.error or "")


def test_language_switch_is_rejected() -> None:
    reply = answer(
        {"referent": "", "question": "What is the graphics card of the ASUS ROG Strix G15?"}
    )
    result = FreeRewriter(ScriptedChatModel(replies=[reply])).rewrite(
        "Et la carte graphique ?", HISTORY
    )
    assert result.method == "fallback" and "language" in (result.error or "")


def test_lost_focus_words_are_rejected() -> None:
    reply = answer({"referent": "", "question": "Quel est le prix de l'ASUS ROG Strix G15 ?"})
    result = FreeRewriter(ScriptedChatModel(replies=[reply])).rewrite(
        "Et la carte graphique ?", HISTORY
    )
    assert result.method == "fallback" and "focus" in (result.error or "")


def test_absurdly_long_rewrite_is_rejected() -> None:
    reply = answer(
        {"referent": "", "question": "Quelle est la carte graphique " + "très " * 60 + "?"}
    )
    result = FreeRewriter(ScriptedChatModel(replies=[reply])).rewrite(
        "Et la carte graphique ?", HISTORY
    )
    assert result.method == "fallback" and "too long" in (result.error or "")


def test_copied_question_with_unresolved_pronoun_falls_back() -> None:
    reply = answer({"referent": "", "question": "Quelle est sa garantie ?"})
    result = FreeRewriter(ScriptedChatModel(replies=[reply])).rewrite(
        "Quelle est sa garantie ?", HISTORY
    )
    assert result.method == "fallback"
    assert result.standalone == "Quelle est la garantie d'ASUS ROG Strix G15 ?"
    assert "unresolved" in (result.error or "")


def test_empty_answer_falls_back() -> None:
    result = FreeRewriter(ScriptedChatModel(replies=[""])).rewrite(
        "Et la carte graphique ?", HISTORY
    )
    assert result.method == "fallback" and result.error


def test_model_exception_falls_back_and_is_recorded() -> None:
    llm = ScriptedChatModel(replies=[ModelCallError("llama.cpp crashed")])
    result = FreeRewriter(llm).rewrite("Et la carte graphique ?", HISTORY)
    assert result.method == "fallback"
    assert result.error == "model call failed: ModelCallError: llama.cpp crashed"
    assert result.model_calls == 1


def test_use_model_false_never_calls_the_model() -> None:
    llm = ScriptedChatModel(replies=[answer(GOOD)])
    result = FreeRewriter(llm, use_model=False).rewrite("Et la carte graphique ?", HISTORY)
    assert result.method == "fallback" and result.model_calls == 0 and llm.calls == []


def test_history_formats_are_equivalent() -> None:
    as_messages = [HumanMessage(content=HISTORY[0][1]), AIMessage(content=HISTORY[1][1])]
    as_openai_roles = [("user", HISTORY[0][1]), ("assistant", HISTORY[1][1])]
    prompts = []
    for history in (HISTORY, as_messages, as_openai_roles):
        llm = ScriptedChatModel(replies=[answer(GOOD)])
        FreeRewriter(llm).rewrite("Et la carte graphique ?", history)
        prompts.append(llm.calls[0][-1].content)
    assert prompts[0] == prompts[1] == prompts[2]


def test_history_is_not_mutated() -> None:
    history = [list(turn) for turn in HISTORY]
    snapshot = [list(turn) for turn in history]
    FreeRewriter(ScriptedChatModel(replies=[answer(GOOD)])).rewrite(
        "Et la carte graphique ?", history
    )
    assert history == snapshot


def test_max_history_turns_keeps_the_latest() -> None:
    history = [("user", f"Question numéro {i} sur le Modèle{i}") for i in range(10)]
    llm = ScriptedChatModel(replies=[answer(GOOD)])
    FreeRewriter(llm, max_history_turns=2).rewrite("Et sa garantie ?", history)
    request = llm.calls[0][-1].content
    assert "numéro 9" in request and "numéro 8" in request and "numéro 7" not in request


@pytest.mark.parametrize(
    "bad_history",
    ["User: bonjour", [("robot", "bip")], [("user",)], [42]],
)
def test_bad_history_is_a_typed_error(bad_history: object) -> None:
    with pytest.raises(InvalidInputError):
        FreeRewriter(ScriptedChatModel()).rewrite("Et sa garantie ?", bad_history)  # type: ignore[arg-type]


@pytest.mark.parametrize("question", ["", "   "])
def test_empty_question_is_a_typed_error(question: str) -> None:
    with pytest.raises(InvalidInputError, match="non-empty"):
        FreeRewriter(ScriptedChatModel()).rewrite(question, HISTORY)


@pytest.mark.parametrize(
    "kwargs",
    [{"max_history_turns": 0}, {"n_queries": 0}, {"n_queries": 4}, {"language_hint": "de"}],
)
def test_bad_arguments_are_typed_errors(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidInputError):
        FreeRewriter(ScriptedChatModel(), **kwargs)  # type: ignore[arg-type]


def test_multi_query_order_and_count() -> None:
    rw = FreeRewriter(ScriptedChatModel(replies=[answer(GOOD)]), n_queries=3)
    result = rw.rewrite("Et la carte graphique ?", HISTORY)
    assert result.queries == (
        GOOD["question"],
        "Je cherche un portable pour jouer. Et la carte graphique ?",
        "Et la carte graphique ? (ASUS ROG Strix G15)",
    )


def test_multi_query_not_used_for_standalone_questions() -> None:
    rw = FreeRewriter(ScriptedChatModel(), n_queries=3)
    assert len(rw.rewrite("Quel est le prix du Dell XPS 15 ?", HISTORY).queries) == 1


async def test_async_path_gives_the_same_result() -> None:
    replies = [answer(GOOD), "not json {", ModelCallError("boom")]
    sync_llm = ScriptedChatModel(replies=list(replies))
    async_llm = ScriptedChatModel(replies=list(replies))
    questions = [
        "Et la carte graphique ?",
        "Et sa garantie ?",
        "Et son poids ?",
        "Quel est le prix du Dell XPS 15 ?",
    ]
    for question in questions:
        a = FreeRewriter(sync_llm).rewrite(question, HISTORY)
        b = await FreeRewriter(async_llm).arewrite(question, HISTORY)
        assert (a.standalone, a.method, a.queries, a.model_calls, a.error) == (
            b.standalone,
            b.method,
            b.queries,
            b.model_calls,
            b.error,
        )
    assert [m.content for c in sync_llm.calls for m in c] == [
        m.content for c in async_llm.calls for m in c
    ]


def test_result_is_frozen() -> None:
    result = FreeRewriter(use_model=False).rewrite("Et sa garantie ?", HISTORY)
    assert isinstance(result, RewriteResult)
    with pytest.raises(AttributeError):
        result.standalone = "x"  # type: ignore[misc]


def test_fallback_without_names_uses_last_user_turn() -> None:
    turns = [("user", "Vous faites des cours de natation ?"), ("assistant", "oui")]
    assert (
        fallback_rewrite("Combien ?", [], turns)
        == "Combien ? (Vous faites des cours de natation ?)"
    )


def test_copied_question_uses_the_model_referent_when_grounded() -> None:
    history = [("user", "Je compare le Dell XPS 15 et l'ASUS ROG Strix G15."), ("ai", "Bien.")]
    for referent, expected in [
        ("Dell XPS 15", "Quelle est la garantie de Dell XPS 15 ?"),
        # not in the conversation: ignored, the most recent candidate is used
        ("Apple MacBook", "Quelle est la garantie d'ASUS ROG Strix G15 ?"),
    ]:
        reply = answer({"referent": referent, "question": "Quelle est sa garantie ?"})
        result = FreeRewriter(ScriptedChatModel(replies=[reply])).rewrite(
            "Quelle est sa garantie ?", history
        )
        assert result.method == "fallback"
        assert result.standalone == expected
        assert result.error


def test_copy_with_only_punctuation_changes_is_unresolved() -> None:
    history = [
        ("user", "P. G. Wodehouse"),
        ("user", "Film work"),
        ("assistant", "He wrote scripts."),
    ]
    reply = answer({"referent": "", "question": "What else did he do film wise?"})
    result = FreeRewriter(ScriptedChatModel(replies=[reply])).rewrite(
        "What else did he do film wise", history
    )
    assert result.method == "fallback" and "unresolved" in (result.error or "")


@pytest.mark.parametrize(
    ("question", "candidates", "expected"),
    [
        ("Quelle est sa garantie ?", ["Dell XPS 15"], "Quelle est la garantie de Dell XPS 15 ?"),
        ("Combien pèse-t-il ?", ["Dell XPS 15"], "Combien pèse Dell XPS 15 ?"),
        ("Il fait froid là-bas ?", ["Cracovie"], "Il fait froid à Cracovie ?"),
        ("What is its price?", ["Kobo Clara 2E"], "What is Kobo Clara 2E's price?"),
        ("Did she win?", ["Wimbledon", "Serena Williams"], "Did Serena Williams win?"),
        ("Who trained her?", ["Serena Williams"], "Who trained Serena Williams?"),
        # the name already in the question is not the referent
        (
            "Did he play for the Lakers?",
            ["Lakers", "Kareem Abdul"],
            "Did Kareem Abdul play for the Lakers?",
        ),
    ],
)
def test_fallback_substitutes_the_referent(
    question: str, candidates: list[str], expected: str
) -> None:
    assert fallback_rewrite(question, candidates, []) == expected


def test_person_pronoun_prefers_the_recurring_person() -> None:
    turns = [
        ("user", "Phil Lesh"),
        ("user", "Early life"),
        ("user", "Where did he study?"),
        ("assistant", "Lesh studied at Berkeley High School, where Lesh played trumpet."),
    ]
    assert fallback_rewrite("Did he graduate?", ["Berkeley High School", "Phil Lesh"], turns) == (
        "Did Phil Lesh graduate?"
    )


def test_ellipsis_naming_its_subject_borrows_the_previous_question() -> None:
    turns = [("user", "Se déplacer à Séville, c'est facile ?"), ("assistant", "Oui, à pied.")]
    assert fallback_rewrite("Et à Cracovie ?", ["Séville"], turns) == (
        "Et à Cracovie ? (Se déplacer à , c'est facile ?)"
    )
    # without a name of its own, the ellipsis gets the referent
    assert fallback_rewrite("Et la carte graphique ?", ["ASUS ROG Strix G15"], turns) == (
        "Et la carte graphique ? (ASUS ROG Strix G15)"
    )
