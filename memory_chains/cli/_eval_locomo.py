"""``memory-chains eval locomo``: evidence recall of the episodic memory on LoCoMo.

Feeds each LoCoMo conversation to a :class:`~memory_chains.recall.TurnIndex` session by
session (with the session dates), then asks it, for every question of categories 1-4,
for its best ``--k`` turns and its context within ``--max-tokens``; prints recall@k
overall, per category and per conversation, the context
recall and tokens, ingestion and query times, next to the reference anchors. ``--dataset``
is required (``locomo10.json`` is not shipped). No chat model is ever called
(``--no-model`` is accepted and changes nothing); ``--lexical-only`` also skips the
embeddings. ``--preset locomo`` ranks with :meth:`~memory_chains.recall.RecallConfig.locomo`,
the knobs searched on this benchmark, instead of the neutral defaults. With ``--json`` the
last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from memory_chains.cli._eval_common import fmt, progress_printer


def register(sub: Any) -> None:
    """Add ``eval locomo`` to the ``eval`` sub-parser."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "locomo",
        help="LoCoMo evidence recall@k and context tokens of the episodic memory",
        description="Evidence recall@k of the episodic memory (TurnIndex) on LoCoMo.",
    )
    parser.add_argument(
        "--dataset",
        type=Path,
        required=True,
        metavar="PATH",
        help="the LoCoMo file, locomo10.json (required: not shipped with memory_chains)",
    )
    parser.add_argument("--k", type=int, default=10, help="recall cut-off (default 10)")
    parser.add_argument(
        "--max-tokens", type=int, default=1500, help="context budget per question (default 1500)"
    )
    parser.add_argument(
        "--conversations", help="subset of conversations, e.g. 0, 0-2 or 0,3,5-7 (default all)"
    )
    parser.add_argument(
        "--max-questions", type=int, help="only the first N questions of each conversation"
    )
    parser.add_argument(
        "--no-model",
        action="store_true",
        help="accepted for compatibility, changes nothing: this evaluation never calls a chat "
        "model",
    )
    parser.add_argument(
        "--lexical-only", action="store_true", help="no embeddings either: BM25 signals only"
    )
    parser.add_argument(
        "--embedding-cache",
        action="store_true",
        help="reuse/save vectors under MEMORY_CHAINS_HOME/cache/locomo (re-runs skip the "
        "embedding; timings then exclude it)",
    )
    parser.add_argument(
        "--preset",
        choices=("default", "locomo"),
        default="default",
        help="ranking knobs: RecallConfig() (default) or RecallConfig.locomo(), the setting "
        "searched on this benchmark",
    )
    parser.add_argument("--json", action="store_true", help="last line: one JSON object")
    parser.set_defaults(run=run)


def _print_report(report: dict[str, Any], reference: dict[str, dict[str, float]]) -> None:
    k = report["k"]
    groups = ("multi_hop", "temporal", "open_domain", "single_hop")
    columns = [f"recall@{k}", *(f"recall@{k}_{g}" for g in groups), "mean_context_tokens"]
    labels = ["all", "multi-hop", "temporal", "open-dom", "single-hop", "ctx tokens"]
    print(f"{'':40}" + "".join(f"{label:>12}" for label in labels))
    name = "TurnIndex" + (" (lexical only)" if report.get("lexical_only") else " (BM25+e5)")
    name += ", locomo knobs" if report.get("preset") == "locomo" else ""
    print(f"{name:40}" + "".join(f"{fmt(report.get(c)):>12}" for c in columns))
    context = ["context_recall", *(f"context_recall_{g}" for g in groups)]
    print(f"{'  whole context':40}" + "".join(f"{fmt(report.get(c)):>12}" for c in context))
    if k == 10:
        for label, values in reference.items():
            cells = (f"{fmt(values.get(c)):>12}" for c in columns)
            print(f"{label:40}" + "".join(cells))
    print(
        f"n={report['n']} (multi-hop {report['n_multi_hop']}, temporal {report['n_temporal']}, "
        f"open-domain {report['n_open_domain']}, single-hop {report['n_single_hop']})"
    )
    print(
        f"context ≤ {report['max_tokens']} tokens (approximate count): mean "
        f"{fmt(report['mean_context_tokens'])}, max {report['max_context_tokens']}; "
        f"ingestion {fmt(report['ingest_ms_per_turn'])} ms/turn; query "
        f"{fmt(report['query_ms'])} ms (p95 {fmt(report['query_ms_p95'])})"
    )
    for row in report["conversations"]:
        print(
            f"  conv {row['index']} {row['sample_id']}: {row['turns']} turns, n={row['n']}, "
            f"recall@{k} {fmt(row[f'recall@{k}'])}, context {fmt(row['context_recall'])}"
        )


def run(args: argparse.Namespace) -> int:
    """Run the evaluation and print the report."""
    from memory_chains.errors import InvalidInputError
    from memory_chains.evaluation.locomo import (
        REFERENCE,
        evaluate_locomo,
        load_locomo,
        select_conversations,
    )
    from memory_chains.recall import RecallConfig, TurnIndex

    dataset = args.dataset
    if args.k < 1 or args.max_tokens < 1:
        raise InvalidInputError("--k and --max-tokens must be at least 1")
    if args.max_questions is not None and args.max_questions < 1:
        raise InvalidInputError("--max-questions must be at least 1")
    config = RecallConfig.locomo() if args.preset == "locomo" else RecallConfig()
    conversations = load_locomo(dataset)
    indices = select_conversations(args.conversations, len(conversations))
    embeddings: Any = None
    cache: Any = None
    if not args.lexical_only:
        from memory_chains.config import load_settings
        from memory_chains.providers import get_embeddings

        settings = load_settings()
        embeddings = get_embeddings(settings)
        if args.embedding_cache:
            from memory_chains.evaluation.vector_cache import CachedEmbeddings

            name = type(embeddings).__name__
            path = settings.cache_dir / "locomo" / f"{name}.npz"
            cache = embeddings = CachedEmbeddings(embeddings, path)

    def make_index() -> TurnIndex:
        if cache is not None:
            cache.save()  # keep what the previous conversation computed
        return TurnIndex(embeddings, config=config)

    print(
        f"LoCoMo {dataset}: conversations {indices}, embeddings "
        f"{type(embeddings).__name__ if embeddings else 'none'}, no chat model",
        file=sys.stderr,
    )
    report = evaluate_locomo(
        conversations,
        make_index,
        k=args.k,
        max_tokens=args.max_tokens,
        indices=indices,
        max_questions=args.max_questions,
        progress=progress_printer(sys.stderr.isatty()),
    )
    if cache is not None:
        cache.save()
        report["embedding_cache"] = {"hits": cache.hits, "misses": cache.misses}
        print(
            f"embedding cache: {cache.hits} hits, {cache.misses} misses "
            "(timings exclude the cached embeddings)",
            file=sys.stderr,
        )
    report["lexical_only"] = bool(args.lexical_only)
    report["preset"] = args.preset
    report["conversations_evaluated"] = indices
    _print_report(report, REFERENCE)
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
    return 0
