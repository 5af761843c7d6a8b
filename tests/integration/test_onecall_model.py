"""Entities, profile and facts of a French turn from ONE call of the real embedded model.

A user gives their name and city and asks about a Dell XPS 15; :class:`MemoryUpdater` with
a :class:`TurnExtractor` must track the laptop in the entity memory AND store a profile
entry or fact in the long-term memory, for exactly one model call.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from memory_chains.entities import EntityTracker, LLMEntityExtractor
from memory_chains.longterm import LongTermMemory, MemoryUpdater, TurnExtractor
from memory_chains.stores import open_store

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def model():  # type: ignore[no-untyped-def]
    from memory_chains.providers import get_chat_model

    return get_chat_model(max_tokens=512)


@pytest.fixture(scope="module")
def embeddings():  # type: ignore[no-untyped-def]
    from memory_chains.providers import E5Embeddings

    return E5Embeddings()


def test_french_turn_feeds_both_memories_with_one_call(model, embeddings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    store = open_store(f"sqlite:///{tmp_path / 'onecall.sqlite3'}")
    extractor = TurnExtractor(model)
    own_extractor = LLMEntityExtractor(model)  # the updater must not call it
    entities = EntityTracker(own_extractor, types="ecommerce", user_id="julien", store=store)
    long_term = LongTermMemory(store, "julien", embeddings)
    updater = MemoryUpdater(extractor, entities=entities, long_term=long_term)

    started = time.perf_counter()
    report = updater.observe(
        "Bonjour, je m'appelle Julien et j'habite à Nantes. Est-ce que le Dell XPS 15 "
        "convient pour du montage vidéo ?",
        "Oui Julien, le Dell XPS 15 convient bien au montage vidéo ; il est affiché à 1599 euros.",
        session_id="visit-1",
        seq=1,
    )
    elapsed = time.perf_counter() - started
    print(f"\none-call update: {elapsed:.1f} s; {report}")

    assert report.model_calls == 1 and extractor.calls == 1, report.rejected
    assert own_extractor.calls == 0
    xps = entities.get("Dell XPS 15")
    assert xps is not None and xps.type == "PRODUCT", entities.entities()
    assert report.long_term is not None and report.long_term.changed, report
    assert long_term.facts() or long_term.profile().entries, report
    assert entities.failed_turns == []
