"""Buffer, window and token-budget memories (LangChain-free cores), with fakes."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_chains.errors import InvalidInputError
from memory_chains.memory import (
    BufferCore,
    MemoryContext,
    TokenBudgetCore,
    WindowCore,
    normalize_message,
)
from memory_chains.privacy import PIIMasker
from memory_chains.stores import InMemoryStore, SQLiteStore, Turn
from memory_chains.testing import word_counter


def fill(mem: object, n: int, start: int = 1) -> None:
    for i in range(start, start + n):
        mem.add_exchange(f"question {i}", f"answer {i}")  # type: ignore[attr-defined]


# -- normalisation and bad input --------------------------------------------------------


def test_normalisation_rules() -> None:
    assert normalize_message("  a\r\nb\rc\x07\u200b ", "m") == "a\nb\nc"
    assert normalize_message("e\u0301", "m") == "é"  # NFC
    assert normalize_message("tab\tkept", "m") == "tab\tkept"
    assert normalize_message("  ", "m", allow_empty=True) == ""
    cut = normalize_message("x" * 100, "m", max_chars=20, on_overflow="truncate")
    assert len(cut) <= 20 and cut.endswith("[…]")


@pytest.mark.parametrize(
    ("human", "ai"),
    [
        (None, "a"),
        ("q", None),
        (3, "a"),
        ("q", b"bytes"),
        ("", "a"),
        (" \n\x07 ", "a"),
        ("x" * 1_000_000, "a"),
        ("q", "y" * 1_000_000),
    ],
)
def test_bad_exchanges_raise_and_write_nothing(human: object, ai: object) -> None:
    mem = BufferCore()
    with pytest.raises(InvalidInputError):
        mem.add_exchange(human, ai)
    assert mem.store.count_turns("default", "default") == 0


def test_empty_answer_is_stored_as_empty() -> None:
    mem = BufferCore()
    mem.add_exchange("q", "   ")
    assert mem.context().turns[0].ai == ""


def test_one_megabyte_can_be_truncated_on_request() -> None:
    mem = BufferCore(on_overflow="truncate", max_chars=1000)
    mem.add_exchange("x" * 1_000_000, "ok")
    assert len(mem.context().turns[0].human) <= 1000


@pytest.mark.parametrize(
    "kwargs",
    [
        {"user_id": "bad id"},
        {"session_id": ""},
        {"session_id": "s" * 65},
        {"store": 42},
        {"pii": "yes"},
        {"max_chars": 0},
        {"on_overflow": "drop"},
        {"token_counter": 5},
    ],
)
def test_bad_configuration(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidInputError):
        BufferCore(**kwargs)  # type: ignore[arg-type]


# -- PII --------------------------------------------------------------------------------


def test_pii_masked_before_storage_by_default() -> None:
    store = InMemoryStore()
    mem = BufferCore(store)
    mem.add_exchange("Mon IBAN: FR76 3000 6000 0112 3456 7890 189", "Reçu jo@ex.fr")
    (turn,) = store.last_turns("default", "default", 1)
    assert turn.human == "Mon IBAN: [IBAN]" and turn.ai == "Reçu [EMAIL]"
    assert "FR76" not in mem.render()


def test_pii_can_be_disabled_or_customised() -> None:
    raw = BufferCore(pii=False)
    raw.add_exchange("a@b.fr", "ok")
    assert raw.context().turns[0].human == "a@b.fr"
    custom = BufferCore(pii=PIIMasker(kinds={"PHONE"}))
    custom.add_exchange("a@b.fr 06 12 34 56 78", "ok")
    assert custom.context().turns[0].human == "a@b.fr [PHONE]"
    upper = BufferCore(pii=str.upper)
    upper.add_exchange("abc", "def")
    assert upper.context().turns[0].human == "ABC"


# -- buffer / window --------------------------------------------------------------------


def test_buffer_returns_everything_in_order() -> None:
    mem = BufferCore()
    fill(mem, 5)
    assert [t.seq for t in mem.context().turns] == [1, 2, 3, 4, 5]
    assert mem.render().startswith("Human: question 1\nAI: answer 1\nHuman: question 2")


@pytest.mark.parametrize(
    ("k", "expected"), [(0, []), (1, [10]), (3, [8, 9, 10]), (50, list(range(1, 11)))]
)
def test_window_keeps_last_k(k: int, expected: list[int]) -> None:
    mem = WindowCore(k=k)
    fill(mem, 10)
    assert [t.seq for t in mem.context().turns] == expected
    assert mem.stats().turns == 10  # the log keeps everything


@pytest.mark.parametrize("k", [-1, 1.5, "2", True, None])
def test_window_bad_k(k: object) -> None:
    with pytest.raises(InvalidInputError):
        WindowCore(k=k)  # type: ignore[arg-type]


def test_window_k0_renders_empty_string_and_zero_tokens() -> None:
    mem = WindowCore(k=0, token_counter=word_counter)
    fill(mem, 3)
    assert mem.render() == ""
    stats = mem.stats()
    assert (stats.turns, stats.context_turns, stats.words, stats.tokens) == (3, 0, 0, 0)


def test_sessions_are_isolated() -> None:
    store = InMemoryStore()
    a = WindowCore(store=store, k=5, user_id="alice", session_id="s1")
    b = WindowCore(store=store, k=5, user_id="alice", session_id="s2")
    c = WindowCore(store=store, k=5, user_id="bob", session_id="s1")
    a.add_exchange("from a", "x")
    b.add_exchange("from b", "x")
    assert [t.human for t in a.context().turns] == ["from a"]
    assert [t.human for t in b.context().turns] == ["from b"]
    assert c.context().turns == ()
    a.clear()
    assert a.context().turns == () and len(b.context().turns) == 1


def test_store_url_is_accepted(tmp_path: Path) -> None:
    mem = WindowCore(store=f"sqlite:///{tmp_path}/m.sqlite3", k=2)
    fill(mem, 3)
    assert isinstance(mem.store, SQLiteStore)
    assert [t.seq for t in mem.context().turns] == [2, 3]


# -- token budget -----------------------------------------------------------------------


def test_token_budget_keeps_recent_turns_that_fit() -> None:
    mem = TokenBudgetCore(max_tokens=20, token_counter=word_counter)
    fill(mem, 10)  # each exchange renders as "Human: question i\nAI: answer i" = 6 words
    ctx = mem.context()
    assert [t.seq for t in ctx.turns] == [8, 9, 10]
    assert word_counter(ctx.render()) <= 20


@pytest.mark.parametrize("budget", [0, 1, 5, 6, 13, 50, 500])
def test_token_budget_never_exceeded(budget: int) -> None:
    mem = TokenBudgetCore(max_tokens=budget, token_counter=len)  # characters as tokens
    for i in range(40):
        mem.add_exchange("q" * (i % 7 + 1), "a" * (i % 5))
    rendered = mem.render()
    assert len(rendered) <= budget
    if budget >= 500:
        assert len(mem.context().turns) > 16  # pages beyond the first one were read


def test_token_budget_skips_oversized_latest_turn() -> None:
    mem = TokenBudgetCore(max_tokens=10, token_counter=word_counter)
    mem.add_exchange("short", "one")
    mem.add_exchange(" ".join(["w"] * 50), "long")
    assert mem.context().turns == ()


def test_token_budget_reads_a_bounded_page(monkeypatch: pytest.MonkeyPatch) -> None:
    store = InMemoryStore()
    mem = TokenBudgetCore(store=store, max_tokens=30, token_counter=word_counter)
    fill(mem, 500)
    asked: list[int] = []
    original = store.last_turns

    def spy(user_id: str, session_id: str, n: int) -> list[Turn]:
        asked.append(n)
        return original(user_id, session_id, n)

    monkeypatch.setattr(store, "last_turns", spy)
    mem.context()
    assert asked == [16]  # first load: one page
    asked.clear()
    mem.context()
    assert len(asked) == 1 and asked[0] <= 8  # later loads: what fitted last time, plus 2


def test_default_token_counter_is_used_when_none_given() -> None:
    mem = TokenBudgetCore(max_tokens=50)
    assert mem.count_tokens("bonjour tout le monde") > 0
    assert mem.count_tokens("") == 0


# -- context and stats ------------------------------------------------------------------


def test_context_render_puts_summary_first() -> None:
    ctx = MemoryContext("S.", (Turn(1, "h", "a"),))
    assert ctx.render("U", "B", "Résumé") == "Résumé: S.\nU: h\nB: a"
    assert MemoryContext().render() == ""


def test_stats_count_words_and_tokens() -> None:
    mem = WindowCore(k=2, token_counter=word_counter)
    fill(mem, 3)
    stats = mem.stats()
    assert (stats.turns, stats.context_turns) == (3, 2)
    assert stats.words == stats.tokens == 12


async def test_async_flavours() -> None:
    mem = WindowCore(k=3)
    await mem.aadd_exchange("q", "a")
    ctx = await mem.acontext()
    assert [t.human for t in ctx.turns] == ["q"]
    await mem.aclear()
    assert (await mem.acontext()).turns == ()
