"""The packaged entity sets: the sealed dev / test split, and the older legacy sets."""

from __future__ import annotations

import hashlib
import json
from collections import Counter

import pytest

from memory_chains.cli._eval_entities import SETS, packaged_entity_set
from memory_chains.evaluation.entities import load_dataset

TYPES = {"PERSON", "ORGANIZATION", "PRODUCT", "LOCATION", "DATE", "MONEY", "CONCEPT"}
RELATIONS = {
    "WORKS_AT",
    "LOCATED_IN",
    "OWNS",
    "COMPARES_TO",
    "PART_OF",
    "PREFERS",
    "INTERESTED_IN",
    "MADE_BY",
}


def _split_of(item_id: str) -> str:
    return "dev" if hashlib.sha256(item_id.encode("utf-8")).digest()[0] < 128 else "test"


def _lines(name: str) -> list[dict]:
    text = packaged_entity_set(name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize("name", ["dev", "test"])
def test_every_item_sits_in_the_split_its_id_hashes_to(name):
    rows = _lines(name)
    assert rows, name
    assert [r["id"] for r in rows if _split_of(r["id"]) != name] == []


def test_the_sealed_collection_is_as_described():
    dev, test = _lines("dev"), _lines("test")
    rows = dev + test
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)) == 64
    assert Counter(r["lang"] for r in rows) == {"fr": 38, "en": 26}
    assert len({r["domain"] for r in rows}) == 11
    entities = [e for r in rows for e in r["entities"]]
    assert len(entities) == 746 and {e["type"] for e in entities} == TYPES
    relations = [rel for r in rows for rel in r["relations"]]
    assert len(relations) == 293 and {rel[1] for rel in relations} == RELATIONS


@pytest.mark.parametrize("name", sorted(set(SETS)))
def test_packaged_sets_load(name):
    data = load_dataset(packaged_entity_set(name))
    assert data and all(d.turns and d.entities for d in data)
    annotated = name in ("dev", "test")
    assert all((d.relations is not None) == annotated for d in data)


def test_relation_ends_must_be_entities_of_the_line(tmp_path):
    from memory_chains.errors import InvalidInputError

    line = {
        "id": "x",
        "turns": [["user", "Nadia est chez Ravalco."]],
        "entities": [{"name": "Nadia", "type": "PERSON"}],
        "relations": [["Nadia", "WORKS_AT", "Ravalco"]],
    }
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    with pytest.raises(InvalidInputError, match="Ravalco"):
        load_dataset(path)
