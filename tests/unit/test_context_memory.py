"""ContextMemory inside the conversational chain (fakes), and the adapters over long-term
memory, recall and documents."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.messages import BaseMessage

from memory_chains.context import (
    CONTEXT_QA_PROMPT,
    ContextBuilder,
    ContextMemory,
    DocumentsSource,
    EntitySource,
    RecallSource,
    build_context_chain,
    long_term_sources,
    short_term_sources,
)
from memory_chains.entities import EntityTracker, RuleEntityExtractor
from memory_chains.errors import InvalidInputError
from memory_chains.memory import WindowCore
from memory_chains.protocol import MemoryBase, MemoryBlock, block_name
from memory_chains.rag import ConversationalRAG
from memory_chains.recall import TurnIndex
from memory_chains.testing import ScriptedChatModel, word_counter

from ._fakes import RecordingRetriever, RecordingRewriter


class FakeLongTerm(MemoryBase):
    """A long-term memory of the protocol: a profile and facts; sessions record."""

    block_names = ("profile", "facts")

    def __init__(self) -> None:
        self.observed: list[tuple[str, str, str]] = []

    def record(self, human: str, ai: str) -> None:
        self.observed.append((human, ai, "default"))

    def session(self, session_id: str) -> FakeSession:
        return FakeSession(self, session_id)

    def context_block(self, question: str, max_tokens: int, name: str | None = None) -> MemoryBlock:
        if block_name(self, name) == "profile":
            return MemoryBlock(
                "profile", ("- name: Alice", "- language: fr"), title="About the user"
            )
        return MemoryBlock("facts", ("- Owns a Dell XPS 15 bought in May.",))


class FakeSession(MemoryBase):
    block_names = FakeLongTerm.block_names

    def __init__(self, memory: FakeLongTerm, session_id: str) -> None:
        self.memory, self.session_id = memory, session_id

    def record(self, human: str, ai: str) -> None:
        self.memory.observed.append((human, ai, self.session_id))

    def context_block(self, question: str, max_tokens: int, name: str | None = None) -> MemoryBlock:
        return self.memory.context_block(question, max_tokens, name)


def make_memory(**topic: Any) -> tuple[ContextMemory, WindowCore, EntityTracker, FakeLongTerm]:
    window = WindowCore(k=4, token_counter=word_counter)
    entities = EntityTracker(RuleEntityExtractor(use_spacy=False))
    longterm = FakeLongTerm()
    sources = [
        *long_term_sources(longterm, session_id="s1"),
        EntitySource(entities),
        *short_term_sources(window),
    ]
    builder = ContextBuilder(sources, 300, word_counter, **topic)
    return ContextMemory(builder=builder), window, entities, longterm


def test_save_context_feeds_every_memory_once() -> None:
    memory, window, entities, longterm = make_memory()
    memory.save_context(
        {"question": "Je cherche le Dell XPS 15"},
        {"answer": "Il coûte 1599 €.", "source_documents": []},
    )
    assert window.stats().turns == 1  # summary and recent share the window: one exchange
    assert entities.get("Dell XPS 15") is not None
    assert longterm.observed == [("Je cherche le Dell XPS 15", "Il coûte 1599 €.", "s1")]


def test_long_term_memory_records_only_with_a_session_id() -> None:
    longterm = FakeLongTerm()
    memory = ContextMemory(builder=ContextBuilder(long_term_sources(longterm), 100, word_counter))
    memory.save_context({"question": "q"}, {"answer": "a"})
    assert longterm.observed == [] and memory.recorders == []


def test_load_splits_the_history_from_the_other_blocks() -> None:
    memory, *_ = make_memory()
    memory.save_context({"question": "Je cherche le Dell XPS 15"}, {"answer": "1599 €."})
    variables = memory.load_memory_variables({"question": "Quelle est sa garantie ?"})

    history = variables["chat_history"]
    assert [m.type for m in history] == ["human", "ai"]
    assert all(isinstance(m, BaseMessage) for m in history)
    other = variables["memory_context"]
    assert "## About the user\n- name: Alice" in other
    assert "Owns a Dell XPS 15" in other and "Dell XPS 15 [PRODUCT]" in other
    assert "Human:" not in other  # the turns are in chat_history only


def test_string_history_and_missing_keys() -> None:
    memory, *_ = make_memory()
    memory.return_messages = False
    memory.save_context({"question": "q1"}, {"answer": "a1"})
    assert memory.load_memory_variables({})["chat_history"] == "Human: q1\nAI: a1"
    with pytest.raises(InvalidInputError, match="input_key"):
        memory.save_context({"input": "q"}, {"answer": "a"})
    with pytest.raises(InvalidInputError, match="output_key"):
        memory.save_context({"question": "q"}, {"text": "a"})


def test_in_the_chain_the_answer_prompt_gets_every_memory() -> None:
    memory, window, _, _ = make_memory()
    llm = ScriptedChatModel(replies=["Le Dell XPS 15 coûte 1599 €.", "Deux ans."])
    retriever = RecordingRetriever(queries=[])
    rewriter = RecordingRewriter()
    chain = build_context_chain(retriever, memory, llm=llm, rewriter=rewriter)
    rag = ConversationalRAG(chain)
    rag.ask("Je cherche le Dell XPS 15")
    answer = rag.ask("Quelle est sa garantie ?")

    assert answer.rewritten == "Quelle est sa garantie ? [rewritten]"
    assert retriever.queries[-1] == answer.rewritten
    _, history, salient = rewriter.calls[-1]
    assert history == [
        ("human", "Je cherche le Dell XPS 15"),
        ("ai", "Le Dell XPS 15 coûte 1599 €."),
    ]
    assert "Dell XPS 15" in salient  # entity_source wired to the entity memory (opt-in)
    prompt = llm.calls[-1][-1].content
    assert "- name: Alice" in prompt and "Dell XPS 15 [PRODUCT]" in prompt
    assert "Human: Je cherche le Dell XPS 15" in prompt
    assert window.stats().turns == 2 and len(llm.calls) == 2


def test_in_the_chain_a_new_subject_is_not_rewritten_with_the_old_one() -> None:
    memory, *_ = make_memory(topic=True)
    llm = ScriptedChatModel(replies=["30 jours.", "Mardi et jeudi."])
    rewriter = RecordingRewriter()
    retriever = RecordingRetriever(queries=[])
    rag = ConversationalRAG(build_context_chain(retriever, memory, llm=llm, rewriter=rewriter))
    rag.ask("Quelle est votre politique de retour ?")
    answer = rag.ask("Quels sont les horaires du cours de Pilates ?")

    assert not answer.was_rewritten and rewriter.calls == []  # empty history: no rewrite
    assert retriever.queries[-1] == "Quels sont les horaires du cours de Pilates ?"
    assert "politique de retour" not in llm.calls[-1][-1].content


def test_async_chain_gives_the_same_prompt() -> None:
    def run(use_async: bool) -> str:
        memory, *_ = make_memory()
        llm = ScriptedChatModel(replies=["1599 €.", "Deux ans."])
        rag = ConversationalRAG(
            build_context_chain(
                RecordingRetriever(queries=[]), memory, llm=llm, rewriter=RecordingRewriter()
            )
        )
        for q in ("Je cherche le Dell XPS 15", "Quelle est sa garantie ?"):
            if use_async:
                asyncio.run(rag.aask(q))
            else:
                rag.ask(q)
        return str(llm.calls[-1][-1].content)

    assert run(True) == run(False)


def test_stock_build_chain_prompt_is_replaced_by_the_context_one() -> None:
    assert set(CONTEXT_QA_PROMPT.input_variables) == {
        "memory_context",
        "chat_history",
        "context",
        "question",
    }


def test_clear_forgets_short_term_and_entities_but_not_long_term() -> None:
    memory, window, entities, _ = make_memory()
    memory.save_context({"question": "Je cherche le Dell XPS 15"}, {"answer": "Oui."})
    memory.clear()
    assert window.stats().turns == 0 and entities.entities() == []
    assert "Alice" in memory.load_memory_variables({"question": "q"})["memory_context"]


# -- adapters over the memories of the protocol --------------------------------------


class FakeRecall(MemoryBase):
    block_names = ("recalled",)
    records = False

    def __init__(self) -> None:
        self.asked: list[tuple[str, int]] = []

    def record(self, human: str, ai: str) -> None:
        raise AssertionError("a recall memory is never given exchanges")

    def context_block(self, question: str, max_tokens: int, name: str | None = None) -> MemoryBlock:
        self.asked.append((question, max_tokens))
        line = "(s7#3) Human: ma commande 4821 ?"
        return MemoryBlock("recalled", ("[2026-11-02, s7]", line), cited_ids=("s7#3",))


def test_recall_block_is_kept_whole_with_its_citations_or_dropped() -> None:
    recall = FakeRecall()
    source = RecallSource(recall)
    memory = ContextMemory(builder=ContextBuilder([source], 100, word_counter))
    assert memory.context("ma commande ?").cited_ids == ("s7#3",)
    assert recall.asked == [("ma commande ?", 100)]
    tight = ContextBuilder([source], 6, word_counter).build("ma commande ?")
    assert tight.dropped == ("recalled",) and tight.cited_ids == ()
    memory.save_context({"question": "q"}, {"answer": "a"})  # does not reach the recall


def test_recall_over_a_turn_index_needs_a_user_and_a_question() -> None:
    index = TurnIndex()
    index.add("alice", "s1#1", "Ma commande 4821 est en retard", speaker="Human")
    source = RecallSource(index, user_id="alice")
    assert source.block("commande ?", 50).cited_ids == ("s1#1",)
    assert source.block("", 50).empty  # no question: no search
    assert RecallSource(index, user_id="bob").block("commande ?", 50).empty
    with pytest.raises(InvalidInputError, match="ConversationMemory"):
        RecallSource(index)  # an index serves every user: say whose turns


def test_a_memory_answering_something_else_than_a_block_is_refused() -> None:
    class Broken(FakeRecall):
        def context_block(self, question: str, max_tokens: int, name: str | None = None) -> Any:
            return "(s1#1) Human: bonjour"

    with pytest.raises(InvalidInputError, match="not a MemoryBlock"):
        RecallSource(Broken()).block("q", 10)


def test_documents_from_a_retriever_lowest_rank_dropped_first() -> None:
    retriever = RecordingRetriever(queries=[])
    ctx = ContextBuilder([DocumentsSource(retriever)], 100, word_counter).build("garantie ?")
    assert retriever.queries == ["garantie ?"]
    assert ctx.render() == "## Documents\n[kb.md] doc for garantie ?"
    docs = [Document(page_content=f"doc {i} " + "mot " * 5) for i in range(4)]
    small = ContextBuilder([DocumentsSource(docs)], 20, word_counter).build("q")
    kept = small.get("documents")
    assert kept is not None and kept.items[0].startswith("doc 0") and len(kept.items) == 2
    with pytest.raises(InvalidInputError, match="documents must be"):
        DocumentsSource(42)


def test_adapters_refuse_objects_without_the_methods_they_read() -> None:
    with pytest.raises(InvalidInputError, match="ConversationMemory"):
        long_term_sources(object())
    with pytest.raises(InvalidInputError, match="ConversationMemory"):
        EntitySource(object())
    with pytest.raises(InvalidInputError, match="not 'entities'"):
        EntitySource(FakeLongTerm())  # a memory without that block


def _names_given_to_the_rewriter(**options: Any) -> tuple[str, ...]:
    memory, *_ = make_memory()
    rewriter = RecordingRewriter()
    llm = ScriptedChatModel(replies=["1599 €.", "Oui, avec Chronopost.", "Deux ans."])
    chain = build_context_chain(
        RecordingRetriever(queries=[]), memory, llm=llm, rewriter=rewriter, **options
    )
    rag = ConversationalRAG(chain)
    for question in ("Je cherche le Dell XPS 15", "Vous livrez à Marseille ?"):
        rag.ask(question)
    rag.ask("Quelle est sa garantie ?")
    return rewriter.calls[-1].entities


def test_entity_names_reach_the_rewriter_by_default_ordered_for_the_question() -> None:
    # The type-aware order of rewrite.entity_source: the product first although Marseille
    # and Chronopost were mentioned after it (tracker.salient would put them first).
    names = _names_given_to_the_rewriter()
    assert names[0] == "Dell XPS 15" and "Marseille" in names


def test_entity_names_can_be_turned_off() -> None:
    assert _names_given_to_the_rewriter(entity_hints=False) == ()
