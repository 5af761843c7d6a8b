"""Context builder budgets and priorities: blocks, shrinking, allocation, determinism."""

from __future__ import annotations

import asyncio
from dataclasses import FrozenInstanceError
from typing import Any

import pytest

from memory_chains.context import (
    BuiltContext,
    ContextBlock,
    ContextBuilder,
    RecentTurnsSource,
    TextSource,
    allocate,
    fit,
    short_term_sources,
)
from memory_chains.errors import InvalidInputError
from memory_chains.memory import WindowCore
from memory_chains.testing import word_counter


class BlockSource:
    """A source returning a fixed block (records the budgets it was asked for)."""

    def __init__(self, block: ContextBlock) -> None:
        self.name = block.name
        self.priority = block.priority
        self._block = block
        self.asked: list[int] = []

    def block(self, question: str, max_tokens: int) -> ContextBlock:
        self.asked.append(max_tokens)
        return self._block


def items(name: str, n: int, priority: int, words: int = 4, **kw: object) -> ContextBlock:
    """A block of ``n`` items of ``words`` words each: item i is 'name-i w w w'."""
    body = tuple(f"{name}-{i} " + " ".join(["w"] * (words - 1)) for i in range(n))
    return ContextBlock(name, body, priority=priority, **kw)  # type: ignore[arg-type]


def cost(block: ContextBlock) -> int:
    return word_counter(block.render())


# -- blocks ----------------------------------------------------------------------------


def test_block_is_immutable_and_validates_its_fields() -> None:
    block = ContextBlock("facts", ("a",))
    with pytest.raises(FrozenInstanceError):
        block.name = "other"  # type: ignore[misc]
    with pytest.raises(InvalidInputError, match="block name"):
        ContextBlock("Not A Name")
    with pytest.raises(InvalidInputError, match="shrink"):
        ContextBlock("facts", ("a",), shrink="halve")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="turns for"):
        ContextBlock("recent", ("a",), turns=(("q1", "a1"), ("q2", "a2")))
    with pytest.raises(InvalidInputError, match="tuple of strings"):
        ContextBlock("facts", "a string")  # type: ignore[arg-type]


def test_fit_drop_oldest_keeps_the_newest_items_and_their_turns() -> None:
    block = ContextBlock(
        "recent",
        ("Human: q1\nAI: a1", "Human: q2\nAI: a2", "Human: q3\nAI: a3"),
        shrink="drop_oldest",
        turns=(("q1", "a1"), ("q2", "a2"), ("q3", "a3")),
    )
    small = fit(block, 10, word_counter)
    assert small is not None
    assert small.items == ("Human: q2\nAI: a2", "Human: q3\nAI: a3")
    assert small.turns == (("q2", "a2"), ("q3", "a3"))
    assert cost(small) <= 10
    assert len(block.items) == 3  # the input is unchanged


def test_fit_drop_last_keeps_the_most_relevant_items() -> None:
    block = items("facts", 5, 0)
    small = fit(block, 2 + 4 * 2, word_counter)
    assert small is not None and small.items == block.items[:2]


def test_fit_truncate_cuts_at_a_word_with_a_marker() -> None:
    block = ContextBlock.from_text("note", "un deux trois quatre cinq six sept")
    small = fit(block, 6, word_counter)
    assert small is not None
    assert small.items == ("un deux trois […]",)


def test_fit_drops_whole_blocks_and_blocks_below_min_tokens() -> None:
    whole = items("rules", 2, 0, shrink="drop")
    assert fit(whole, cost(whole), word_counter) is whole
    assert fit(whole, cost(whole) - 1, word_counter) is None
    floor = items("facts", 4, 0, min_tokens=8)
    assert fit(floor, 7, word_counter) is None
    assert fit(floor, 8, word_counter) is not None
    assert fit(items("facts", 1, 0), 3, word_counter) is None  # not even one item fits


# -- allocation ------------------------------------------------------------------------


def test_everything_fits_so_every_block_is_kept_whole() -> None:
    blocks = [items("a", 2, 1), items("b", 2, 2)]
    assert allocate(blocks, 100, word_counter) == tuple(blocks)


def test_lowest_priority_shrinks_first() -> None:
    high, low = items("high", 4, 9), items("low", 4, 1)
    # 18 tokens each: fair shares of 17 hold 3 items (14); the 6 left go to the high block
    high_fit, low_fit = allocate([high, low], 34, word_counter)
    assert high_fit is high
    assert low_fit is not None and len(low_fit.items) == 3
    low_fit, high_fit = allocate([low, high], 34, word_counter)  # order does not matter
    assert low_fit is not None and len(low_fit.items) == 3 and high_fit is high


def test_each_block_keeps_its_fair_share_against_a_greedy_one() -> None:
    greedy = items("greedy", 40, 9)  # 162 tokens, highest priority
    modest = items("modest", 2, 1)  # 10 tokens
    greedy_fit, modest_fit = allocate([greedy, modest], 60, word_counter)
    assert modest_fit is modest  # 10 < fair share 30: kept whole
    assert greedy_fit is not None and cost(greedy_fit) <= 50


def test_a_block_that_cannot_live_on_its_share_takes_it_from_lower_priorities() -> None:
    rules = ContextBlock("rules", ("one two three four five six",), priority=9, shrink="drop")
    notes = items("notes", 3, 1)
    rules_fit, notes_fit = allocate([rules, notes], 12, word_counter)
    assert rules_fit is rules  # needs 8, fair share 6: it takes the notes' reserve
    assert notes_fit is None  # 4 tokens left: not even one note (5) fits


