"""``memory-chains eval …``: evaluation harnesses (each kind in its own module).

Every evaluator module exposes ``register(subparsers)`` for its ``eval`` sub-subcommand.
"""

from __future__ import annotations

import argparse
from typing import Any

from memory_chains.cli._registry import register_modules

_EVAL_MODULES = (
    "memory_chains.cli._eval_rewrite",
    "memory_chains.cli._eval_entities",
    "memory_chains.cli._eval_topics",
    "memory_chains.cli._eval_locomo",
    "memory_chains.cli._eval_longterm",
    "memory_chains.cli._eval_summary",
)


def register(sub: Any) -> None:
    """Add ``eval`` and its sub-subcommands to the parser."""
    parser: argparse.ArgumentParser = sub.add_parser("eval", help="run an evaluation harness")
    eval_sub = parser.add_subparsers(dest="eval_command", metavar="KIND")
    register_modules(eval_sub, _EVAL_MODULES)
