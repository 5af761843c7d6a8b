"""LoCoMo conversation 1 (conv-30, 369 turns, 81 scored questions) with the real e5 vectors.

The hybrid index must beat plain BM25 on that conversation (recall@10 0.648, measured with
the same tokenisation; the published-style reference over all ten is 0.563) and reach the
issue's 0.80 (0.84 here, multi-hop 0.58) with a context of at most 1,500 tokens. 15 s here
on 2026-12-02 (idle; 12 min 44 s at load ~27 on an earlier day).

Run: ``.venv/bin/pytest -m integration tests/integration/test_locomo_e5.py -s``
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_chains.evaluation.locomo import evaluate_locomo, load_locomo
from memory_chains.recall import TurnIndex

pytestmark = pytest.mark.integration

# CI clones the repository next to a copy of shared/: <parent>/shared/datasets/locomo.
_DATASET = (
    Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / "locomo" / "locomo10.json"
)


def test_hybrid_index_beats_bm25_on_one_locomo_conversation() -> None:
    if not _DATASET.is_file():
        pytest.skip(f"LoCoMo not found at {_DATASET} (shared/datasets beside the repository)")
    from memory_chains.providers import E5Embeddings

    embeddings = E5Embeddings()
    report = evaluate_locomo(
        load_locomo(_DATASET), lambda: TurnIndex(embeddings), k=10, max_tokens=1500, indices=[1]
    )
    print({k: v for k, v in report.items() if k != "conversations"})
    assert report["n"] == 81
    for key in ("recall@10_multi_hop", "recall@10_temporal", "recall@10_single_hop"):
        assert 0.0 <= report[key] <= 1.0
    # plain BM25 here: 0.648; measured 0.847 (multi-hop 0.597) with the knobs of
    # scripts/locomo_knobs.py, 0.842 (0.567) before them, 0.818 with a turn's vector of the
    # turn alone, 0.789 before the name-free question vector and the session / content
    # nudges (2026-12-02): these bounds catch any of those steps undone
    assert report["recall@10"] >= 0.84
    assert report["recall@10_multi_hop"] >= 0.58
    assert report["context_recall"] >= report["recall@10"]
    assert report["max_context_tokens"] <= 1500
    assert report["ingest_ms_per_turn"] > 0 and report["query_ms"] > 0
