"""Pieces shared by the ``eval`` commands: the packaged ``--dataset`` option
(:func:`add_dataset_option`) and report printing (:func:`fmt`, :func:`progress_printer`).

Example:
    >>> fmt(0.12345), fmt(None), fmt(3)
    ('0.123', '-', '3')
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memory_chains.evaluation import DATA_DIR

__all__ = [
    "add_dataset_option",
    "add_set_options",
    "chosen_dataset",
    "fmt",
    "packaged_set",
    "progress_printer",
]


def add_dataset_option(parser: argparse.ArgumentParser, default: Path, help: str) -> None:
    """Add ``--dataset PATH`` (a JSONL file, ``default`` when not given)."""
    parser.add_argument("--dataset", type=Path, default=default, help=help)


def add_set_options(parser: argparse.ArgumentParser, help: str) -> None:
    """Add ``--set dev|heldout`` (a packaged set, ``dev`` by default) and ``--dataset PATH``
    (a JSONL file of one's own, which wins over ``--set``); :func:`chosen_dataset` reads
    them back."""
    parser.add_argument("--dataset", type=Path, help="a JSONL file (default: see --set)")
    parser.add_argument("--set", choices=("dev", "heldout"), default="dev", help=help)


def packaged_set(kind: str, name: str) -> Path:
    """The packaged evaluation set ``name`` (``dev`` or ``heldout``) of ``kind``.

    Example:
        >>> packaged_set("summary", "heldout").name
        'summary_heldout.jsonl'
    """
    return DATA_DIR / f"{kind}_{name}.jsonl"


def chosen_dataset(args: argparse.Namespace, kind: str) -> Path:
    """``--dataset`` when given, else the packaged ``--set`` of ``kind``."""
    path: Path = args.dataset or packaged_set(kind, args.set)
    return path


def fmt(value: Any) -> str:
    """A report value for a table cell: floats to three decimals, ``-`` for a missing one."""
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def progress_printer(enabled: bool) -> Callable[[int, int], None] | None:
    """A ``progress(done, total)`` callback printing ``done/total`` on stderr, or None.

    Example:
        >>> progress_printer(False) is None
        True
    """
    if not enabled:
        return None

    def show(done: int, total: int) -> None:
        print(f"\r{done}/{total}", end="" if done < total else "\n", file=sys.stderr, flush=True)

    return show
