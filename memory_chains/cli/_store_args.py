"""Options shared by the commands that work on a user's data in a store.

``--store URL`` (default: ``MEMORY_CHAINS_STORE``, else the SQLite file under
``MEMORY_CHAINS_HOME``), ``--user U`` and, where it applies, ``--session S``. Nothing
heavy is imported here: the store is opened inside the commands' ``run``.

Example:
    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> add_store_options(parser, user_required=True)
    >>> parser.parse_args(["--user", "alice"]).store is None
    True
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

__all__ = [
    "add_docs_option",
    "add_store_option",
    "add_store_options",
    "confirm",
    "describe_store",
    "open_cli_store",
]


def add_store_option(parser: Any) -> None:
    """Add ``--store URL``."""
    parser.add_argument(
        "--store",
        metavar="URL",
        default=None,
        help="store URL: sqlite:///file, redis://host:port/db, postgresql://user@host/db "
        "(default: MEMORY_CHAINS_STORE, else memory.sqlite3 under MEMORY_CHAINS_HOME)",
    )


def add_docs_option(parser: Any) -> None:
    """Add ``--docs FOLDER`` (default: the sample knowledge base)."""
    parser.add_argument(
        "--docs",
        type=Path,
        default=None,
        help="folder of .txt/.md documents (default: the sample knowledge base)",
    )


def add_store_options(parser: Any, *, user_required: bool, session: bool = False) -> None:
    """Add ``--store`` and ``--user`` (and ``--session`` when ``session``)."""
    add_store_option(parser)
    parser.add_argument(
        "--user",
        metavar="U",
        required=user_required,
        default=None,
        help="user id (1-64 of A-Z a-z 0-9 _ - . : @)",
    )
    if session:
        parser.add_argument("--session", metavar="S", default=None, help="session id")


def open_cli_store(
    url: str | None,
    *,
    resilient: bool = False,
    read_only: bool = False,
    must_exist: bool = False,
) -> Any:
    """Open (and set up) the store ``--store`` names, or the settings' default store.

    ``resilient`` wraps it in :class:`~memory_chains.stores.ResilientStore` (the chat keeps
    answering, without memory, while the store is unreachable). ``read_only`` (export,
    listing, metrics) opens an existing store without writing anything, so a file the user
    may only read works; ``must_exist`` (forget, merge, end, purge) refuses to create one.
    Either way a mistyped ``--store`` is an error, never a new empty store.

    Raises:
        StoreNotFoundError: ``read_only`` or ``must_exist`` and there is no store there.
    """
    from memory_chains.errors import StoreNotFoundError
    from memory_chains.stores import open_store

    try:
        return open_store(url, resilient=resilient, read_only=read_only, must_exist=must_exist)
    except StoreNotFoundError as exc:
        where = "--store" if url is not None else "MEMORY_CHAINS_STORE / MEMORY_CHAINS_HOME"
        raise StoreNotFoundError(f"{exc}; check {where}") from exc


def describe_store(store: Any) -> str:
    """A short name for messages, without credentials: the scheme and, for SQLite, the file.

    Example:
        >>> from memory_chains.stores import InMemoryStore
        >>> describe_store(InMemoryStore())
        'memory store'
    """
    path = getattr(getattr(store, "inner", store), "path", None)  # through ResilientStore
    return f"{store.scheme} store {path}" if path else f"{store.scheme} store"


def confirm(question: str, assume_yes: bool) -> bool:
    """True when ``assume_yes`` or the user answers yes on a terminal.

    Raises:
        ConfigurationError: no terminal to ask and ``--yes`` was not given.
    """
    if assume_yes:
        return True
    from memory_chains.errors import ConfigurationError

    if not sys.stdin.isatty():
        raise ConfigurationError(f"{question} — no terminal to ask: pass --yes to confirm")
    answer = input(f"{question} [y/N] ").strip().lower()
    return answer in ("y", "yes", "o", "oui")
