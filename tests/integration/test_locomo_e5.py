"""LoCoMo conversation 1 (conv-30, 369 turns, 81 scored questions) with the real e5 vectors.

With the LoCoMo preset (``RecallConfig.locomo()``) the hybrid index must reach the goal of
recall@10 ≥ 0.80 with a context of at most 1,500 tokens; with the neutral defaults it must
still beat the same index without embeddings, in the same run. The figures over all ten
conversations are in docs/benchmarks.md.

Run: ``.venv/bin/pytest -m integration tests/integration/test_locomo_e5.py -s``
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memory_chains.evaluation.locomo import evaluate_locomo, load_locomo
from memory_chains.evaluation.vector_cache import CachedEmbeddings
from memory_chains.recall import RecallConfig, TurnIndex

pytestmark = pytest.mark.integration

# CI clones the repository next to a copy of shared/: <parent>/shared/datasets/locomo.
_DATASET = (
    Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / "locomo" / "locomo10.json"
)


def test_hybrid_index_beats_bm25_on_one_locomo_conversation() -> None:
    if not _DATASET.is_file():
        pytest.skip(f"LoCoMo not found at {_DATASET} (shared/datasets beside the repository)")
    from memory_chains.providers import E5Embeddings

    # In memory only: the second run reuses the first one's vectors.
    embeddings = CachedEmbeddings(E5Embeddings())
    conversations = load_locomo(_DATASET)

    def evaluate(make_index: Callable[[], TurnIndex]) -> dict[str, Any]:
        return evaluate_locomo(conversations, make_index, k=10, max_tokens=1500, indices=[1])

    report = evaluate(lambda: TurnIndex(embeddings, config=RecallConfig.locomo()))
    print({k: v for k, v in report.items() if k != "conversations"})
    assert report["n"] == 81
    for key in ("recall@10_multi_hop", "recall@10_temporal", "recall@10_single_hop"):
        assert 0.0 <= report[key] <= 1.0
    # The preset's knobs were searched on all ten conversations, this one included: no floor
    # is set at the value measured here. What must hold is the product's goal with the
    # preset, and that the embeddings add something over the same index without them, with
    # the neutral defaults, measured in the same run.
    neutral = evaluate(lambda: TurnIndex(embeddings))
    lexical = evaluate(lambda: TurnIndex(None))
    print({"neutral": neutral["recall@10"], "lexical": lexical["recall@10"]})
    assert report["recall@10"] >= 0.80
    assert neutral["recall@10"] > lexical["recall@10"]
    assert report["context_recall"] >= report["recall@10"]
    assert report["max_context_tokens"] <= 1500
    assert report["ingest_ms_per_turn"] > 0 and report["query_ms"] > 0
