"""The conversational chain's wiring, with fakes (no model, no index)."""

from __future__ import annotations

from typing import Any

import pytest

from memory_chains.errors import ConfigurationError, InvalidInputError, ModelCallError
from memory_chains.rag import ConversationalRAG, RAGAnswer, build_chain
from memory_chains.testing import ScriptedChatModel

from ._fakes import RecordingRetriever, RecordingRewriter


def buffer_memory(**kwargs: Any) -> Any:
    from langchain_classic.memory import ConversationBufferMemory

    options = {"memory_key": "chat_history", "return_messages": True, "output_key": "answer"}
    return ConversationBufferMemory(**{**options, **kwargs})


def make_rag(replies: list[Any], memory: Any = "buffer") -> tuple[ConversationalRAG, Any, Any]:
    retriever = RecordingRetriever(queries=[])
    rewriter = RecordingRewriter()
    llm = ScriptedChatModel(replies=replies)
    mem = buffer_memory() if memory == "buffer" else memory
    rag = ConversationalRAG(build_chain(retriever, llm=llm, memory=mem, rewriter=rewriter))
    return rag, retriever, rewriter


def test_follow_up_is_rewritten_for_retrieval_and_memorised() -> None:
    rag, retriever, rewriter = make_rag(["Trente jours.", "Aussi trente jours."])
    first = rag.ask("Quelle est votre politique de retour ?")
    second = rag.ask("Et pour les produits électroniques ?")

    assert isinstance(first, RAGAnswer)
    assert not first.was_rewritten  # no history: the generator is skipped
    assert second.rewritten == "Et pour les produits électroniques ? [rewritten]"
    assert retriever.queries == [first.question, second.rewritten]
    assert rewriter.histories == [
        [("human", "Quelle est votre politique de retour ?"), ("ai", "Trente jours.")]
    ]
    assert second.answer == "Aussi trente jours."
    assert second.source_names() == ["kb.md"]
    assert len(rag.history()) == 4


def test_failed_model_call_leaves_memory_unchanged() -> None:
    rag, _, _ = make_rag(["Trente jours.", RuntimeError("model crashed")])
    rag.ask("Politique de retour ?")
    before = list(rag.history())

    with pytest.raises(ModelCallError, match="nothing was added to memory"):
        rag.ask("Et pour l'électronique ?")

    assert rag.history() == before


def test_string_memory_works_from_the_second_turn() -> None:
    rag, _, rewriter = make_rag(
        ["Un.", "Deux.", "Trois."], memory=buffer_memory(return_messages=False)
    )
    for question in ("Premier ?", "Et le second ?", "Et le troisième ?"):
        rag.ask(question)
    assert rewriter.histories[-1][-1] == ("ai", "Deux.")


def test_memory_without_output_key_is_refused_before_any_turn() -> None:
    with pytest.raises(ConfigurationError, match="output_key=None"):
        make_rag(["x"], memory=buffer_memory(output_key=None))


def test_memory_with_wrong_memory_key_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="memory_key='history'"):
        make_rag(["x"], memory=buffer_memory(memory_key="history"))


def test_chain_without_memory_answers_every_question_alone() -> None:
    rag, _, rewriter = make_rag(["A.", "B."], memory=None)
    rag.ask("Premier ?")
    answer = rag.ask("Et pour le samedi ?")
    assert answer.rewritten == "Et pour le samedi ?"
    assert rewriter.histories == []
    assert rag.history() == []


@pytest.mark.parametrize("bad", [None, 42, "", "   ", "x" * 8_001])
def test_bad_questions_are_rejected_with_a_typed_error(bad: Any) -> None:
    rag, retriever, _ = make_rag(["never"])
    with pytest.raises(InvalidInputError):
        rag.ask(bad)
    assert retriever.queries == []


