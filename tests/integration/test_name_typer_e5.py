"""Typing names with no sentence evidence by the real multilingual-e5-small embeddings.

Every name is invented for this test (none is in the packaged examples or an evaluation
set); each has the plain shape of its kind, which a typer that works must read.

Run: ``.venv/bin/pytest -m integration tests/integration/test_name_typer_e5.py``
"""

from __future__ import annotations

import pytest

from memory_chains.entities import NameTyper, RuleEntityExtractor, load_name_examples

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def typer() -> NameTyper:
    return NameTyper()


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Sophie Delaunoy", "PERSON"),
        ("Graham Whitcombe", "PERSON"),
        ("Verlano Pro 15", "PRODUCT"),
        ("Pack Sérénité Plus", "PRODUCT"),
        ("Master Droit Public", "CONCEPT"),
    ],
)
def test_the_typer_reads_the_shape_of_each_kind(typer: NameTyper, name: str, expected: str) -> None:
    assert name not in {example for example, _ in load_name_examples()}
    assert typer.best_type(name) == expected, typer.scores(name)


def test_the_rules_ask_the_typer_only_when_the_sentence_is_silent(typer: NameTyper) -> None:
    types = ["PERSON", "PRODUCT", "LOCATION", "ORGANIZATION"]
    silent = "User: Et Maltrevia Cloud, ça vaut le coup ?"
    by_shape = RuleEntityExtractor(name_typer=None).extract(silent, types).mentions
    by_typer = RuleEntityExtractor(name_typer=typer).extract(silent, types).mentions
    assert [(m.name, m.type) for m in by_shape] == [("Maltrevia Cloud", "PERSON")]
    assert [(m.name, m.type) for m in by_typer] == [("Maltrevia Cloud", "PRODUCT")]
    placed = RuleEntityExtractor(name_typer=typer).extract(
        "User: On se retrouve à Maltrevia Cloud ?", types
    )
    assert [(m.name, m.type) for m in placed.mentions] == [("Maltrevia Cloud", "LOCATION")]
