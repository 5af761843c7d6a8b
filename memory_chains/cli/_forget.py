"""``memory-chains forget --user U [--session S]``: erase a user's data (or one session).

Without ``--session``: everything the store holds about the user — every session's turns
and summary, session metadata, entities, profile, facts, vectors
(:func:`~memory_chains.stores.forget_user`). With ``--session``: that session only
(:func:`~memory_chains.stores.forget_session`). A tombstone stays, so nothing more is
stored about them until the application re-admits them. Asks for confirmation on a
terminal; ``--yes`` skips the question (required in scripts). Prints what was deleted as
counts. A ``--store`` that holds no store is an error (nothing is created).

Example:
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="memory-chains")
    >>> register(parser.add_subparsers())
    >>> parser.parse_args(["forget", "--user", "alice", "--yes"]).yes
    True
"""

from __future__ import annotations

import argparse
import json
from typing import Any

__all__ = ["register", "run"]


def register(sub: Any) -> None:
    """Add the ``forget`` subcommand."""
    from memory_chains.cli._store_args import add_store_options

    parser: argparse.ArgumentParser = sub.add_parser(
        "forget",
        help="erase everything held about a user (or one session) from a store",
        description=__doc__.split("\n\nExample:")[0] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_store_options(parser, user_required=True, session=True)
    parser.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    parser.add_argument("--json", action="store_true", help="print the counts as one JSON line")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Forget the user (or the session) and print the counts."""
    from memory_chains.cli._store_args import confirm, describe_store, open_cli_store
    from memory_chains.stores import forget_session, forget_user, validate_id

    user = validate_id(args.user, "--user")
    session = None if args.session is None else validate_id(args.session, "--session")
    store = open_cli_store(args.store, must_exist=True)  # a typo must not say "erased 0"
    try:
        what = f"user {user!r}" if session is None else f"session {session!r} of user {user!r}"
        if not confirm(f"Erase {what} from the {describe_store(store)}?", args.yes):
            print("nothing erased")
            return 1
        if session is None:
            result = forget_user(store, user)
        else:
            result = forget_session(store, user, session)
    finally:
        store.close()
    counts = {"sessions": result.sessions, "turns": result.turns, "documents": result.documents}
    if args.json:
        print(json.dumps({"user": user, "session": session, **counts}))
    else:
        print(
            f"erased {what}: {result.sessions} session(s), {result.turns} turn(s), "
            f"{result.documents} document(s)"
        )
    return 0
