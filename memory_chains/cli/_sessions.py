"""``memory-chains sessions list|merge|end|purge``: a user's conversations in a store.

* ``list --user U [--all] [--json]``: sessions, most recent first (``--all`` adds expired
  sessions and merge tombstones);
* ``merge --user U S1 S2 … [--into ID]``: one session with every turn in time order;
* ``end --user U S``: close a session (its turns stay; ``chat`` no longer resumes it);
* ``purge [--user U]``: delete expired sessions for good.

``--ttl-hours`` (default 24) sets when an idle session expires.

Example:
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="memory-chains")
    >>> register(parser.add_subparsers())
    >>> parser.parse_args(["sessions", "merge", "--user", "a", "s1", "s2"]).sessions
    ['s1', 's2']
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

__all__ = ["register", "run"]


def register(sub: Any) -> None:
    """Add the ``sessions`` subcommand and its actions."""
    from memory_chains.cli._store_args import add_store_options

    parser: argparse.ArgumentParser = sub.add_parser(
        "sessions",
        help="list, merge, end or purge a user's sessions",
        description=__doc__.split("\n\nExample:")[0] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, help_text in (
        ("list", "list a user's sessions, most recent first"),
        ("merge", "merge sessions into one (turns in time order)"),
        ("end", "close a session"),
        ("purge", "delete expired sessions"),
    ):
        action = actions.add_parser(name, help=help_text)
        add_store_options(action, user_required=name != "purge")
        action.add_argument(
            "--ttl-hours", type=float, default=24.0, help="idle hours before a session expires"
        )
        action.add_argument("--json", action="store_true", help="print one JSON line")
        if name == "list":
            action.add_argument(
                "--all", action="store_true", help="include expired and merged sessions"
            )
        elif name == "merge":
            action.add_argument("sessions", nargs="+", metavar="SESSION")
            action.add_argument("--into", default=None, help="id of the merged session")
        elif name == "end":
            action.add_argument("session", metavar="SESSION")
    parser.set_defaults(run=run)


def _row(session: Any) -> dict[str, Any]:
    return {
        "session_id": session.session_id,
        "status": session.status,
        "created_at": session.created_at,
        "last_active_at": session.last_active_at,
        "devices": list(session.devices),
        "merged_into": session.merged_into,
        "merged_from": list(session.merged_from),
    }


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts)) if ts else "?"


def run(args: argparse.Namespace) -> int:
    """Run the chosen action and print its result."""
    from memory_chains.cli._store_args import open_cli_store
    from memory_chains.sessions import SessionManager

    # listing never writes (a read-only file works); the others never create a store
    reading = args.action == "list"
    store = open_cli_store(args.store, read_only=reading, must_exist=not reading)
    try:
        manager = SessionManager(store, ttl=args.ttl_hours * 3600)
        if args.action == "list":
            sessions = manager.list(args.user, include_expired=args.all)
            if args.json:
                print(json.dumps({"user": args.user, "sessions": [_row(s) for s in sessions]}))
                return 0
            if not sessions:
                print(f"no session for user {args.user!r}")
            for s in sessions:
                turns = store.count_turns(args.user, s.session_id)
                devices = ",".join(s.devices) or "-"
                print(
                    f"{s.session_id}  {s.status:<7}  {turns:>4} turns  "
                    f"last active {_when(s.last_active_at)}  devices {devices}"
                )
            return 0
        if args.action == "merge":
            merged = manager.merge(args.user, args.sessions, into=args.into)
            result: dict[str, Any] = {
                **_row(merged),
                "turns": store.count_turns(args.user, merged.session_id),
            }
            message = (
                f"merged {len(args.sessions)} session(s) into {merged.session_id} "
                f"({result['turns']} turns)"
            )
        elif args.action == "end":
            result = _row(manager.end(args.user, args.session))
            message = f"ended {args.session}"
        else:
            result = {"purged": manager.purge_expired(args.user)}
            message = f"purged {result['purged']} expired session(s)"
    finally:
        store.close()
    print(json.dumps(result) if args.json else message)
    return 0
