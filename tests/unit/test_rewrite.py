"""QueryRewriter with a scripted model: skipping, verifying, repairing, falling back to rules."""

from __future__ import annotations

import asyncio
import json

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from memory_chains.errors import InvalidInputError, ModelCallError
from memory_chains.rewrite import QueryRewriter, RewriteResult
from memory_chains.rewrite._prompt import FIXED_MESSAGES
from memory_chains.testing import ScriptedChatModel

HISTORY = [
    ("human", "Je cherche un portable pour jouer."),
    ("ai", "Je vous conseille l'ASUS ROG Strix G15."),
]
GOOD = "Quelle est la carte graphique de l'ASUS ROG Strix G15 ?"


def answer(question: str) -> str:
    return json.dumps({"question": question}, ensure_ascii=False)


def rewrite(reply: str, question: str = "Et sa carte graphique ?", history=HISTORY, **kw):
    llm = ScriptedChatModel(replies=[reply])
    return QueryRewriter(llm, **kw).rewrite(question, history), llm


def test_standalone_question_makes_no_model_call() -> None:
    llm = ScriptedChatModel(replies=[answer(GOOD)])
    result = QueryRewriter(llm).rewrite("Quel est le prix du Dell XPS 15 ?", HISTORY)
    assert (result.method, result.model_calls, result.error) == ("unchanged", 0, None)
    assert result.standalone == result.original == "Quel est le prix du Dell XPS 15 ?"
    assert result.queries == ("Quel est le prix du Dell XPS 15 ?",)
    assert llm.calls == []


def test_empty_history_makes_no_model_call() -> None:
    llm = ScriptedChatModel()
    result = QueryRewriter(llm).rewrite("Et sa carte graphique ?", [])
    assert result.method == "unchanged" and llm.calls == []


@pytest.mark.parametrize(
    "question",
    ["Faut-il un dépôt de garantie ?", "C'est quoi le minimum ?", "Is there a waiting period?"],
)
def test_a_question_that_names_nothing_goes_to_the_model(question: str) -> None:
    result, llm = rewrite(answer(question), question)
    assert result.model_calls == 1 and len(llm.calls) == 1


def test_the_model_writes_the_question() -> None:
    result, _ = rewrite(answer(GOOD))
    assert (result.standalone, result.method, result.model_calls) == (GOOD, "model", 1)
    assert result.error is None and result.rewritten
    assert result.queries[0] == GOOD


def test_prompt_is_the_fixed_prefix_then_the_conversation() -> None:
    _, llm = rewrite(answer(GOOD))
    messages = llm.calls[0]
    assert tuple(messages[: len(FIXED_MESSAGES)]) == FIXED_MESSAGES
    assert isinstance(messages[0], SystemMessage)
    request = messages[-1]
    assert isinstance(request, HumanMessage)
    assert "ASUS ROG Strix G15" in request.content
    assert request.content.endswith("Message: Et sa carte graphique ?")


def test_the_conversations_names_are_listed_for_the_model() -> None:
    history = [
        ("user", "Je compare le Dell XPS 15 et le Lenovo ThinkPad X1."),
        ("assistant", "Deux bons choix."),
        ("user", "Lequel est le plus léger ?"),
        ("assistant", "Le ThinkPad, 1,1 kg."),
    ]
    llm = ScriptedChatModel(replies=[answer("Quelle est la garantie du Dell XPS 15 ?")])
    QueryRewriter(llm, max_history_turns=2).rewrite("Et la garantie du premier ?", history)
    request = llm.calls[0][-1].content
    # Names beyond the window stay listed; the model's "about" can only choose among them.
    assert request.startswith("Names: ") and "Dell XPS 15" in request.splitlines()[0]
    assert "Je compare" not in request
    schema = llm.call_options[0]["response_format"]["json_schema"]["schema"]
    assert set(schema["properties"]["about"]["items"]["enum"]) >= {"Dell XPS 15"}


@pytest.mark.parametrize(
    "raw",
    [
        f"```json\n{answer(GOOD)}\n```",
        f"Voici : {answer(GOOD)} voilà",
        '{"question": "Quelle est la carte graphique de l\'ASUS ROG Strix G15 ?',  # truncated
        GOOD,
    ],
)
def test_malformed_answers_are_repaired(raw: str) -> None:
    result, _ = rewrite(raw)
    assert (result.standalone, result.method) == (GOOD, "model"), result.error


def test_a_parenthesis_is_cut_off() -> None:
    result, _ = rewrite(answer(f"{GOOD} (ASUS ROG Strix G15)"))
    assert (result.standalone, result.method) == (GOOD, "model")
    assert "parenthesis" in (result.error or "")


