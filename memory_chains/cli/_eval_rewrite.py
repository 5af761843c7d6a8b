"""``memory-chains eval rewrite``: measure the follow-up rewriter.

* ``--set dev|test`` (default ``dev``): the follow-up collection shipped in the package
  (ten domains, French and English, written by people who saw neither the rewriter nor the
  other sets, split by a hash of each id): retrieval hit@k over its corpus, mention rate,
  ROUGE-1 recall / F1 and BLEU-4 against the human rewrites. Tune on ``dev``; report
  ``test`` once. ``--set legacy`` / ``far``: the first sets shipped with the package.
* ``--corpus C.jsonl --dataset D.jsonl``: your own follow-ups;
* ``--cast PATH`` / ``--canard PATH``: the public English sets (TREC CAsT 2019 as converted
  in ``cast2019_eval.jsonl``; CANARD's ``canard_dev.json``), scored against their manual
  rewrites, the question copied as the baseline;
* ``--entities rules``: feed each item's history to an entity memory (rule extractor, no
  model call) and give its names to the rewriter;
* ``--no-model``: rules only; ``--rules`` chooses the rule families (ablation);
* ``--rewriter plain|copy``: measure an anchor instead (a plain 4-shot prompt on the same
  model; the question copied); ``--anchor``: also run the plain 4-shot prompt on the same
  items, in the same run, and report the time ratio against it (this machine's speed varies
  from day to day; the ratio does not).

With ``--json`` the last line printed is one JSON object with every metric.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from memory_chains.cli._eval_common import fmt, progress_printer

_KEYS = (
    "n", "hit@1", "hit@3", "mrr", "all_gold@3", "mention_rate", "raw_hit@1", "gold_hit@1",
    "rouge1_recall", "rouge1_f1", "bleu4", "appended_rate", "secs_per_item", "median_secs",
    "p95_secs", "model_calls_per_item", "model_rate", "fallback_rate",
)  # fmt: skip
_TEXT_KEYS = (
    "n", "rouge1_recall", "rouge1_f1", "bleu4", "unchanged_rouge1_recall",
    "unchanged_rouge1_f1", "unchanged_bleu4", "appended_rate", "secs_per_item",
    "median_secs", "p95_secs", "model_calls_per_item", "model_rate",
)  # fmt: skip


def register(sub: Any) -> None:
    """Add ``rewrite`` to the ``eval`` subparsers."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "rewrite",
        help="measure the follow-up rewriter (follow-up collection, CAsT, CANARD)",
        description="Measure the follow-up rewriter: retrieval hit@k over a corpus and "
        "overlap with human rewrites (ROUGE-1 recall / F1, BLEU-4).",
    )
    parser.add_argument("--set", choices=("dev", "test", "legacy", "far"), default="dev",
                        help="shipped follow-ups (default dev; report test once)")  # fmt: skip
    parser.add_argument("--corpus", help="corpus JSONL ({id, text}); default: the set's corpus")
    parser.add_argument("--dataset", help="follow-ups JSONL; default: the shipped --set")
    parser.add_argument("--cast", metavar="PATH", help="evaluate on TREC CAsT (JSONL) instead")
    parser.add_argument("--canard", metavar="PATH", help="evaluate on canard_dev.json instead")
    parser.add_argument("--limit", type=int, help="CAsT / CANARD: random sample of N questions")
    parser.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    parser.add_argument(
        "--entities",
        choices=("none", "rules"),
        default="none",
        help="entity memory for the rewriter: none, or rules (RuleEntityExtractor)",
    )
    parser.add_argument("--k", type=int, default=3, help="hit@k cut-off (default 3)")
    parser.add_argument("--search", choices=("dense", "hybrid"), default="dense",
                        help="retrieval, as KnowledgeBase.search(mode=…): cosine (default) "
                        "or cosine fused with BM25")  # fmt: skip
    parser.add_argument("--no-model", action="store_true", help="rules only, no model call")
    parser.add_argument("--rules", help="comma-separated rule families (default: all; '' none)")
    parser.add_argument("--rewriter", choices=("ours", "plain", "copy"), default="ours",
                        help="what to measure: ours (default) or an anchor")  # fmt: skip
    parser.add_argument("--anchor", action="store_true",
                        help="also run the plain 4-shot anchor; report the time ratio")  # fmt: skip
    parser.add_argument("--verbose", action="store_true", help="print every item")
    parser.add_argument("--save", metavar="FILE", help="write every item as JSON lines")
    parser.add_argument("--json", action="store_true", help="print the report as JSON last")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the evaluation and print the report."""
    from memory_chains.config import load_settings
    from memory_chains.errors import InvalidInputError
    from memory_chains.evaluation import references
    from memory_chains.evaluation import rewrite as harness
    from memory_chains.providers import describe_providers, get_chat_model, get_embeddings
    from memory_chains.rewrite import RULES, QueryRewriter

    if args.k < 1:
        raise InvalidInputError("--k must be at least 1")
    from memory_chains.evaluation.baseline import CopyRewriter, PlainFewShotRewriter

    settings = load_settings()
    rules = RULES if args.rules is None else tuple(r for r in args.rules.split(",") if r)
    llm = None if args.no_model and args.rewriter == "ours" else get_chat_model(settings)
    rewriter: Any = {
        "ours": lambda: QueryRewriter(llm, use_model=not args.no_model, rules=rules),
        "plain": lambda: PlainFewShotRewriter(llm),
        "copy": CopyRewriter,
    }[args.rewriter]()
    progress = progress_printer(sys.stderr.isatty())
    print(describe_providers(settings), file=sys.stderr)
    warm = rewriter.warm()
    if warm:
        print(f"model warmed in {warm:.1f} s (not counted below)", file=sys.stderr)

    text_only = bool(args.cast or args.canard)
    rows: list[Any] = []
    entity_memory = None
    if args.cast:
        rows = references.cast_rows(args.cast, args.limit, args.seed)
    elif args.canard:
        rows = references.canard_rows(args.canard, args.limit, args.seed)
    elif args.entities == "rules":
        from memory_chains.entities import EntityTracker, RuleEntityExtractor

        extractor = RuleEntityExtractor()

        def entity_memory() -> EntityTracker:
            return EntityTracker(extractor)

    legacy = args.set in ("legacy", "far")
    shipped = {"legacy": harness.DEV_DATASET, "far": harness.FAR_DATASET}
    dataset = args.dataset or shipped.get(args.set) or harness.FOLLOWUP_SETS[args.set]
    corpus = args.corpus or (harness.DEV_CORPUS if legacy else harness.FOLLOWUP_CORPUS)

    def evaluate(measured: Any) -> dict[str, Any]:
        if text_only:
            return references.evaluate_references(rows, measured, progress=progress)
        return harness.evaluate_rewrites(
            corpus,
            dataset,
            measured,
            get_embeddings(settings),
            k=args.k,
            progress=progress,
            entity_memory=entity_memory,
            search=args.search,
        )

    keys: tuple[str, ...] = _TEXT_KEYS
    if text_only:
        print(f"{'CAsT' if args.cast else 'CANARD'} follow-ups (n={len(rows)})")
    else:
        print(f"dataset {dataset}, rules {','.join(rules) or 'none'}", file=sys.stderr)
        keys = tuple(key.replace("@3", f"@{args.k}") for key in _KEYS)
    report = evaluate(rewriter)
    if args.anchor:
        anchor = PlainFewShotRewriter(llm or get_chat_model(settings))
        anchor.warm()
        anchored = evaluate(anchor)
        anchored.pop("items")
        report["anchor"] = {k: v for k, v in anchored.items() if not k.startswith("by_")}
        if report.get("secs_per_item") and anchored.get("secs_per_item"):
            report["time_ratio_to_anchor"] = round(
                report["secs_per_item"] / anchored["secs_per_item"], 3
            )
    items = report.pop("items")
    if args.verbose:
        for item in items:
            print(
                f"{item['id']:>22} rank={item.get('rank', '-')} {item['method']:9} "
                f"{item['question']!r} -> {item['standalone']!r}"
                + (f"  [{item['error']}]" if item["error"] else "")
            )
    if args.save:
        with open(args.save, "w", encoding="utf-8") as handle:
            for item in items:
                handle.write(json.dumps(item, ensure_ascii=False) + "\n")
    _table(report, keys)
    if "anchor" in report:
        print("anchor (plain 4-shot prompt, same model, same run):")
        _table(report["anchor"], keys)
        print(f"time ratio to the anchor: {fmt(report.get('time_ratio_to_anchor'))}")
    report["items"] = items
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
    return 0


def _table(report: dict[str, Any], keys: tuple[str, ...]) -> None:
    rows = [("all", report)]
    for group in ("by_language", "by_family"):
        rows.extend(sorted(report.get(group, {}).items()))
    widths = [max(len(key), 6) + 1 for key in keys]
    print(f"{'':15}" + "".join(f"{key:>{w}}" for key, w in zip(keys, widths, strict=True)))
    for name, values in rows:
        cells = (f"{fmt(values.get(key)):>{w}}" for key, w in zip(keys, widths, strict=True))
        print(f"{name:15}" + "".join(cells))
