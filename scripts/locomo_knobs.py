"""Search the episodic index's ranking knobs on LoCoMo, with a leave-one-conversation-out estimate.

Usage::

    .venv/bin/python scripts/locomo_knobs.py --dataset ../shared/datasets/locomo/locomo10.json

Each conversation is indexed once (e5 vectors from the evaluation cache,
``MEMORY_CHAINS_HOME/cache/locomo``, computed and saved on the first run, about 10 min
here); then every knob setting of the grid ranks every scored question (about 4 s per
setting, 156 settings). It prints the settings with the best multi-hop recall@10 over
all ten conversations and the one :func:`choose` picks: among the settings within
``--margin`` (0.005, about one question in 282) of the best multi-hop recall@10, the one
with the best overall recall@10; multi-hop is the goal that was not met, and overall
recall must not pay for noise. Then the **leave-one-conversation-out** estimate: each
conversation is scored with the setting :func:`choose` picks on the nine others, so no
conversation is scored with knobs chosen on it.

This is how :meth:`memory_chains.recall.RecallConfig.locomo` was chosen on 2026-12-02
(then the defaults; they are neutral since 2026-12-04); ``memory-chains eval locomo
--preset locomo`` measures it.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import statistics
import sys
import time
from pathlib import Path

from memory_chains.config import load_settings
from memory_chains.evaluation.locomo import (
    ingest_conversation,
    load_locomo,
    recall_at_k,
    scored_questions,
)
from memory_chains.evaluation.vector_cache import CachedEmbeddings
from memory_chains.providers import get_embeddings
from memory_chains.recall import RecallConfig, TurnIndex

# (speaker_boost, (neighbour_weight, next_factor), lexical_weight, feedback_weight,
# session_weight): the two grids searched on 2026-12-02, the second around the first's best.
_NEIGHBOURS_1 = [(0.3, 1.0), (0.2, 2.0), (0.25, 1.4), (0.15, 3.0)]
_NEIGHBOURS_2 = [(0.1, 4.0), (0.15, 8 / 3), (0.2, 2.0), (0.1, 5.0), (0.2, 2.5)]
Setting = tuple[float, tuple[float, float], float, float, float]
GRID: list[Setting] = list(
    itertools.product([0.5, 0.7, 1.0], _NEIGHBOURS_1, [0.25, 0.3], [0.2, 0.3], [0.03, 0.0])
) + list(itertools.product([0.8, 1.0, 1.2], _NEIGHBOURS_2, [0.2, 0.25], [0.3], [0.03, 0.015]))

Row = tuple[int, int, float]  # conversation, category, recall@10


def _config(setting: Setting) -> RecallConfig:
    speaker, (neighbour, factor), lexical, feedback, session = setting
    return dataclasses.replace(
        RecallConfig.locomo(),
        speaker_boost=speaker,
        neighbour_weight=neighbour,
        next_factor=factor,
        lexical_weight=lexical,
        feedback_weight=feedback,
        session_weight=session,
    )


def _means(rows: list[Row], conversations: set[int]) -> tuple[float, float]:
    chosen = [r for r in rows if r[0] in conversations]
    overall = statistics.fmean(r for _, _, r in chosen)
    multi_hop = statistics.fmean(r for _, category, r in chosen if category == 1)
    return overall, multi_hop


def choose(results: dict[int, list[Row]], conversations: set[int], margin: float) -> int:
    """The setting with the best overall recall@10 among those within ``margin`` of the
    best multi-hop recall@10 on ``conversations``."""
    means = {number: _means(rows, conversations) for number, rows in results.items()}
    best = max(multi_hop for _, multi_hop in means.values())
    close = [number for number, (_, multi_hop) in means.items() if multi_hop >= best - margin]
    return max(close, key=lambda number: means[number])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", required=True, type=Path)
    parser.add_argument("--top", type=int, default=8, help="settings listed (default 8)")
    parser.add_argument("--margin", type=float, default=0.005, help="see choose (0.005)")
    args = parser.parse_args()
    conversations = load_locomo(args.dataset)
    settings = load_settings()
    inner = get_embeddings(settings)
    cache = CachedEmbeddings(inner, settings.cache_dir / "locomo" / f"{type(inner).__name__}.npz")
    indexes = []
    for position, conversation in enumerate(conversations):
        index = TurnIndex(cache)
        ingest_conversation(index, "u", conversation)
        indexes.append((position, index, scored_questions(conversation)))
        cache.save()
        print(f"indexed conversation {position}", file=sys.stderr)
    results: dict[int, list[Row]] = {}
    for number, setting in enumerate(GRID):
        started = time.perf_counter()
        rows: list[Row] = []
        for position, index, questions in indexes:
            index.config = _config(setting)
            for question in questions:
                turns = index.search("u", question.question, k=10)
                value = recall_at_k([t.turn_id for t in turns], question.evidence, 10)
                rows.append((position, question.category, value))
        results[number] = rows
        overall, multi_hop = _means(rows, set(range(len(indexes))))
        print(
            f"{number + 1}/{len(GRID)} {setting}: {overall:.4f} / multi-hop {multi_hop:.4f} "
            f"({time.perf_counter() - started:.1f} s)",
            file=sys.stderr,
        )
    everything = set(range(len(indexes)))
    print(
        "setting (speaker, (neighbour, next factor), lexical, feedback, session): "
        "recall@10 / multi-hop, all ten conversations"
    )
    best = sorted(results, key=lambda n: -_means(results[n], everything)[1])
    for number in best[: args.top]:
        overall, multi_hop = _means(results[number], everything)
        print(f"  {GRID[number]}: {overall:.4f} / {multi_hop:.4f}")
    chosen = choose(results, everything, args.margin)
    overall, multi_hop = _means(results[chosen], everything)
    print(f"chosen on all ten: {GRID[chosen]}: {overall:.4f} / {multi_hop:.4f}")
    held_out: list[Row] = []
    for position in sorted(everything):
        pick = choose(results, everything - {position}, args.margin)
        held_out += [r for r in results[pick] if r[0] == position]
        print(f"  conversation {position}: knobs of the nine others {GRID[pick]}")
    overall, multi_hop = _means(held_out, everything)
    print(f"leave-one-conversation-out: recall@10 {overall:.4f}, multi-hop {multi_hop:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