def test_a_pasted_earlier_question_is_cut_off() -> None:
    history = [("user", "What is throat cancer?"), ("assistant", "A cancer of the throat.")]
    pasted = "What is throat cancer? Is throat cancer treatable?"
    result, _ = rewrite(answer(pasted), "Is it treatable?", history)
    assert result.standalone == "Is throat cancer treatable?", result.error


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("La carte graphique est une RTX 4060.", "not a question"),
        ("Quelle est la carte graphique du MSI Katana 15 ?", "does not hold"),
        ("What is the graphics card of the ASUS ROG Strix G15?", "language"),
        ("Quel est le prix de l'ASUS ROG Strix G15 ?", "drops"),
        (GOOD[:-2] + " " + " ".join(["et aussi"] * 12) + " ?", "too long"),
        ("", "empty"),
        ('{"other": 1}', "no question"),
    ],
)
def test_bad_rewrites_are_rejected_and_the_rules_write(reply: str, reason: str) -> None:
    result, _ = rewrite(answer(reply) if reply.startswith(("L", "Q", "W")) else reply)
    assert result.method == "rules" and reason in (result.error or ""), result.error
    # The rules put the referent in place of the possessive; the rewrite is not trusted,
    # so retrieval also searches the last user turn with the question.
    assert result.standalone == "Et la carte graphique de l'ASUS ROG Strix G15 ?"
    assert result.queries[-1] == "Je cherche un portable pour jouer. Et sa carte graphique ?"


def test_a_rewrite_that_adds_nothing_is_no_rewrite_and_the_rules_name_the_referent() -> None:
    history = [("user", "Le forfait Brise, il a de la 5G ?"),
               ("assistant", "Oui, le forfait Brise inclut la 5G.")]  # fmt: skip
    question = "Et il y a un engagement ?"
    reply = json.dumps({"about": "forfait Brise", "question": "Il y a un engagement ?"})
    result, _ = rewrite(reply, question, history)
    assert result.method == "rules" and "added nothing" in (result.error or ""), result.error
    assert result.standalone == "Et il y a un engagement pour le forfait Brise ?"


def test_the_users_person_is_kept_and_a_rendez_vous_is_no_second_person() -> None:
    history = [("user", "Je dois voir le Dr Morvan au cabinet Kerlan."),
               ("assistant", "Le cabinet Kerlan ouvre à 8 h.")]  # fmt: skip
    question = "je peux venir sans prendre de rendez-vous ?"
    kept = "Je peux venir au cabinet Kerlan sans prendre de rendez-vous ?"
    result, _ = rewrite(answer(kept), question, history)
    assert (result.method, result.standalone) == ("model", kept), result.error
    flipped = "Pouvez-vous venir au cabinet Kerlan sans prendre de rendez-vous ?"
    result, _ = rewrite(answer(flipped), question, history)
    assert result.method == "rules" and "je → vous" in (result.error or ""), result.error


def test_a_number_the_conversation_does_not_hold_is_rejected() -> None:
    result, _ = rewrite(answer("Quelle est la carte graphique de l'ASUS ROG Strix G15 de 2024 ?"))
    assert result.method == "rules" and "numbers" in (result.error or "")


def test_a_failed_call_falls_back_and_is_recorded() -> None:
    llm = ScriptedChatModel(replies=[ModelCallError("server down")])
    result = QueryRewriter(llm).rewrite("Et sa carte graphique ?", HISTORY)
    assert (result.method, result.model_calls) == ("rules", 1)
    assert "server down" in (result.error or "")


def test_a_model_that_cannot_be_built_falls_back_like_a_failed_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def missing(**_: object) -> None:
        raise OSError("model file not found")

    monkeypatch.setattr("memory_chains.providers.get_chat_model", missing)
    rw = QueryRewriter()
    for result in (
        rw.rewrite("Et sa carte graphique ?", HISTORY),
        asyncio.run(rw.arewrite("Et sa carte graphique ?", HISTORY)),
    ):
        assert (result.method, result.model_calls) == ("rules", 1)
        assert "model file not found" in (result.error or "")
        assert result.standalone == "Et la carte graphique de l'ASUS ROG Strix G15 ?"


def test_without_a_model_the_rules_write_or_leave_the_question() -> None:
    llm = ScriptedChatModel()
    rw = QueryRewriter(llm, use_model=False)
    result = rw.rewrite("Et sa carte graphique ?", HISTORY)
    assert (result.method, result.model_calls, llm.calls) == ("rules", 0, [])
    assert result.standalone == "Et la carte graphique de l'ASUS ROG Strix G15 ?"
    left = rw.rewrite("Faut-il un dépôt ?", HISTORY)
    assert left.standalone == "Faut-il un dépôt ?" and len(left.queries) == 2


def test_rule_families_can_be_switched_off() -> None:
    rw = QueryRewriter(use_model=False, rules=())
    result = rw.rewrite("Et sa carte graphique ?", HISTORY)
    assert result.standalone == "Et sa carte graphique ?" and result.method == "rules"
    with pytest.raises(InvalidInputError, match="unknown rules"):
        QueryRewriter(use_model=False, rules=("magic",))


