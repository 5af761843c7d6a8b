"""The memory protocol: every memory implements it, and a memory of the user's own plugs into
the context builder, the classic ContextMemory shell and the LangChain 1.x Memories."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from memory_chains.context import (
    ContextBuilder,
    ContextMemory,
    MemorySource,
    memory_sources,
    recording_sources,
    short_term_sources,
)
from memory_chains.entities import EntityTracker, RuleEntityExtractor
from memory_chains.errors import InvalidInputError
from memory_chains.langchain_v1 import Memories
from memory_chains.longterm import LongTermMemory
from memory_chains.memory import BufferMemory, SummaryCore, WindowCore
from memory_chains.protocol import (
    ConversationMemory,
    MemoryBase,
    MemoryBlock,
    as_memory,
    block_name,
    check_budget,
)
from memory_chains.recall import TurnIndex
from memory_chains.stores import InMemoryStore
from memory_chains.testing import HashEmbeddings, ScriptedChatModel, word_counter


class Deadlines(MemoryBase):
    """A user's memory: the dates the customer asked about, newest first."""

    block_names = ("deadlines",)

    def __init__(self) -> None:
        self.seen: list[str] = []

    def record(self, human: str, ai: str) -> None:
        if any(ch.isdigit() for ch in human):
            self.seen.insert(0, human)

    def context_block(self, question: str, max_tokens: int, name: str | None = None) -> MemoryBlock:
        block_name(self, name)
        check_budget(max_tokens)
        return MemoryBlock("deadlines", tuple(self.seen), title="Dates asked about")


def every_memory() -> list[Any]:
    store, emb = InMemoryStore(), HashEmbeddings()
    return [
        WindowCore(k=2),
        SummaryCore(ScriptedChatModel()),
        EntityTracker(RuleEntityExtractor(use_spacy=False)),
        LongTermMemory(store, "ann", emb),
        LongTermMemory(store, "ann", emb).session("s1"),
        TurnIndex(emb).for_user("ann"),
        Deadlines(),
    ]


@pytest.mark.parametrize("memory", every_memory(), ids=lambda m: type(m).__name__)
def test_every_memory_gives_each_of_its_blocks_and_refuses_other_names(memory: Any) -> None:
    assert isinstance(memory, ConversationMemory)
    memory.record("Livraison possible avant le 12 mai ?", "Oui, en Colissimo.")
    for name in memory.block_names:
        block = memory.context_block("Et la livraison ?", 200, name)
        assert isinstance(block, MemoryBlock) and block.name == name
        again = asyncio.run(memory.acontext_block("Et la livraison ?", 200, name))
        assert again == block  # the async twin reads the same
    assert memory.context_block("q", 200).name == memory.block_names[0]
    with pytest.raises(InvalidInputError, match="not 'nope'"):
        memory.context_block("q", 200, "nope")
    with pytest.raises(InvalidInputError, match="max_tokens"):
        memory.context_block("q", -1)


def test_memory_block_checks_its_fields() -> None:
    block = MemoryBlock("facts", ["a", "b"])
    assert block.items == ("a", "b") and block.text() == "a\nb" and not block.empty
    assert MemoryBlock("facts").empty
    with pytest.raises(InvalidInputError, match="needs a name"):
        MemoryBlock("")
    with pytest.raises(InvalidInputError, match="items must be a sequence"):
        MemoryBlock("facts", "one line")  # type: ignore[arg-type]


def test_as_memory_takes_a_classic_shell_core_and_refuses_the_rest() -> None:
    assert isinstance(as_memory(BufferMemory()), ConversationMemory)
    with pytest.raises(InvalidInputError, match="must implement ConversationMemory"):
        as_memory({"recent": []})


def test_a_user_memory_in_the_builder_records_once_and_shows_its_block() -> None:
    window, notes = WindowCore(k=3, token_counter=word_counter), Deadlines()
    sources = [*short_term_sources(window), *memory_sources(notes)]
    builder = ContextBuilder(sources, 200, word_counter)
    assert [s.name for s in recording_sources(builder.sources)] == ["summary", "deadlines"]

    memory = ContextMemory(builder=builder)
    memory.save_context({"question": "Livrable avant le 12 mai ?"}, {"answer": "Oui."})
    asyncio.run(memory.asave_context({"question": "Et le 20 ?"}, {"answer": "Aussi."}))

    assert window.stats().turns == 2  # two sources read the window: recorded once per turn
    assert notes.seen == ["Et le 20 ?", "Livrable avant le 12 mai ?"]
    ctx = builder.build("Et la livraison ?")
    assert ctx.render().count("## Dates asked about") == 1
    assert ctx.get("deadlines") is not None
    source = next(s for s in builder.sources if s.name == "deadlines")
    assert isinstance(source, MemorySource) and source.priority == 55  # a block of its own


