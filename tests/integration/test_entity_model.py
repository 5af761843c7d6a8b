"""Entity memory with the real embedded model on the seed dialogue (Dell XPS 15 / Lenovo).

Runs the embedded Qwen model through :func:`memory_chains.providers.get_chat_model`
(``MEMORY_CHAINS_MODEL_PATH`` may point at an already assembled GGUF). Each turn must cost
exactly one model call and leave the memory able to resolve the seed's references.
"""

from __future__ import annotations

import json

import pytest

from memory_chains.entities import EntityMemory, EntityTracker, LLMEntityExtractor
from memory_chains.stores import open_store

pytestmark = pytest.mark.integration

SEED = [
    (
        "Je cherche le Dell XPS 15",
        "Le Dell XPS 15 est un excellent laptop, il est affiché à 1599 euros.",
    ),
    ("Quelle est sa garantie ?", "La garantie du Dell XPS 15 est de 2 ans."),
    (
        "Et comparé à celui de Lenovo ?",
        "Le Lenovo ThinkPad X1 coûte 1799 euros et il est garanti 3 ans.",
    ),
]


@pytest.fixture(scope="module")
def model():
    from memory_chains.providers import get_chat_model

    return get_chat_model(max_tokens=256)


def test_seed_dialogue_one_call_per_turn_and_references_resolve(model, tmp_path):
    store = open_store(f"sqlite:///{tmp_path / 'entities.sqlite3'}")
    tracker = EntityTracker(
        LLMEntityExtractor(model), types="ecommerce", user_id="seed", store=store
    )
    reports = []
    for i, (human, ai) in enumerate(SEED):
        reports.append(tracker.observe(human, ai))
        if i == 0:
            sa = tracker.resolve("sa", question="Quelle est sa garantie ?")
            assert sa is not None and "xps 15" in sa.name.lower()
    assert [r.model_calls for r in reports] == [1, 1, 1], [r.error for r in reports]
    assert tracker.failed_turns == []

    xps = tracker.get("Dell XPS 15")
    lenovo = tracker.resolve("celui de Lenovo")
    assert xps is not None and xps.type == "PRODUCT" and xps.mentions >= 2
    assert lenovo is not None and "thinkpad" in lenovo.name.lower()
    assert lenovo.type == "PRODUCT"
    assert tracker.resolve("le premier") is not None

    block = tracker.context("Lequel est le moins cher ?", max_tokens=200)
    assert "Dell XPS 15" in block and "ThinkPad" in block
    salient = tracker.salient("Et le Lenovo ?", k=3)
    assert lenovo.name in salient and salient.index(lenovo.name) < 2

    # Persisted per user: a new tracker over the same store sees the same entities.
    again = EntityTracker(LLMEntityExtractor(model), types="ecommerce", user_id="seed", store=store)
    assert {e.name for e in again.entities()} == {e.name for e in tracker.entities()}
    exported = json.loads(again.export_json())
    assert exported["user_id"] == "seed" and len(exported["entities"]) >= 2


def test_entity_memory_with_the_real_model(model):
    memory = EntityMemory(llm=model, types="ecommerce")
    memory.save_context({"question": SEED[0][0]}, {"answer": SEED[0][1]})
    assert memory.last_report is not None and memory.last_report.model_calls == 1
    block = memory.load_memory_variables({"question": "Quelle est sa garantie ?"})["entities"]
    assert "Dell XPS 15" in block
    assert memory.resolve("sa") is not None


def test_unseen_names_typed_with_one_call_per_turn(model):
    """Invented names no gazetteer holds: the model and the sentence evidence agree."""
    tracker = EntityTracker(LLMEntityExtractor(model))
    report = tracker.observe(
        "Bonjour, je suis cliente chez Banque Sorel et j'habite à Quistrel.",
        "Bonjour, ici Soizic, conseillère chez Banque Sorel. Le forfait Azalée Duo coûte "
        "9,90 € par mois.",
    )
    assert report.model_calls == 1 and tracker.failed_turns == []
    types = {e.name: e.type for e in tracker.entities()}
    assert types.get("Banque Sorel") == "ORGANIZATION", types
    assert types.get("Quistrel") == "LOCATION", types
    assert types.get("9,90 € par mois") == "MONEY", types
    assert ("LOCATED_IN", "Quistrel") in tracker.user_relations()
