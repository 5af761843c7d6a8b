"""``memory-chains eval longterm``: do fact restatements merge and changed facts not?

Embeds the packaged French/English fact pairs with the default embeddings (e5-small
offline) and prints, per split, the accuracy of :class:`~memory_chains.longterm.FactMemory`'s
merge decision (cosine threshold + anchors) next to cosine alone; with ``--json`` the last
line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    """Add ``eval longterm`` to the ``eval`` sub-parser."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "longterm", help="evaluate fact merging (paraphrases merge, changed facts do not)"
    )
    parser.add_argument("--pairs", type=Path, default=None, help="JSONL of {a, b, same, split}")
    parser.add_argument("--threshold", type=float, default=None, help="default: the library's")
    parser.add_argument("--json", action="store_true", help="last line: one JSON object")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the evaluation; returns the process exit code."""
    from memory_chains.evaluation.merge import DEFAULT_PAIRS, evaluate_merge, load_pairs
    from memory_chains.longterm import DEFAULT_MERGE_THRESHOLD
    from memory_chains.providers import get_embeddings

    pairs = load_pairs(args.pairs or DEFAULT_PAIRS)
    threshold = DEFAULT_MERGE_THRESHOLD if args.threshold is None else args.threshold
    report = evaluate_merge(pairs, get_embeddings(), threshold=threshold)
    for row in report["pairs"]:
        verdict = "ok " if row["merge"] == row["same"] else "BAD"
        kind = "same" if row["same"] else "diff"
        print(f"{verdict} {row['split']:8s} {kind} cos={row['cosine']:.3f}  {row['b']}")
    for split in [k for k in report if k not in ("threshold", "pairs")]:
        s = report[split]
        print(
            f"{split:8s} n={s['n']:2d} accuracy={s['accuracy']:.3f} (cosine only "
            f"{s['cosine_only_accuracy']:.3f}) merge precision={s['precision']:.3f} "
            f"recall={s['recall']:.3f} same min cos={s['same_min_cosine']} "
            f"different max cos={s['different_max_cosine']}"
        )
    if args.json:
        print(json.dumps({k: v for k, v in report.items() if k != "pairs"}))
    return 0