def test_a_user_memory_in_memories_is_viewed_and_recorded() -> None:
    notes = Deadlines()
    memories = Memories(WindowCore(k=2), memories=[notes])
    memories.record("Livrable avant le 12 mai ?", "Oui.")
    asyncio.run(memories.arecord("Et le 20 ?", "Aussi."))
    view = memories.view("Et la livraison ?")
    assert view.blocks == (("Dates asked about", "Et le 20 ?\nLivrable avant le 12 mai ?"),)
    assert asyncio.run(memories.aview("Et la livraison ?")) == view
    assert len(view.turns) == 4


def test_memories_file_long_term_exchanges_under_the_short_term_session_and_turn() -> None:
    window = WindowCore(k=2, user_id="ann", session_id="s9")
    longterm = LongTermMemory(InMemoryStore(), "ann", HashEmbeddings())
    memories = Memories(window, long_term=longterm)
    memories.record("Bonjour", "Bonjour !")
    memories.record("Je préfère le yoga le soir.", "Noté.")
    assert [f.sources for f in longterm.facts()] == [(("s9", 2),)]
    assert memories.recorders == (window, longterm.session("s9"))


def test_a_long_term_session_equals_another_of_the_same_memory_and_session() -> None:
    memory = LongTermMemory(InMemoryStore(), "ann", HashEmbeddings())
    assert memory.session("s1") == memory.session("s1")
    assert len({memory.session("s1"), memory.session("s1"), memory.session("s2")}) == 2
    other = LongTermMemory(InMemoryStore(), "ann", HashEmbeddings())
    assert memory.session("s1") != other.session("s1")


def test_a_failing_memory_raises_and_the_earlier_ones_keep_their_write() -> None:
    class Failing(Deadlines):
        def record(self, human: str, ai: str) -> None:
            raise InvalidInputError("refused")

    window = WindowCore(k=2, token_counter=word_counter)
    builder = ContextBuilder(
        [*short_term_sources(window), *memory_sources(Failing())], 100, word_counter
    )
    with pytest.raises(InvalidInputError, match="refused"):
        builder.record("q", "a")
    assert window.stats().turns == 1


def test_a_short_term_memory_of_ones_own_gives_the_history_of_memories() -> None:
    class LastTurn(MemoryBase):
        block_names = ("recent",)

        def __init__(self) -> None:
            self.turn: tuple[str, str] | None = None

        def record(self, human: str, ai: str) -> None:
            self.turn = (human, ai)

        def context_block(
            self, question: str, max_tokens: int, name: str | None = None
        ) -> MemoryBlock:
            turns = (self.turn,) if self.turn else ()
            return MemoryBlock("recent", tuple(f"{h} / {a}" for h, a in turns), turns=turns)

    memories = Memories(LastTurn())
    memories.record("Bonjour", "Bonjour !")
    memories.record("Un vélo rouge ?", "En stock.")
    view = memories.view("Et en bleu ?")
    assert view.turns == (("human", "Un vélo rouge ?"), ("ai", "En stock."))
    assert view.summary == "" and asyncio.run(memories.aview("Et en bleu ?")) == view


def test_implements_sees_members_set_on_the_instance_only() -> None:
    from memory_chains.protocol import ConversationMemory, implements

    class Late:
        def __init__(self, ready: bool) -> None:
            if ready:
                self.block_names = ("late",)

        def record(self, human: str, ai: str) -> None: ...

        def context_block(self, question: str, max_tokens: int, name: str | None = None) -> Any:
            return None

    # The class lacks block_names, so the answer is per instance, not cached per class.
    assert implements(Late(True), ConversationMemory)
    assert not implements(Late(False), ConversationMemory)
    assert implements(Late(True), ConversationMemory)


def test_bm25_postings_grow_after_a_search() -> None:
    from memory_chains._bm25 import BM25Index

    index = BM25Index()
    index.add(["sable", "dune"])
    first = index.scores(["dune"])
    index.add(["dune", "dune"])  # the arrays a search read are not held
    second = index.scores(["dune"])
    assert len(first) == 1 and len(second) == 2
    assert index.document_frequency("dune") == 2 and second[1] > second[0] > 0
