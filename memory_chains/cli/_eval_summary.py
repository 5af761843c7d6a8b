"""``memory-chains eval summary``: how faithful the running summary is.

Feeds the scripted conversations of the data set to three memories with the same
``--keep-last``: the summary memory with the default chat model, the same memory whose
summarizer writes nothing (what the code alone keeps: the turns' sentences with numbers),
and a window of the last turns (the anchor: no summary). Prints, for each, the gold facts
the next prompt still states, those of the folded turns the summary states, the summary
items that give a number to the wrong thing, and the context tokens; see
:mod:`memory_chains.evaluation.summary`. With ``--json`` the last line is one JSON object.

The held-out set was written before the last summary changes were measured, and is never
tuned on.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from memory_chains.cli._eval_common import add_set_options, chosen_dataset, fmt, progress_printer


def register(sub: Any) -> None:
    """Add ``eval summary`` to the ``eval`` sub-parser."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "summary", help="evaluate the running summary (facts kept, numbers misattributed)"
    )
    add_set_options(
        parser,
        "a packaged set: dev (4 French/English conversations, 49 facts; default) or "
        "heldout (3 conversations, 29 facts)",
    )
    parser.add_argument(
        "--max-turns", type=int, default=6, help="compact past this many verbatim turns (6)"
    )
    parser.add_argument("--keep-last", type=int, default=2, help="turns kept verbatim (2)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N cases")
    parser.add_argument(
        "--no-model", action="store_true", help="skip the model: the code-only and window rows"
    )
    parser.add_argument(
        "--verbose", action="store_true", help="print the lost facts and misattributed items"
    )
    parser.add_argument("--json", action="store_true", help="last line: one JSON object")
    parser.set_defaults(run=run)


class _WritesNothing:
    """A summarizer that adds nothing: what compaction keeps without a model."""

    def summarize(self, previous: Any, turns: Sequence[Any]) -> Any:
        return previous


def run(args: argparse.Namespace) -> int:
    """Run the evaluation; returns the process exit code."""
    from memory_chains.errors import InvalidInputError
    from memory_chains.evaluation.summary import evaluate_summary, load_summary_cases
    from memory_chains.memory import LLMSummarizer, SummaryCore, WindowCore
    from memory_chains.providers import get_token_counter

    if args.max_turns < 1 or args.keep_last < 0 or args.keep_last >= args.max_turns:
        raise InvalidInputError("need --max-turns >= 1 and 0 <= --keep-last < --max-turns")
    if args.limit is not None and args.limit < 1:
        raise InvalidInputError("--limit must be at least 1")
    path = chosen_dataset(args, "summary")
    cases = load_summary_cases(path)[: args.limit]
    llm = None
    if not args.no_model:
        from memory_chains.providers import get_chat_model

        llm = get_chat_model(max_tokens=320)
    count = get_token_counter(llm)

    def summary_memory(summarizer: Any) -> SummaryCore:
        return SummaryCore(
            summarizer=summarizer,
            max_turns=args.max_turns,
            keep_last=args.keep_last,
            background=False,
            token_counter=count,
        )

    makers: dict[str, Any] = {}
    if llm is not None:
        makers["summary"] = lambda: summary_memory(LLMSummarizer(llm, max_output_tokens=320))
    makers["summary_code_only"] = lambda: summary_memory(_WritesNothing())
    makers[f"window_{args.keep_last}"] = lambda: WindowCore(k=args.keep_last, token_counter=count)

    print(
        f"summary fidelity: {len(cases)} conversations from {path.name}, "
        f"compaction past {args.max_turns} turns, last {args.keep_last} kept verbatim, "
        f"model {type(llm).__name__ if llm is not None else 'none'}"
    )
    report: dict[str, Any] = {
        "dataset": str(path),
        "max_turns": args.max_turns,
        "keep_last": args.keep_last,
    }
    print(
        f"{'memory':22} {'fact recall':>11} {'summary recall':>14} {'misattributed':>13} "
        f"{'tokens':>7} {'compactions':>11} {'seconds':>8}"
    )
    for name, make in makers.items():
        row = evaluate_summary(cases, make, progress=progress_printer(not args.json))
        report[name] = row
        print(
            f"{name:22} {fmt(row['fact_recall']):>11} {fmt(row['summary_recall']):>14} "
            f"{row['misattributed_items']:>6} of {row['summary_items']:<4} "
            f"{fmt(row['mean_context_tokens']):>7} {row['compactions']:>11} "
            f"{row['seconds']:>8}"
        )
        if args.verbose:
            for case in row["per_case"]:
                for wrong in case["misattributed"]:
                    print(f"  {case['id']}: wrong {wrong['item']!r} (numbers {wrong['numbers']})")
                for fact in case["missed"] if name.startswith("summary") else ():
                    print(f"  {case['id']}: lost {fact}")
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
    return 0
