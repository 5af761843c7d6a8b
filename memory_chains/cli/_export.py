"""``memory-chains export --user U [--output FILE]``: everything held about a user, as JSON.

One JSON document (:func:`~memory_chains.stores.export_user`): every session with its
turns and summary, and every document of the user (session metadata, entities, profile,
facts). Printed on stdout, or written to ``--output`` (readable by its owner only).

Example:
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="memory-chains")
    >>> register(parser.add_subparsers())
    >>> parser.parse_args(["export", "--user", "alice"]).output is None
    True
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["register", "run"]


def register(sub: Any) -> None:
    """Add the ``export`` subcommand."""
    from memory_chains.cli._store_args import add_store_options

    parser: argparse.ArgumentParser = sub.add_parser(
        "export",
        help="export everything held about a user as one JSON document",
        description=__doc__.split("\n\nExample:")[0] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_store_options(parser, user_required=True)
    parser.add_argument("--output", type=Path, default=None, help="write to FILE instead of stdout")
    parser.set_defaults(run=run)


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically, readable by its owner only (0600)."""
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def run(args: argparse.Namespace) -> int:
    """Export the user and print (or write) the JSON."""
    from memory_chains.cli._store_args import open_cli_store
    from memory_chains.stores import export_user, validate_id

    user = validate_id(args.user, "--user")
    store = open_cli_store(args.store, read_only=True)
    try:
        document = export_user(store, user)
    finally:
        store.close()
    text = json.dumps(document, ensure_ascii=False, indent=2)
    if args.output is None:
        print(text)
        return 0
    write_private(args.output, text + "\n")
    turns = sum(len(s["turns"]) for s in document["sessions"])
    print(
        f"exported user {user!r} to {args.output}: {len(document['sessions'])} session(s), "
        f"{turns} turn(s), {len(document['documents'])} document(s)",
        file=sys.stderr,
    )
    return 0
