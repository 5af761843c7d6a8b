"""``memory-chains bench …``: benchmarks (each kind in its own module)."""

from __future__ import annotations

import argparse
from typing import Any

from memory_chains.cli._registry import register_modules

_BENCH_MODULES = (
    "memory_chains.cli._bench_endpoint",
    "memory_chains.cli._bench_memory",
    "memory_chains.cli._bench_stores",
    "memory_chains.cli._bench_serve",
)


def register(sub: Any) -> None:
    """Add ``bench`` and its sub-subcommands to the parser."""
    parser: argparse.ArgumentParser = sub.add_parser("bench", help="run a benchmark")
    bench_sub = parser.add_subparsers(dest="bench_command", metavar="KIND")
    register_modules(bench_sub, _BENCH_MODULES)
