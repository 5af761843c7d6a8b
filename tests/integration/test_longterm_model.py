"""Long-term memory with the real embedded model and real e5 embeddings.

A returning user (same user id, new session id, new memory object over the same SQLite
file) gets back their stated preference and a fact through ``context()``, and the answer
model uses it. Two model calls in all: one extraction, one answer.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_chains._folding import fold
from memory_chains.longterm import LongTermExtractor, LongTermMemory
from memory_chains.stores import open_store

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def model():  # type: ignore[no-untyped-def]
    from memory_chains.providers import get_chat_model

    return get_chat_model(max_tokens=320)


@pytest.fixture(scope="module")
def embeddings():  # type: ignore[no-untyped-def]
    from memory_chains.providers import E5Embeddings

    return E5Embeddings()


def test_returning_user_gets_preference_and_fact_back(model, embeddings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    url = f"sqlite:///{tmp_path / 'longterm.sqlite3'}"
    first = LongTermMemory(open_store(url), "camille", embeddings, LongTermExtractor(model))
    report = first.observe(
        "Bonjour, je m'appelle Camille. Je préfère les cours de Pilates le samedi matin, "
        "je suis débutante.",
        "Bienvenue Camille ! Le cours de Pilates du samedi matin commence à 10 h.",
        session_id="visit-1",
        seq=1,
    )
    assert report.model_calls == 1, report.rejected
    assert report.facts.added, report

    later = LongTermMemory(open_store(url), "camille", embeddings, LongTermExtractor(model))
    question = "Quel cours me conseillez-vous ce week-end ?"
    context = later.context(question, max_tokens=200)
    folded = fold(context)
    assert "pilates" in folded and "samedi" in folded, context
    assert "camille" in folded or "beginner" in folded or "debutant" in folded, context
    assert all(s == ("visit-1", 1) for f in later.facts() for s in f.sources)

    from langchain_core.messages import HumanMessage, SystemMessage

    system = "Tu es l'assistant d'une salle de sport. Réponds en une phrase.\n\n" + context
    reply = model.invoke([SystemMessage(content=system), HumanMessage(content=question)])
    assert "pilates" in fold(str(reply.content)), reply.content