def test_result_never_exceeds_the_budget_and_follows_input_order() -> None:
    blocks = [items("a", 3, 2), items("b", 5, 3), items("c", 2, 1), ContextBlock("empty")]
    for budget in range(0, 60, 3):
        fitted = allocate(blocks, budget, word_counter)
        assert len(fitted) == 4 and fitted[3] is None
        rendered = "\n\n".join(b.render() for b in fitted if b is not None)
        assert word_counter(rendered) <= budget


def test_non_additive_counter_is_checked_on_the_joined_rendering() -> None:
    # counts each blank-line separator as 5 tokens: per-block costs underestimate the total
    def lumpy(text: str) -> int:
        return len(text.split()) + 5 * text.count("\n\n")

    blocks = [items("a", 3, 2), items("b", 3, 1)]
    fitted = allocate(blocks, 30, lumpy)
    rendered = "\n\n".join(b.render() for b in fitted if b is not None)
    assert lumpy(rendered) <= 30


# -- the builder -----------------------------------------------------------------------


def test_builder_reports_kept_shrunk_dropped_and_tokens() -> None:
    profile = BlockSource(items("profile", 2, 70))  # 10 tokens
    facts = BlockSource(items("facts", 6, 65))  # 26 tokens
    docs = BlockSource(items("documents", 3, 30, shrink="drop"))  # 14 tokens
    ctx = ContextBuilder([profile, facts, docs], 30, word_counter).build("question ?")

    assert ctx.kept == ("profile",)
    assert ctx.shrunk == ("facts",)
    assert ctx.dropped == ("documents",)
    assert ctx.tokens["profile"] == 10 and ctx.tokens["documents"] == 0
    assert ctx.tokens["facts"] == 18  # 4 of its 6 facts
    assert ctx.total_tokens == word_counter(ctx.render()) <= 30
    report = {r.name: r for r in ctx.reports}
    assert report["facts"].need == 26 and report["facts"].reason == "budget"
    assert [b.name for b in ctx.blocks] == ["profile", "facts"]  # source order


def test_build_is_deterministic() -> None:
    sources = [BlockSource(items("a", 7, 1)), BlockSource(items("b", 7, 1))]
    builder = ContextBuilder(sources, 40, word_counter)
    first = builder.build("q")
    assert all(builder.build("q") == first for _ in range(5))


def test_sources_are_capped_by_their_own_max_tokens() -> None:
    capped = BlockSource(items("entities", 1, 1))
    capped.max_tokens = 25  # type: ignore[attr-defined]
    free = BlockSource(items("facts", 1, 1))
    ContextBuilder([capped, free], 100, word_counter).build("q")
    assert capped.asked == [25] and free.asked == [100]


def test_empty_blocks_are_reported_empty_not_dropped() -> None:
    ctx = ContextBuilder([BlockSource(ContextBlock("facts"))], 50, word_counter).build("q")
    assert ctx.reports[0].status == "empty"
    assert ctx.dropped == () and ctx.render() == ""


def test_builder_rejects_bad_configuration() -> None:
    with pytest.raises(InvalidInputError, match="unique"):
        ContextBuilder([TextSource("a", "x"), TextSource("a", "y")], 10, word_counter)
    with pytest.raises(InvalidInputError, match="not a context source"):
        ContextBuilder([object()], 10, word_counter)  # type: ignore[list-item]
    with pytest.raises(InvalidInputError, match="max_tokens"):
        ContextBuilder([], -1, word_counter)
    with pytest.raises(InvalidInputError, match="question must be a string"):
        ContextBuilder([], 10, word_counter).build(None)  # type: ignore[arg-type]


def test_a_source_returning_something_else_is_named() -> None:
    class Broken:
        name, priority = "broken", 1

        def block(self, question: str, max_tokens: int) -> object:
            return "text"

    with pytest.raises(InvalidInputError, match="'broken' returned str"):
        ContextBuilder([Broken()], 10, word_counter).build("q")  # type: ignore[list-item]


def test_built_context_render_can_leave_blocks_out() -> None:
    ctx = ContextBuilder(
        [TextSource("a", "alpha", title="A"), TextSource("b", "beta")], 50, word_counter
    ).build("q")
    assert ctx.render() == "## A\nalpha\n\n## b\nbeta"
    assert ctx.render(exclude=["a"]) == "## b\nbeta"
    assert isinstance(ctx, BuiltContext) and ctx.get("b") is not None


def test_short_term_memory_is_shrunk_oldest_turn_first() -> None:
    mem = WindowCore(k=10)
    for i in range(6):
        mem.add_exchange(f"question {i} sur le produit", f"réponse {i}")
    builder = ContextBuilder(short_term_sources(mem), 30, word_counter)
    ctx = builder.build("et ensuite ?")
    recent = ctx.get("recent")
    assert recent is not None
    assert recent.turns[-1] == ("question 5 sur le produit", "réponse 5")
    assert recent.turns[0][0] != "question 0 sur le produit"
    assert ctx.total_tokens <= 30
    assert mem.stats().turns == 6  # reading never changes the memory


def test_abuild_gives_the_same_result_as_build() -> None:
    mem = WindowCore(k=3)
    mem.add_exchange("Quels sont les horaires du cours de Pilates ?", "Mardi 12h30.")

    class AsyncOnly(BlockSource):
        async def ablock(self, question: str, max_tokens: int) -> ContextBlock:
            return self._block

    sources: list[Any] = [
        RecentTurnsSource(mem),
        AsyncOnly(items("facts", 4, 5)),
        TextSource("n", "x y"),
    ]
    builder = ContextBuilder(sources, 25, word_counter, topic=True)
    assert asyncio.run(builder.abuild("Et pour le samedi ?")) == builder.build(
        "Et pour le samedi ?"
    )
