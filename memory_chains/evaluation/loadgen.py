"""Several processes writing turns into one store, and the checks that nothing went wrong.

Used by ``memory-chains bench stores`` and by the process-level tests
(``tests/integration/test_store_processes.py``). Core types:

* :class:`StoreTarget`: how a child process opens the shared store (a URL plus, for tests
  and benchmarks, a private Redis key prefix or PostgreSQL schema), serialisable as JSON;
* :func:`run_load`: starts N writer processes
  (``python -m memory_chains.evaluation.loadgen``), releases them together, and collects
  their :class:`WriterReport`;
* :func:`verify_turns`: reads the store back and counts lost, duplicated, out-of-order and
  partial turns.

What each writer writes (the turn plan, tokens in every turn) is in
``memory_chains/evaluation/_loadgen_plan.py``. The load generator is benchmark and test
code: it lives in the evaluation package, outside the runtime packages.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from memory_chains.errors import ConfigurationError, InvalidInputError, StoreError
from memory_chains.evaluation._loadgen_plan import (
    WriterReport,
    iter_turn_plan,
    turn_plan,
    write_turns,
)
from memory_chains.evaluation._loadgen_verify import Verification, verify_turns
from memory_chains.stores import BaseStore

__all__ = [
    "StoreTarget",
    "Verification",
    "WriterReport",
    "child_command",
    "child_env",
    "percentile",
    "run_load",
    "verify_turns",
]


@dataclass(frozen=True)
class StoreTarget:
    """How to open the shared store in any process.

    Args:
        url: a store URL (``sqlite:////abs/path``, ``redis://…``, ``postgresql://…``).
        prefix: Redis key prefix (default ``"mc:"``).
        schema: PostgreSQL schema (default ``"public"``).

    Example:
        >>> StoreTarget.from_json(StoreTarget("memory://").to_json()).url
        'memory://'
    """

    url: str
    prefix: str | None = None
    schema: str | None = None

    @property
    def kind(self) -> str:
        """``sqlite``, ``redis``, ``postgresql`` or ``memory``."""
        scheme = self.url.split("://", 1)[0].lower()
        return {"rediss": "redis", "postgres": "postgresql"}.get(scheme, scheme)

    def open(self) -> BaseStore:
        """A new, not yet set up, store instance for this target."""
        if self.kind == "redis" and self.prefix:
            from memory_chains.stores import RedisStore

            return RedisStore(self.url, prefix=self.prefix)
        if self.kind == "postgresql" and self.schema:
            from memory_chains.stores import PostgresStore

            return PostgresStore(self.url, schema=self.schema, min_size=1, max_size=2)
        from memory_chains.stores import open_store

        return open_store(self.url, setup=False)

    def destroy(self) -> None:
        """Erase everything the target holds: the SQLite files, the Redis prefix's keys
        or the PostgreSQL schema. For tests and benchmarks only."""
        if self.kind == "sqlite":
            path = self.url.split("://", 1)[1]
            path = path[1:] if path.startswith("/") else path
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(path + suffix).unlink(missing_ok=True)
            return
        store = self.open()
        try:
            if self.kind == "redis":
                store.clear()  # type: ignore[attr-defined]
            elif self.kind == "postgresql":
                from psycopg import sql

                with store._tx() as conn:  # type: ignore[attr-defined]
                    name = getattr(store, "schema", "public")
                    if name == "public":
                        conn.execute(
                            "DROP TABLE IF EXISTS mc_turns, mc_sessions, mc_summaries,"
                            " mc_documents, mc_schema, mc_tombstones"
                        )
                    else:
                        conn.execute(
                            sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name))
                        )
        finally:
            store.close()

    def to_json(self) -> str:
        """The target as one JSON object (passed to child processes)."""
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> StoreTarget:
        """Inverse of :meth:`to_json`."""
        data = json.loads(text)
        return cls(data["url"], data.get("prefix"), data.get("schema"))


def percentile(values: Iterable[float], q: float) -> float:
    """The ``q``-th percentile (0-100, nearest rank) of ``values``; NaN when empty.

    Example:
        >>> percentile([1.0, 2.0, 3.0, 4.0], 50)
        2.0
    """
    ordered = sorted(values)
    if not ordered:
        return math.nan
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


# -- child processes ---------------------------------------------------------------------


def child_command(
    target: StoreTarget,
    worker: int,
    turns: int,
    sessions: int,
    users: int,
    *,
    payload: int = 0,
    gate: bool = False,
) -> list[str]:
    """The command line of one writer process (``python -m memory_chains.evaluation.loadgen``).

    The child prints ``ready`` once set up (and, without ``gate``, after its first
    append), waits for a line on stdin if ``gate``, then writes and prints its
    :class:`WriterReport` as one JSON line.

    Example:
        >>> child_command(StoreTarget("memory://"), 0, 1, 1, 1)[1:3]
        ['-m', 'memory_chains.evaluation.loadgen']
    """
    return [
        sys.executable,
        "-m",
        "memory_chains.evaluation.loadgen",
        "--target",
        target.to_json(),
        "--worker",
        str(worker),
        "--turns",
        str(turns),
        "--sessions",
        str(sessions),
        "--users",
        str(users),
        "--payload",
        str(payload),
        *(["--gate"] if gate else []),
    ]


def child_env() -> dict[str, str]:
    """The environment of writer processes: this one, with this package importable."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    return env


def run_load(
    target: StoreTarget,
    processes: int,
    turns: int,
    *,
    sessions: int = 64,
    users: int = 8,
    timeout: float = 600.0,
) -> list[WriterReport]:
    """Run ``processes`` writers of ``turns`` turns each against ``target``, released
    together once all are set up; return their reports (ordered by writer).

    Raises:
        InvalidInputError: bad counts.
        StoreError: a writer could not set up the store or died (its stderr is quoted).

    Example:
        >>> import tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "load.sqlite3")
        >>> reports = run_load(StoreTarget(f"sqlite:///{path}"), 2, 3, sessions=2, users=1)
        >>> [r.written for r in reports]
        [3, 3]
    """
    if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
        raise InvalidInputError(f"processes must be an integer >= 1, got {processes!r}")
    turn_plan(0, turns, sessions, users)  # validates the counts
    setup = target.open()
    try:
        setup.setup()  # once, before the writers race
    finally:
        setup.close()
    children = [
        subprocess.Popen(
            child_command(target, w, turns, sessions, users, gate=True),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=child_env(),
        )
        for w in range(processes)
    ]
    try:
        for child in children:
            assert child.stdout is not None
            line = child.stdout.readline()
            if line.strip() != "ready":
                _, err = child.communicate(timeout=timeout)
                raise StoreError(f"a writer failed to start: {line}{err[-2000:]}")
        for child in children:  # the start gate: all set up, now go
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        reports = []
        for child in children:
            out, err = child.communicate(timeout=timeout)
            if child.returncode != 0 or not out.strip():
                raise StoreError(f"a writer exited with {child.returncode}: {err[-2000:]}")
            data = json.loads(out.strip().splitlines()[-1])
            data["latencies_ms"] = tuple(data["latencies_ms"])
            reports.append(WriterReport(**data))
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()
    return sorted(reports, key=lambda r: r.worker)


def main(argv: Sequence[str] | None = None) -> int:
    """A writer process: open the target, say ``ready``, write the plan, print a report."""
    parser = argparse.ArgumentParser(prog="python -m memory_chains.evaluation.loadgen")
    parser.add_argument("--target", required=True)
    parser.add_argument("--worker", type=int, required=True)
    parser.add_argument("--turns", type=int, required=True)
    parser.add_argument("--sessions", type=int, default=64)
    parser.add_argument("--users", type=int, default=8)
    parser.add_argument("--payload", type=int, default=0)
    parser.add_argument("--gate", action="store_true", help="wait for a stdin line to start")
    args = parser.parse_args(argv)
    try:
        target = StoreTarget.from_json(args.target)
    except (ValueError, KeyError) as exc:
        raise ConfigurationError(f"--target is not a StoreTarget JSON: {exc}") from exc
    plan = iter_turn_plan(args.worker, args.turns, args.sessions, args.users, payload=args.payload)
    store = target.open()
    store.setup()

    def ready() -> None:
        print("ready", flush=True)

    if args.gate:
        ready()
        sys.stdin.readline()
        report = write_turns(store, args.worker, plan)
    else:
        report = write_turns(store, args.worker, plan, on_first=ready)
    store.close()
    print(json.dumps(asdict(report)), flush=True)
    return 0


if __name__ == "__main__":  # pragma: no cover - run as a child process
    sys.exit(main())