def test_stream_yields_answer_tokens_then_the_answer() -> None:
    rag, _, _ = make_rag(["Vous avez trente jours."])
    items = list(rag.stream("Politique de retour ?"))
    tokens, final = items[:-1], items[-1]
    assert all(isinstance(t, str) for t in tokens) and len(tokens) > 1
    assert "".join(tokens) == "Vous avez trente jours."
    assert isinstance(final, RAGAnswer) and final.answer == "Vous avez trente jours."
    assert len(rag.history()) == 2


def test_stream_error_is_raised_in_the_caller_and_memory_unchanged() -> None:
    rag, _, _ = make_rag([RuntimeError("boom")])
    with pytest.raises(ModelCallError):
        list(rag.stream("Politique de retour ?"))
    assert rag.history() == []


async def test_async_ask_matches_sync() -> None:
    rag, _, _ = make_rag(["Un.", "Deux."])
    await rag.aask("Premier ?")
    answer = await rag.aask("Et le second ?")
    assert answer.rewritten.endswith("[rewritten]")
    assert len(rag.history()) == 4


# -- entity names for the rewriter -------------------------------------------------------


def _tracker_with_two_entities() -> Any:
    from memory_chains.entities import EntityTracker, RuleEntityExtractor

    tracker = EntityTracker(RuleEntityExtractor(use_spacy=False))
    tracker.observe("Je regarde le Dell XPS 15.", "Bon choix.")
    tracker.observe("Vous livrez à Marseille ?", "Oui, avec Chronopost.")
    return tracker


def _combined_memory(tracker: Any) -> Any:
    from langchain_classic.memory import CombinedMemory

    from memory_chains.entities import EntityMemory

    return CombinedMemory(
        memories=[buffer_memory(input_key="question"), EntityMemory(tracker=tracker)]
    )


def _context_memory(tracker: Any) -> Any:
    from memory_chains.context import ContextBuilder, ContextMemory, EntitySource

    return ContextMemory(builder=ContextBuilder([EntitySource(tracker)], 100, len))


@pytest.mark.parametrize("shape", [_combined_memory, _context_memory])
def test_entity_names_come_from_the_tracker_behind_the_memory(shape: Any) -> None:
    memory = shape(_tracker_with_two_entities())
    llm = ScriptedChatModel()
    chain = build_chain(RecordingRetriever(), llm=llm, memory=memory, rewriter=RecordingRewriter())
    source = chain.question_generator.entity_source
    assert source is not None
    # rewrite.entity_source's order: the asked type (a product) first, not the most recent
    assert source("Quelle est sa garantie ?")[0] == "Dell XPS 15"

    off = build_chain(
        RecordingRetriever(),
        llm=llm,
        memory=memory,
        rewriter=RecordingRewriter(),
        entity_hints=False,
    )
    assert off.question_generator.entity_source is None


def test_consecutive_streams_share_one_live_event_loop() -> None:
    # A provider that caches a loop-bound async resource for the process (langchain-openai's
    # httpx client) must find its loop alive on the next stream: an asyncio.Queue bound to
    # the first call's loop raises on another loop.
    import asyncio

    shared: dict[str, Any] = {}

    class LoopBound(ScriptedChatModel):
        async def _astream(self, *args: Any, **kwargs: Any) -> Any:
            queue = shared.setdefault("queue", asyncio.Queue())
            shared.setdefault("loops", set()).add(id(asyncio.get_running_loop()))
            await queue.put("x")
            await queue.get()
            for chunk in self._stream(*args, **kwargs):
                yield chunk

    llm = LoopBound(replies=["Un.", "Deux.", "Trois."])
    retriever, rewriter = RecordingRetriever(queries=[]), RecordingRewriter()
    chain = build_chain(retriever, llm=llm, memory=buffer_memory(), rewriter=rewriter)
    rag = ConversationalRAG(chain)
    for question in ("Premier ?", "Deuxième ?", "Troisième ?"):
        assert isinstance(list(rag.stream(question))[-1], RAGAnswer)
    assert len(shared["loops"]) == 1
