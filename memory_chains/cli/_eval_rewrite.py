"""``memory-chains eval rewrite``: measure the follow-up rewriter.

* ``--corpus C.jsonl --dataset D.jsonl``: retrieval with the rewrites (defaults: the dev set
  shipped in the package);
* ``--canard PATH``: ROUGE-1 recall and BLEU-4 against CANARD's human rewrites.

With ``--json`` the last line printed is one JSON object with every metric.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def register(sub: Any) -> None:
    """Add ``rewrite`` to the ``eval`` subparsers."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "rewrite",
        help="measure the follow-up rewriter (retrieval dev set or CANARD)",
        description="Measure the follow-up rewriter: retrieval hit@k over a corpus, or "
        "ROUGE-1 recall / BLEU-4 against CANARD's human rewrites.",
    )
    parser.add_argument("--corpus", help="corpus JSONL ({id, text}); default: shipped dev corpus")
    parser.add_argument("--dataset", help="follow-ups JSONL; default: shipped dev set")
    parser.add_argument("--k", type=int, default=3, help="hit@k cut-off (default 3)")
    parser.add_argument(
        "--n-queries", type=int, default=1, choices=(1, 2, 3), help="search queries per item"
    )
    parser.add_argument("--no-model", action="store_true", help="deterministic fallback only")
    parser.add_argument("--canard", metavar="PATH", help="evaluate on canard_dev.json instead")
    parser.add_argument("--limit", type=int, help="CANARD: random sample of N questions")
    parser.add_argument("--seed", type=int, default=0, help="CANARD sampling seed (default 0)")
    parser.add_argument("--verbose", action="store_true", help="print every dev-set item")
    parser.add_argument("--json", action="store_true", help="print the report as JSON last")
    parser.set_defaults(run=run)


def _progress(enabled: bool) -> Any:
    if not enabled:
        return None

    def show(done: int, total: int) -> None:
        print(f"\r{done}/{total}", end="" if done < total else "\n", file=sys.stderr, flush=True)

    return show


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def run(args: argparse.Namespace) -> int:
    """Run the evaluation and print the report."""
    from memory_chains.config import load_settings
    from memory_chains.errors import InvalidInputError
    from memory_chains.evaluation.rewrite import (
        DEV_CORPUS,
        DEV_DATASET,
        evaluate_canard,
        evaluate_rewrites,
    )
    from memory_chains.providers import describe_providers, get_chat_model, get_embeddings
    from memory_chains.rewrite import QueryRewriter

    if args.k < 1:
        raise InvalidInputError("--k must be at least 1")
    settings = load_settings()
    llm = None if args.no_model else get_chat_model(settings)
    rewriter = QueryRewriter(llm, n_queries=args.n_queries, use_model=not args.no_model)
    progress = _progress(sys.stderr.isatty())
    print(describe_providers(settings), file=sys.stderr)
    report: dict[str, Any]
    if args.canard:
        report = evaluate_canard(
            args.canard, rewriter, limit=args.limit, seed=args.seed, progress=progress
        )
        print(f"CANARD dev, questions after the first turn (n={report['n']}, seed={args.seed})")
        print(f"{'':12}{'ROUGE-1 R':>11}{'BLEU-4':>9}")
        print(f"{'rewriter':12}{_fmt(report['rouge1_recall']):>11}{_fmt(report['bleu4']):>9}")
        print(
            f"{'unchanged':12}{_fmt(report['unchanged_rouge1_recall']):>11}"
            f"{_fmt(report['unchanged_bleu4']):>9}"
        )
        print(
            f"secs/item {_fmt(report['secs_per_item'])}, median {_fmt(report['median_secs'])}, "
            f"model calls/item {_fmt(report['model_calls_per_item'])}, "
            f"fallback rate {_fmt(report['fallback_rate'])}"
        )
    else:
        embeddings = get_embeddings(settings)
        report = evaluate_rewrites(
            args.corpus or DEV_CORPUS,
            args.dataset or DEV_DATASET,
            rewriter,
            embeddings,
            k=args.k,
            progress=progress,
        )
        items = report.pop("items")
        if args.verbose:
            for item in items:
                print(
                    f"{item['id']:>8} rank={item.get('rank', '-')} {item['method']:9} "
                    f"{item['question']!r} -> {item['standalone']!r}"
                    + (f"  [{item['error']}]" if item["error"] else "")
                )
        keys = [
            "n", "hit@1", f"hit@{args.k}", "mrr", "mention_rate", "raw_hit@1", "gold_hit@1",
            "rouge1_recall", "median_secs", "secs_per_item", "model_calls_per_item",
            "fallback_rate",
        ]  # fmt: skip
        rows = [("all", report), *sorted(report["by_language"].items())]
        widths = [max(len(key), 6) + 2 for key in keys]
        print(f"{'':6}" + "".join(f"{key:>{w}}" for key, w in zip(keys, widths, strict=True)))
        for name, values in rows:
            cells = (f"{_fmt(values.get(key)):>{w}}" for key, w in zip(keys, widths, strict=True))
            print(f"{name:6}" + "".join(cells))
        report["items"] = items
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
    return 0
