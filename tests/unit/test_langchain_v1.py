"""LangChain 1.x adapters (agent middleware, LCEL chain, retrieval tool) with fakes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from memory_chains.entities import EntityMemory, EntityTracker, RuleEntityExtractor
from memory_chains.errors import InvalidInputError, ModelCallError
from memory_chains.langchain_v1 import (
    Memories,
    MemoryMiddleware,
    build_lcel_chain,
    history_aware_retriever,
    make_retrieval_tool,
)
from memory_chains.memory import BufferMemory, WindowCore
from memory_chains.protocol import MemoryBase, MemoryBlock, block_name
from memory_chains.stores import InMemoryStore
from memory_chains.testing import ScriptedChatModel

from . import _fakes
from ._fakes import RecordingRewriter

QUESTION = "Et pour le samedi ?"
REWRITTEN = "Et pour le samedi ? [rewritten]"


class RecordingRetriever(_fakes.RecordingRetriever):
    """Two documents per query, best first; records the queries."""

    documents: tuple[tuple[str, str], ...] = (("best", "a.md"), ("second", "b.md"))


class FakeLongTerm(MemoryBase):
    """A long-term memory of the protocol recording what its sessions are given."""

    block_names = ("profile", "facts")

    def __init__(self) -> None:
        self.observed: list[tuple[str, str, dict[str, Any]]] = []

    def record(self, human: str, ai: str) -> None:
        raise AssertionError("Memories records through session()")

    def session(self, session_id: str, *, seq: Any = None) -> Any:
        return FakeSession(self, session_id, seq)

    def context_block(self, question: str, max_tokens: int, name: str | None = None) -> MemoryBlock:
        if block_name(self, name) == "profile":
            return MemoryBlock("profile", ("language: fr",))
        return MemoryBlock("facts", (f"- prefers Saturday classes (asked: {question})",))


class FakeSession(MemoryBase):
    block_names = FakeLongTerm.block_names

    def __init__(self, memory: FakeLongTerm, session_id: str, seq: Any) -> None:
        self.memory, self.keys, self.seq = memory, {"session_id": session_id}, seq

    def record(self, human: str, ai: str) -> None:
        self.memory.observed.append((human, ai, {**self.keys, "seq": self.seq()}))

    def context_block(self, question: str, max_tokens: int, name: str | None = None) -> MemoryBlock:
        return self.memory.context_block(question, max_tokens, name)


class AsyncFakeLongTerm(FakeLongTerm):
    def session(self, session_id: str, *, seq: Any = None) -> Any:
        return AsyncFakeSession(self, session_id, seq)


class AsyncFakeSession(FakeSession):
    async def arecord(self, human: str, ai: str) -> None:
        self.memory.observed.append((human, ai, {**self.keys, "seq": self.seq(), "async": True}))


class FakeBuilt:
    def render(self) -> str:
        return "## Recent turns\nHuman: Pilates ?"


class FakeBuilder:
    def __init__(self) -> None:
        self.questions: list[str] = []

    def build(self, question: str) -> FakeBuilt:
        self.questions.append(question)
        return FakeBuilt()


def seeded_memory() -> WindowCore:
    memory = WindowCore(k=3, user_id="alice", session_id="s1")
    memory.add_exchange("Quels sont les horaires du cours de Pilates ?", "Lundi à 18 h.")
    return memory


def tracker() -> EntityTracker:
    return EntityTracker(RuleEntityExtractor(use_spacy=False), user_id="alice")


def user(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


# -- Memories -------------------------------------------------------------------------------


def test_memories_view_has_history_blocks_and_entity_hints() -> None:
    entities = tracker()
    entities.observe("Je cherche le Dell XPS 15.", "Il coûte 1599 €.")
    memories = Memories(seeded_memory(), entities=entities, long_term=FakeLongTerm())

    view = memories.view("Quelle est sa garantie ?")

    assert view.turns == (
        ("human", "Quels sont les horaires du cours de Pilates ?"),
        ("ai", "Lundi à 18 h."),
    )
    assert [title for title, _ in view.blocks] == [
        "Known entities",
        "User profile",
        "Relevant facts",
    ]
    assert "XPS 15" in view.blocks[0][1]
    assert any("XPS 15" in name for name in view.entity_names)
    assert view.render().endswith(
        "Human: Quels sont les horaires du cours de Pilates ?\nAssistant: Lundi à 18 h."
    )


def test_memories_accept_classic_shells_and_refuse_wrong_objects() -> None:
    memories = Memories(BufferMemory(), entities=EntityMemory(extractor="rules"))
    assert isinstance(memories.entities, EntityTracker)
    with pytest.raises(InvalidInputError, match="short_term must implement"):
        Memories("not a memory")
    with pytest.raises(InvalidInputError, match="the 'recent' block"):
        Memories(tracker())
    with pytest.raises(InvalidInputError, match="ConversationMemory"):
        Memories(long_term=object())
    with pytest.raises(InvalidInputError, match="the 'profile' and 'facts' blocks"):
        Memories(long_term=WindowCore())
    with pytest.raises(InvalidInputError, match="build"):
        Memories(context=object())
    with pytest.raises(InvalidInputError, match="ConversationMemory"):
        Memories(entities=object())
    with pytest.raises(InvalidInputError, match="the 'entities' block"):
        Memories(entities=WindowCore())
    with pytest.raises(InvalidInputError, match="each of memories"):
        Memories(memories=[object()])


def two_entity_tracker() -> EntityTracker:
    entities = tracker()
    entities.observe("Je regarde le Dell XPS 15.", "Bon choix.")
    entities.observe("Vous livrez à Marseille ?", "Oui, avec Chronopost.")
    return entities


def test_entity_names_are_ordered_for_the_question_as_build_chain_does() -> None:
    # rewrite.entity_source puts the asked type first: the product, although the place and
    # the carrier were mentioned after it (tracker.salient would put them first).
    memories = Memories(seeded_memory(), entities=two_entity_tracker())
    assert memories.view("Quelle est sa garantie ?").entity_names[0] == "Dell XPS 15"


def test_entity_names_come_from_the_entity_source_of_a_context_builder() -> None:
    from memory_chains.context import ContextBuilder, EntitySource

    builder = ContextBuilder([EntitySource(two_entity_tracker())], 100, len)
    view = Memories(seeded_memory(), context=builder).view("Quelle est sa garantie ?")
    assert view.entity_names[0] == "Dell XPS 15"


@pytest.mark.parametrize("entity_hints", [True, False])
def test_entity_hints_option_of_every_adapter(entity_hints: bool) -> None:
    entities = two_entity_tracker()
    memories = Memories(entities=entities, entity_hints=entity_hints)
    assert bool(memories.view("Quelle est sa garantie ?").entity_names) is entity_hints
    middleware = MemoryMiddleware(seeded_memory(), entities=entities, entity_hints=entity_hints)
    assert (middleware.memories.entity_source is not None) is entity_hints
    rewriter = RecordingRewriter()
    chain = build_lcel_chain(
        RecordingRetriever(queries=[]),
        ScriptedChatModel(replies=["Deux ans."]),
        memory=seeded_memory(),
        entities=entities,
        rewriter=rewriter,
        entity_hints=entity_hints,
    )
    chain.invoke({"input": "Quelle est sa garantie ?"})
    expected = "Dell XPS 15" if entity_hints else None
    assert next(iter(rewriter.calls[-1].entities), None) == expected


def test_memories_context_builder_replaces_blocks_and_history() -> None:
    builder = FakeBuilder()
    view = Memories(seeded_memory(), context=builder, long_term=FakeLongTerm()).view("q ?")
    assert builder.questions == ["q ?"]
    assert view.blocks == (("Memory", "## Recent turns\nHuman: Pilates ?"),)
    assert view.turns  # still there for the rewriter
    assert "Conversation so far" not in view.render()


def test_memories_record_passes_session_and_seq_to_long_term() -> None:
    long_term = FakeLongTerm()
    memories = Memories(seeded_memory(), long_term=long_term)
    memories.record("Je préfère le samedi.", "Noté.")
    assert long_term.observed == [
        ("Je préfère le samedi.", "Noté.", {"session_id": "s1", "seq": 2})
    ]


async def test_memories_arecord_uses_async_observe_when_there_is_one() -> None:
    sync_only, with_async = FakeLongTerm(), AsyncFakeLongTerm()
    await Memories(WindowCore(), long_term=sync_only).arecord("q", "a")
    await Memories(WindowCore(), long_term=with_async).arecord("q", "a")
    assert sync_only.observed == [("q", "a", {"session_id": "default", "seq": 1})]
    assert with_async.observed[0][2]["async"] is True


# -- agent middleware -----------------------------------------------------------------------


def make_agent(
    replies: list[Any], **options: Any
) -> tuple[Any, ScriptedChatModel, WindowCore, RecordingRetriever, RecordingRewriter]:
    memory = seeded_memory()
    retriever, rewriter = RecordingRetriever(queries=[]), RecordingRewriter()
    llm = ScriptedChatModel(replies=replies)
    middleware = MemoryMiddleware(memory, rewriter=rewriter, retriever=retriever, **options)
    agent = create_agent(llm, system_prompt="Be brief.", middleware=[middleware])
    return agent, llm, memory, retriever, rewriter


def test_middleware_question_placement_lays_out_the_classic_answer_prompt() -> None:
    agent, llm, _, _, _ = make_agent(["Pas de cours le samedi."], long_term=FakeLongTerm())

    agent.invoke(user(QUESTION))

    system, question = llm.calls[0]
    assert system.content == "Be brief."
    text = question.content
    assert text.startswith("User profile:\nlanguage: fr\n\nRelevant facts:")
    assert "Conversation so far:\nHuman: Quels sont les horaires du cours de Pilates ?" in text
    assert text.index("Conversation so far:") < text.index("Context documents:\n[b.md]")
    assert text.endswith(f"[a.md] best for {REWRITTEN}\n\nQuestion: {REWRITTEN}")


def test_middleware_system_placement_injects_memory_documents_and_rewritten_question() -> None:
    long_term = FakeLongTerm()
    agent, llm, _, retriever, rewriter = make_agent(
        ["Pas de cours le samedi."], long_term=long_term, placement="system"
    )

    out = agent.invoke(user(QUESTION))

    (messages,) = llm.calls
    system, *rest = messages
    assert isinstance(system, SystemMessage)
    assert system.content.startswith("Be brief.\n\nUser profile:\nlanguage: fr")
    assert "Context documents:\n[b.md] second for" in system.content
    assert system.content.endswith(f"[a.md] best for {REWRITTEN}")  # most relevant last
    assert [(m.type, m.content) for m in rest] == [
        ("human", "Quels sont les horaires du cours de Pilates ?"),
        ("ai", "Lundi à 18 h."),
        ("human", REWRITTEN),
    ]
    assert retriever.queries == [REWRITTEN]
    assert rewriter.histories[0][0] == ("human", "Quels sont les horaires du cours de Pilates ?")
    # the state keeps the user's words; the run's rewrite and documents are in the output
    assert [m.content for m in out["messages"]] == [QUESTION, "Pas de cours le samedi."]
    assert out["memory_rewritten_question"] == REWRITTEN
    assert [d.metadata["source"] for d in out["memory_documents"]] == ["a.md", "b.md"]


def test_middleware_records_the_exchange_after_the_run() -> None:
    long_term = FakeLongTerm()
    agent, _, memory, _, _ = make_agent(["Pas de cours le samedi."], long_term=long_term)
    agent.invoke(user(QUESTION))
    last = memory.context().turns[-1]
    assert (last.human, last.ai) == (QUESTION, "Pas de cours le samedi.")
    assert long_term.observed == [
        (QUESTION, "Pas de cours le samedi.", {"session_id": "s1", "seq": 2})
    ]


def test_middleware_failed_model_call_stores_nothing() -> None:
    long_term = FakeLongTerm()
    agent, _, memory, _, _ = make_agent([RuntimeError("model down")], long_term=long_term)
    with pytest.raises(ModelCallError, match="nothing was recorded"):
        agent.invoke(user(QUESTION))
    assert memory.stats().turns == 1
    assert long_term.observed == []


def test_middleware_state_history_keeps_agent_messages_and_user_words() -> None:
    agent, llm, _, _, _ = make_agent(
        ["ok"], history="state", rephrase_question=False, placement="system"
    )
    earlier = [HumanMessage("Bonjour"), AIMessage("Bonjour !"), HumanMessage(QUESTION)]
    agent.invoke({"messages": earlier})
    assert [m.content for m in llm.calls[0][1:]] == ["Bonjour", "Bonjour !", QUESTION]
    assert "Conversation so far" not in llm.calls[0][0].content


def test_middleware_with_context_builder_sends_no_history_messages() -> None:
    memory = seeded_memory()
    llm = ScriptedChatModel(replies=["ok"])
    agent = create_agent(llm, middleware=[MemoryMiddleware(memory, context=FakeBuilder())])
    agent.invoke(user("Et le samedi ?"))
    (only,) = llm.calls[0]
    assert only.content == "Memory:\n## Recent turns\nHuman: Pilates ?\n\nQuestion: Et le samedi ?"


def test_middleware_refuses_unknown_history_mode() -> None:
    with pytest.raises(InvalidInputError, match="history"):
        MemoryMiddleware(WindowCore(), history="all")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="placement"):
        MemoryMiddleware(WindowCore(), placement="user")  # type: ignore[arg-type]


async def test_middleware_async_injects_and_records() -> None:
    long_term = AsyncFakeLongTerm()
    agent, llm, memory, retriever, _ = make_agent(["Pas le samedi."], long_term=long_term)
    out = await agent.ainvoke(user(QUESTION))
    assert llm.calls[0][-1].content.endswith(f"Question: {REWRITTEN}")
    assert retriever.queries == [REWRITTEN]
    assert out["memory_rewritten_question"] == REWRITTEN
    assert memory.context().turns[-1].ai == "Pas le samedi."
    assert long_term.observed[0][2]["async"] is True


async def test_middleware_async_failure_stores_nothing() -> None:
    agent, _, memory, _, _ = make_agent([RuntimeError("model down")])
    with pytest.raises(ModelCallError):
        await agent.ainvoke(user(QUESTION))
    assert memory.stats().turns == 1


# -- retrieval tool -------------------------------------------------------------------------


def test_retrieval_tool_rewrites_from_memory_and_returns_documents_as_artifact() -> None:
    retriever, rewriter = RecordingRetriever(queries=[]), RecordingRewriter()
    middleware = MemoryMiddleware(seeded_memory())
    tool = make_retrieval_tool(retriever, rewriter, middleware)
    call = {"name": tool.name, "args": {"query": QUESTION}, "id": "1", "type": "tool_call"}

    message = tool.invoke(call)

    assert isinstance(message, ToolMessage)
    assert retriever.queries == [REWRITTEN]
    assert message.content.endswith(f"[a.md] best for {REWRITTEN}")
    assert [d.metadata["source"] for d in message.artifact] == ["a.md", "b.md"]
    assert rewriter.histories[0][1] == ("ai", "Lundi à 18 h.")


async def test_retrieval_tool_async() -> None:
    retriever = RecordingRetriever(queries=[])
    tool = make_retrieval_tool(retriever, RecordingRewriter(), seeded_memory())
    content = await tool.ainvoke({"query": QUESTION})
    assert retriever.queries == [REWRITTEN]
    assert REWRITTEN in content


class ToolCallingModel(BaseChatModel):
    """Replies with scripted AIMessages (tool calls included); records the messages."""

    replies: list[AIMessage] = Field(default_factory=list)
    calls: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "tool-calling-fake"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.calls.append(list(messages))
        return ChatResult(generations=[ChatGeneration(message=self.replies[len(self.calls) - 1])])


def test_agent_with_retrieval_tool_records_only_the_final_answer() -> None:
    memory = seeded_memory()
    retriever, rewriter = RecordingRetriever(queries=[]), RecordingRewriter()
    middleware = MemoryMiddleware(memory, rewriter=rewriter, placement="system")
    tool = make_retrieval_tool(retriever, rewriter, middleware)
    call = {"name": tool.name, "args": {"query": QUESTION}, "id": "c1", "type": "tool_call"}
    llm = ToolCallingModel(
        replies=[AIMessage(content="", tool_calls=[call]), AIMessage(content="Pas le samedi.")]
    )
    agent = create_agent(llm, tools=[tool], middleware=[middleware])

    agent.invoke(user(QUESTION))

    assert retriever.queries == [REWRITTEN]
    second = llm.calls[1]
    assert [m.type for m in second] == ["human", "ai", "human", "ai", "tool"]
    assert second[2].content == REWRITTEN  # memory history + this run's messages
    assert [(t.human, t.ai) for t in memory.context().turns][-1] == (QUESTION, "Pas le samedi.")
    assert memory.stats().turns == 2


# -- LCEL chain -----------------------------------------------------------------------------


def make_chain(
    replies: list[Any], memory: Any = "seeded", **options: Any
) -> tuple[Any, ScriptedChatModel, Any, RecordingRetriever]:
    mem = seeded_memory() if memory == "seeded" else memory
    retriever = RecordingRetriever(queries=[])
    llm = ScriptedChatModel(replies=replies)
    chain = build_lcel_chain(retriever, llm, memory=mem, rewriter=RecordingRewriter(), **options)
    return chain, llm, mem, retriever


def test_lcel_chain_answers_from_memory_and_records() -> None:
    chain, llm, memory, retriever = make_chain(["Pas de cours le samedi."])

    out = chain.invoke({"input": QUESTION})

    assert set(out) == {"question", "rewritten_question", "context", "answer"}
    assert out["rewritten_question"] == REWRITTEN
    assert out["answer"] == "Pas de cours le samedi."
    assert [d.metadata["source"] for d in out["context"]] == ["a.md", "b.md"]
    assert retriever.queries == [REWRITTEN]
    prompt = llm.calls[0][-1].content
    assert "Conversation so far:\nHuman: Quels sont les horaires" in prompt
    assert prompt.endswith(f"Question: {REWRITTEN}")
    last = memory.context().turns[-1]
    assert (last.human, last.ai) == (QUESTION, "Pas de cours le samedi.")


def test_lcel_chain_without_history_does_not_rewrite() -> None:
    chain, _, memory, retriever = make_chain(["Trente jours."], memory=WindowCore())
    out = chain.invoke({"question": "Politique de retour ?"})
    assert out["rewritten_question"] == "Politique de retour ?"
    assert retriever.queries == ["Politique de retour ?"]
    assert memory.stats().turns == 1


def test_lcel_chain_streams_answer_tokens_and_records_only_at_the_end() -> None:
    chain, _, memory, _ = make_chain(["Pas de cours le samedi."])
    answer_chunks = []
    turns_while_streaming = set()
    for chunk in chain.stream(QUESTION):
        if "answer" in chunk:
            answer_chunks.append(chunk["answer"])
            turns_while_streaming.add(memory.stats().turns)
    assert len(answer_chunks) > 1
    assert "".join(answer_chunks) == "Pas de cours le samedi."
    assert turns_while_streaming == {1}
    assert memory.context().turns[-1].ai == "Pas de cours le samedi."


async def test_lcel_chain_astream_and_ainvoke_record() -> None:
    chain, _, memory, _ = make_chain(["Pas de cours le samedi.", "Le dimanche non plus."])
    pieces = [chunk async for chunk in chain.astream({"input": QUESTION})]
    assert "".join(p.get("answer", "") for p in pieces) == "Pas de cours le samedi."
    out = await chain.ainvoke({"input": "Et le dimanche ?"})
    assert out["answer"] == "Le dimanche non plus."
    assert [t.ai for t in memory.context().turns][-2:] == [
        "Pas de cours le samedi.",
        "Le dimanche non plus.",
    ]


def test_lcel_chain_failure_records_nothing_sync_and_stream() -> None:
    chain, _, memory, _ = make_chain([RuntimeError("down"), RuntimeError("down")])
    with pytest.raises(RuntimeError, match="down"):
        chain.invoke({"input": QUESTION})
    with pytest.raises(RuntimeError, match="down"):
        list(chain.stream({"input": QUESTION}))
    assert memory.stats().turns == 1


async def test_lcel_chain_async_failure_records_nothing() -> None:
    chain, _, memory, _ = make_chain([RuntimeError("down")])
    with pytest.raises(RuntimeError, match="down"):
        await chain.ainvoke({"input": QUESTION})
    assert memory.stats().turns == 1


@pytest.mark.parametrize("bad", [{"input": "   "}, {"query": "x"}, {"input": 3}, 42])
def test_lcel_chain_refuses_bad_input(bad: Any) -> None:
    chain, llm, memory, _ = make_chain(["x"])
    with pytest.raises(InvalidInputError):
        chain.invoke(bad)
    assert llm.calls == [] and memory.stats().turns == 1


def test_lcel_chain_puts_entity_and_long_term_blocks_in_the_prompt() -> None:
    store = InMemoryStore()
    entities = EntityTracker(RuleEntityExtractor(use_spacy=False), user_id="alice", store=store)
    long_term = FakeLongTerm()
    chain, llm, _, _ = make_chain(["1599 €."], entities=entities, long_term=long_term)
    chain.invoke({"input": "Combien coûte le Dell XPS 15 ?"})
    prompt = llm.calls[0][-1].content
    assert "User profile:\nlanguage: fr" in prompt
    assert "Relevant facts:" in prompt
    assert entities.get("XPS 15") is not None  # observed after the answer
    assert long_term.observed[0][0] == "Combien coûte le Dell XPS 15 ?"


def test_history_aware_retriever_fits_create_retrieval_chain() -> None:
    from langchain_classic.chains import create_retrieval_chain
    from langchain_classic.chains.combine_documents import create_stuff_documents_chain
    from langchain_core.prompts import ChatPromptTemplate

    retriever, rewriter = RecordingRetriever(queries=[]), RecordingRewriter()
    prompt = ChatPromptTemplate.from_messages([("system", "{context}"), ("human", "{input}")])
    answer = create_stuff_documents_chain(ScriptedChatModel(replies=["ok"]), prompt)
    chain = create_retrieval_chain(history_aware_retriever(retriever, rewriter), answer)
    history = [HumanMessage("Pilates ?"), AIMessage("Lundi.")]

    out = chain.invoke({"input": QUESTION, "chat_history": history})

    assert retriever.queries == [REWRITTEN]
    assert out["answer"] == "ok"
    assert rewriter.calls == [(QUESTION, [("human", "Pilates ?"), ("ai", "Lundi.")], ())]


def test_history_aware_retriever_reads_history_from_memory_async() -> None:
    retriever = RecordingRetriever(queries=[])
    runnable = history_aware_retriever(retriever, RecordingRewriter(), seeded_memory())
    docs = asyncio.run(runnable.ainvoke({"input": QUESTION}))
    assert retriever.queries == [REWRITTEN] and len(docs) == 2


def test_middleware_with_the_real_context_builder_and_records_into_its_memory() -> None:
    from memory_chains.context import ContextBuilder, short_term_sources
    from memory_chains.testing import word_counter

    memory = seeded_memory()
    builder = ContextBuilder(short_term_sources(memory), 200, word_counter)
    llm = ScriptedChatModel(replies=["Pas le samedi."])
    agent = create_agent(llm, middleware=[MemoryMiddleware(memory, context=builder)])

    agent.invoke(user(QUESTION))

    (only,) = llm.calls[0]
    assert "Quels sont les horaires du cours de Pilates ?" in only.content
    assert only.content.endswith(f"Question: {QUESTION}")
    assert builder.build("x").turns[-1] == (QUESTION, "Pas le samedi.")