def test_a_comparison_retrieves_each_compared_thing() -> None:
    history = [("user", "Quelle est la garantie du Dell XPS 15 ?"), ("assistant", "Deux ans.")]
    written = "Compare la garantie du Dell XPS 15 à celle du Lenovo ?"
    result, _ = rewrite(answer(written), "Et compare à celui de Lenovo ?", history)
    assert result.method == "model", result.error
    assert result.queries == (written, "Dell XPS 15 garantie", "Lenovo garantie")


def test_sync_and_async_agree() -> None:
    sync, _ = rewrite(answer(GOOD))
    llm = ScriptedChatModel(replies=[answer(GOOD)])
    a = asyncio.run(QueryRewriter(llm).arewrite("Et sa carte graphique ?", HISTORY))
    assert (a.standalone, a.method, a.queries, a.model_calls) == (
        sync.standalone,
        sync.method,
        sync.queries,
        sync.model_calls,
    )


def test_history_formats_are_equivalent_and_not_mutated() -> None:
    messages = [HumanMessage(content=HISTORY[0][1]), AIMessage(content=HISTORY[1][1])]
    pairs = [list(turn) for turn in HISTORY]
    before = [list(turn) for turn in pairs]
    a, _ = rewrite(answer(GOOD), history=messages)
    b, _ = rewrite(answer(GOOD), history=pairs)
    assert a.standalone == b.standalone and pairs == before


@pytest.mark.parametrize("bad_history", ["a string", [("robot", "x")], [42]])
def test_bad_history_is_a_typed_error(bad_history: object) -> None:
    with pytest.raises(InvalidInputError):
        QueryRewriter(ScriptedChatModel()).rewrite("Et lui ?", bad_history)  # type: ignore[arg-type]


@pytest.mark.parametrize("question", ["", "   ", None])
def test_empty_question_is_a_typed_error(question: object) -> None:
    with pytest.raises(InvalidInputError):
        QueryRewriter(ScriptedChatModel()).rewrite(question, HISTORY)  # type: ignore[arg-type]


@pytest.mark.parametrize("kwargs", [{"max_history_turns": 0}, {"language_hint": "de"}])
def test_bad_arguments_are_typed_errors(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidInputError):
        QueryRewriter(ScriptedChatModel(), **kwargs)  # type: ignore[arg-type]


def test_result_is_frozen() -> None:
    result = RewriteResult("q", "q", "unchanged", ("q",), 0, 0.0)
    with pytest.raises(AttributeError):
        result.standalone = "x"  # type: ignore[misc]


def test_warming_skips_a_remote_or_scripted_model() -> None:
    llm = ScriptedChatModel()
    rw = QueryRewriter(llm)
    assert rw.warm() == 0.0 and rw.warm_in_background() is None and llm.calls == []


def test_several_names_for_one_thing_the_last_listed_is_the_referent() -> None:
    history = [
        ("user", "Je regarde le Prêt Azur pour une voiture."),
        ("assistant", "Le Prêt Azur va jusqu'à 40 000 €. Le Compte Opale coûte 2 € par mois."),
    ]
    question = "Je peux le rembourser en avance ?"
    written = "Je peux rembourser le prêt en avance ?"
    reply = json.dumps({"about": ["Compte Opale", "Prêt Azur"], "question": written})
    result, _ = rewrite(reply, question, history)
    # The generic noun the model wrote ("le prêt") becomes the name, in place.
    assert result.standalone == "Je peux rembourser le Prêt Azur en avance ?", result
    assert result.method == "model"


def test_a_referent_named_by_its_own_part_is_not_put_in_again() -> None:
    history = [("user", "Vous avez une offre pour une chorale ?"),
               ("assistant", "L'offre Velora Brume convient aux associations.")]  # fmt: skip
    written = "Il y a un engagement sur l'offre Brume ?"
    reply = json.dumps({"about": ["Velora Brume"], "question": written})
    result, _ = rewrite(reply, "Et il y a un engagement dessus ?", history)
    assert (result.method, result.standalone) == ("model", written), result


def test_a_short_name_inside_a_word_does_not_cut_a_comparison_to_one_side() -> None:
    history = [("user", "I have the Brava card and the Orla card."),
               ("assistant", "Both cards work in the US, at different costs.")]  # fmt: skip
    question = "which one's cheaper to use over there?"
    written = "Which one is cheaper to use over there?"
    reply = json.dumps({"about": ["Brava", "Orla"], "question": written})
    result, _ = rewrite(reply, question, history)
    assert "Brava" in result.standalone and "Orla" in result.standalone, result


def test_no_second_thing_is_put_beside_the_one_a_resolved_rewrite_names() -> None:
    history = [("user", "Two flats: the Brava Court studio and the Lune Street flat."),
               ("assistant", "Brava Court is free in May; Lune Street in June.")]  # fmt: skip
    written = "What deposit would the Brava Court studio need?"
    reply = json.dumps({"about": ["Brava Court", "Lune Street"], "question": written})
    result, _ = rewrite(reply, "What deposit would it need?", history)
    assert (result.method, result.standalone) == ("model", written), result
