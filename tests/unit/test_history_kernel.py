"""One reading of a history: the rewriter, the classic chain and the topic tracker agree."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from memory_chains._history import read_history
from memory_chains.context import to_exchanges
from memory_chains.errors import InvalidInputError
from memory_chains.rag import normalise_history as rag_history
from memory_chains.rewrite._history import normalise_history as rewrite_history

MESSAGES = [
    SystemMessage("Tu es un assistant."),
    HumanMessage("Je regarde le Dell XPS 15."),
    AIMessage("Il est en stock."),
    ToolMessage("{'stock': 3}", tool_call_id="call-1"),
    HumanMessage("Et sa garantie ?"),
]


def test_every_reader_sees_the_same_conversation() -> None:
    expected = (
        ("user", "Je regarde le Dell XPS 15."),
        ("assistant", "Il est en stock."),
        ("user", "Et sa garantie ?"),
    )
    assert read_history(MESSAGES) == expected
    assert rewrite_history(MESSAGES) == expected
    to_type = {"user": "human", "assistant": "ai"}
    assert rag_history(MESSAGES) == [(to_type[r], t) for r, t in expected]
    assert to_exchanges(MESSAGES) == [
        ("Je regarde le Dell XPS 15.", "Il est en stock."),
        ("Et sa garantie ?", ""),
    ]


def test_role_spellings_and_exchange_pairs() -> None:
    pairs = [(" Human ", "a"), ("AI", "b"), ("model", "c"), ("system", "d"), ("user", "  ")]
    assert read_history(pairs) == (("user", "a"), ("assistant", "b"), ("assistant", "c"))
    # The classic chain's (human_text, ai_text) exchanges, only where they are expected.
    assert rag_history([("Bonjour", "Salut")]) == [("human", "Bonjour"), ("ai", "Salut")]
    with pytest.raises(InvalidInputError, match="unknown role"):
        rewrite_history([("Bonjour", "Salut")])


@pytest.mark.parametrize(
    "bad",
    [[("user", 3)], [("user", "a", "b")], [42], [{"role": "user", "content": "a"}], 42],
)
def test_a_bad_item_is_the_same_typed_error_everywhere(bad: Any) -> None:
    for reader in (read_history, rewrite_history, rag_history):
        with pytest.raises(InvalidInputError):
            reader(bad)


def test_a_string_is_a_transcript_only_for_the_classic_chain() -> None:
    with pytest.raises(InvalidInputError, match="not a string"):
        rewrite_history("Human: Bonjour")
    assert rag_history("Human: Bonjour\nAssistant: Salut") == [
        ("human", "Bonjour"),
        ("ai", "Salut"),
    ]
