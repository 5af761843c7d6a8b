"""``memory-chains metrics``: conversation metrics of one stored session.

Reads every turn of ``--session`` for ``--user`` from ``--store`` and prints the
:class:`~memory_chains.metrics.ConversationReport`; with ``--json`` the last line is one
JSON object. Turns without a recorded memory context are assumed to have been given the
``--assume-window`` previous exchanges (0 leaves them out of the memory measures).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

__all__ = ["register"]


def register(sub: Any) -> None:
    """Add ``metrics`` to the subcommands."""
    from memory_chains.cli._store_args import add_store_options

    parser: argparse.ArgumentParser = sub.add_parser(
        "metrics",
        help="conversation metrics of a stored session",
        description="Conversation metrics of one stored session: message lengths "
        "(characters and tokens), clarification requests, topic coherence (embeddings; "
        "--no-coherence skips it) and how much of the memory offered the answers used. "
        "Reads the store; no chat model is called.",
    )
    add_store_options(parser, user_required=True)
    parser.add_argument("--session", metavar="S", required=True, help="session id")
    parser.add_argument(
        "--assume-window",
        type=int,
        default=5,
        metavar="N",
        help="memory context of turns that recorded none: the N previous exchanges (default 5)",
    )
    parser.add_argument(
        "--no-coherence", action="store_true", help="skip topic coherence (no embeddings)"
    )
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    parser.set_defaults(run=run)


def _fmt(value: object) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) or "-"
    return str(value)


def run(args: argparse.Namespace) -> int:
    """Measure the session and print the report."""
    from memory_chains.cli._store_args import open_cli_store
    from memory_chains.errors import InvalidInputError
    from memory_chains.metrics import ConversationMetrics

    if args.assume_window < 0:
        raise InvalidInputError("--assume-window must be 0 or more")
    store = open_cli_store(args.store, read_only=True)
    try:
        metrics = ConversationMetrics(
            coherence=not args.no_coherence, history_window=args.assume_window or None
        )
        report = metrics.measure_session(store, args.user, args.session)
    finally:
        store.close()
    data = report.as_dict()
    width = max(map(len, data))
    print(f"session {args.session} of user {args.user}")
    for key, value in data.items():
        print(f"  {key:<{width}}  {_fmt(value)}")
    if args.json:
        print(json.dumps({"user": args.user, "session": args.session, **data}))
    return 0
