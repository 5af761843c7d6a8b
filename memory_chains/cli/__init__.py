"""The ``memory-chains`` command.

Each subcommand lives in its own module under :mod:`memory_chains.cli` and exposes
``register(subparsers)``; heavy imports happen inside the command's ``run`` function so that
``memory-chains --help`` stays fast.

Example:
    >>> from memory_chains.cli import build_parser
    >>> build_parser().prog
    'memory-chains'
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from memory_chains.cli._registry import register_modules
from memory_chains.errors import MemoryChainsError

__all__ = ["build_parser", "main"]

# Modules registering subcommands, in the order --help lists them.
_COMMAND_MODULES = (
    "memory_chains.cli._demo",
    "memory_chains.cli._chat",
    "memory_chains.cli._serve",
    "memory_chains.cli._eval",
    "memory_chains.cli._bench",
    "memory_chains.cli._models",
    "memory_chains.cli._sessions",
    "memory_chains.cli._forget",
    "memory_chains.cli._export",
    "memory_chains.cli._metrics",
)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every available subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="memory-chains",
        description="Conversational memory for LangChain apps, offline by default.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    register_modules(sub, _COMMAND_MODULES)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``memory-chains`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        parser.print_help()
        return 2
    try:
        return int(args.run(args) or 0)
    except MemoryChainsError as exc:
        print(f"memory-chains: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
