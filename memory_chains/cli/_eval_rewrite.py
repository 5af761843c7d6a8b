"""``memory-chains eval rewrite``: measure the follow-up rewriter.

* ``--corpus C.jsonl --dataset D.jsonl``: retrieval with the rewrites (defaults: the dev set
  shipped in the package; ``--set far`` picks the far-referent set instead);
* ``--entities rules``: feed each item's history to an entity memory (rule extractor, no
  model call) and give its names to the rewriter (``--entities none``: without);
* ``--strategy choice|free``: the model picks the referent (default) or writes the question;
* ``--canard PATH``: ROUGE-1 recall and BLEU-4 against CANARD's human rewrites.

With ``--json`` the last line printed is one JSON object with every metric.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from memory_chains.cli._eval_common import fmt, progress_printer


def register(sub: Any) -> None:
    """Add ``rewrite`` to the ``eval`` subparsers."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "rewrite",
        help="measure the follow-up rewriter (retrieval dev set or CANARD)",
        description="Measure the follow-up rewriter: retrieval hit@k over a corpus, or "
        "ROUGE-1 recall / BLEU-4 against CANARD's human rewrites.",
    )
    parser.add_argument("--corpus", help="corpus JSONL ({id, text}); default: shipped dev corpus")
    parser.add_argument("--dataset", help="follow-ups JSONL; default: the shipped --set")
    parser.add_argument(
        "--set",
        choices=("dev", "far"),
        default="dev",
        help="shipped follow-ups: dev (47 items) or far (referent > 1 exchange back)",
    )
    parser.add_argument(
        "--entities",
        choices=("none", "rules"),
        default="none",
        help="entity memory for the rewriter: none, or rules (RuleEntityExtractor)",
    )
    parser.add_argument(
        "--strategy",
        choices=("choice", "free"),
        default="choice",
        help="choice: the model picks the referent; free: it writes the whole question",
    )
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


def run(args: argparse.Namespace) -> int:
    """Run the evaluation and print the report."""
    from memory_chains.config import load_settings
    from memory_chains.errors import InvalidInputError
    from memory_chains.evaluation.rewrite import (
        DEV_CORPUS,
        DEV_DATASET,
        FAR_DATASET,
        evaluate_canard,
        evaluate_rewrites,
    )
    from memory_chains.providers import describe_providers, get_chat_model, get_embeddings
    from memory_chains.rewrite import QueryRewriter

    if args.k < 1:
        raise InvalidInputError("--k must be at least 1")
    settings = load_settings()
    llm = None if args.no_model else get_chat_model(settings)
    rewriter = QueryRewriter(
        llm, n_queries=args.n_queries, use_model=not args.no_model, strategy=args.strategy
    )
    progress = progress_printer(sys.stderr.isatty())
    print(describe_providers(settings), file=sys.stderr)
    report: dict[str, Any]
    if args.canard:
        report = evaluate_canard(
            args.canard, rewriter, limit=args.limit, seed=args.seed, progress=progress
        )
        print(f"CANARD dev, questions after the first turn (n={report['n']}, seed={args.seed})")
        print(f"{'':12}{'ROUGE-1 R':>11}{'BLEU-4':>9}")
        print(f"{'rewriter':12}{fmt(report['rouge1_recall']):>11}{fmt(report['bleu4']):>9}")
        print(
            f"{'unchanged':12}{fmt(report['unchanged_rouge1_recall']):>11}"
            f"{fmt(report['unchanged_bleu4']):>9}"
        )
        print(
            f"secs/item {fmt(report['secs_per_item'])}, median {fmt(report['median_secs'])}, "
            f"model calls/item {fmt(report['model_calls_per_item'])}, "
            f"fallback rate {fmt(report['fallback_rate'])}"
        )
    else:
        embeddings = get_embeddings(settings)
        entity_memory = None
        if args.entities == "rules":
            from memory_chains.entities import EntityTracker, RuleEntityExtractor

            extractor = RuleEntityExtractor()

            def entity_memory() -> EntityTracker:
                return EntityTracker(extractor)

        dataset = args.dataset or (FAR_DATASET if args.set == "far" else DEV_DATASET)
        print(
            f"dataset {dataset}, strategy {args.strategy}, entities {args.entities}",
            file=sys.stderr,
        )
        report = evaluate_rewrites(
            args.corpus or DEV_CORPUS,
            dataset,
            rewriter,
            embeddings,
            k=args.k,
            progress=progress,
            entity_memory=entity_memory,
        )
        items = report.pop("items")
        if args.verbose:
            for item in items:
                print(
                    f"{item['id']:>8} rank={item.get('rank', '-')} {item['method']:9} "
                    f"{item['question']!r} -> {item['standalone']!r}"
                    + (f"  [{item['error']}]" if item["error"] else "")
                    + (f"  entities={item['entities']}" if item["entities"] else "")
                )
        keys = [
            "n", "hit@1", f"hit@{args.k}", "mrr", "mention_rate", "raw_hit@1", "gold_hit@1",
            "rouge1_recall", "median_secs", "median_model_secs", "secs_per_item",
            "model_calls_per_item", "output_tokens_per_item", "template_rate", "fallback_rate",
        ]  # fmt: skip
        rows = [("all", report), *sorted(report["by_language"].items())]
        widths = [max(len(key), 6) + 2 for key in keys]
        print(f"{'':6}" + "".join(f"{key:>{w}}" for key, w in zip(keys, widths, strict=True)))
        for name, values in rows:
            cells = (f"{fmt(values.get(key)):>{w}}" for key, w in zip(keys, widths, strict=True))
            print(f"{name:6}" + "".join(cells))
        report["items"] = items
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
    return 0
