"""The function words of French and English are written once (``memory_chains._terms``).

A module that needs more stop words adds its own to that list instead of keeping a copy
that drifts from it. The capitalised-non-name list of the entity rules is another thing
(product names hold "Plus", "One", "Go"), and is not checked here.
"""

from __future__ import annotations

import pytest

from memory_chains import _terms
from memory_chains.context import _topic
from memory_chains.longterm import _fact_merge
from memory_chains.metrics import _usage


@pytest.mark.parametrize(
    "words",
    [_topic._STOP, _usage._STOP, _fact_merge._FUNCTION_WORDS],
    ids=["topic", "usage", "fact_merge"],
)
def test_every_stop_list_is_built_on_the_shared_function_words(words: frozenset[str]) -> None:
    assert words >= _terms.STOP_WORDS


def test_each_language_is_written_once_and_both_are_used() -> None:
    assert {"les", "chez", "combien"} <= _terms.FRENCH_STOP_WORDS
    assert {"the", "whose", "without"} <= _terms.ENGLISH_STOP_WORDS
    assert _terms.STOP_WORDS == _terms.FRENCH_STOP_WORDS | _terms.ENGLISH_STOP_WORDS


def test_the_words_that_carry_a_subject_are_kept() -> None:
    assert _topic.content_words("Et chez vous, combien coûte le cours de Pilates ?") == {
        "cour",
        "pilate",
        "coute",
    }
    assert _usage.content_words("Sans doute plus tard, chez Dell") == {"doute", "tard", "dell"}
