"""Several processes writing turns into one store, and the checks that nothing went wrong.

Used by ``memory-chains bench stores`` and by the process-level tests
(``tests/integration/test_store_processes.py``). Core types:

* :class:`StoreTarget`: how a child process opens the shared store (a URL plus, for tests
  and benchmarks, a private Redis key prefix or PostgreSQL schema), serialisable as JSON;
* :func:`run_load`: starts N writer processes (``python -m memory_chains.stores._loadgen``),
  releases them together, and collects their :class:`WriterReport`;
* :func:`verify_turns`: reads the store back and counts lost, duplicated, out-of-order and
  partial turns (:class:`Verification`).

Every turn carries a unique token ``w<worker>-i<index>`` in both messages, so a turn whose
human and AI halves disagree, a turn written twice and a turn missing are all visible.
Writer ``w`` sends its ``i``-th turn to session ``s<(w + i) % sessions>`` of user
``u<session % users>``: every session receives interleaved turns from every writer.

Example:
    >>> plan = turn_plan(worker=1, turns=3, sessions=4, users=2)
    >>> [(p.user_id, p.session_id, p.token) for p in plan]
    [('u1', 's1', 'w1-i0'), ('u0', 's2', 'w1-i1'), ('u1', 's3', 'w1-i2')]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from memory_chains.errors import ConfigurationError, InvalidInputError, StoreError
from memory_chains.stores._base import BaseStore

__all__ = [
    "PlannedTurn",
    "StoreTarget",
    "Verification",
    "WriterReport",
    "iter_turn_plan",
    "percentile",
    "run_load",
    "turn_plan",
    "verify_turns",
]

_TOKEN_RE = re.compile(r"\bw(\d+)-i(\d+)\b")


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
            from memory_chains.stores._redis import RedisStore

            return RedisStore(self.url, prefix=self.prefix)
        if self.kind == "postgresql" and self.schema:
            from memory_chains.stores._postgres import PostgresStore

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


@dataclass(frozen=True)
class PlannedTurn:
    """One turn a writer will append.

    Example:
        >>> turn_plan(0, 1, 1, 1)[0].human.startswith("question w0-i0")
        True
    """

    user_id: str
    session_id: str
    token: str
    human: str
    ai: str


def turn_plan(
    worker: int, turns: int, sessions: int, users: int, *, payload: int = 0
) -> list[PlannedTurn]:
    """The turns writer ``worker`` appends, in order (``payload`` extra characters each).

    Raises:
        InvalidInputError: a count below 1 (``worker`` and ``payload`` below 0).

    Example:
        >>> len(turn_plan(0, 5, 2, 1))
        5
    """
    return list(iter_turn_plan(worker, turns, sessions, users, payload=payload))


def iter_turn_plan(
    worker: int, turns: int, sessions: int, users: int, *, payload: int = 0
) -> Iterator[PlannedTurn]:
    """:func:`turn_plan`, one turn at a time (a writer meant to be killed plans millions).

    Raises:
        InvalidInputError: as :func:`turn_plan`, before the first turn is yielded.

    Example:
        >>> next(iter_turn_plan(2, 10**9, 4, 2)).session_id
        's2'
    """
    for name, value, low in (
        ("worker", worker, 0),
        ("turns", turns, 1),
        ("sessions", sessions, 1),
        ("users", users, 1),
        ("payload", payload, 0),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise InvalidInputError(f"{name} must be an integer >= {low}, got {value!r}")
    return _plan(worker, turns, sessions, users, " " + "x" * payload if payload else "")


def _plan(worker: int, turns: int, sessions: int, users: int, filler: str) -> Iterator[PlannedTurn]:
    for i in range(turns):
        s = (worker + i) % sessions
        token = f"w{worker}-i{i}"
        yield PlannedTurn(
            user_id=f"u{s % users}",
            session_id=f"s{s}",
            token=token,
            human=f"question {token}{filler}",
            ai=f"answer {token}",
        )


@dataclass(frozen=True)
class WriterReport:
    """What one writer process did.

    Attributes:
        worker: the writer's number.
        written: turns whose append returned.
        started, ended: wall-clock time (``time.time()``) of the first and last append.
        latencies_ms: duration of each append, in order.
        error: the error that stopped the writer early ("" if none).

    Example:
        >>> WriterReport(0, 0, 0.0, 0.0).error
        ''
    """

    worker: int
    written: int
    started: float
    ended: float
    latencies_ms: tuple[float, ...] = ()
    error: str = ""


def write_turns(
    store: BaseStore, worker: int, plan: Iterable[PlannedTurn], *, on_first: Any = None
) -> WriterReport:
    """Append ``plan`` to ``store`` in order, timing each append.

    ``on_first`` (a callable) runs after the first append returned. A store error stops
    the writer and is reported, not raised.

    Example:
        >>> from memory_chains.stores import InMemoryStore
        >>> write_turns(InMemoryStore(), 0, turn_plan(0, 3, 2, 1)).written
        3
    """
    latencies: list[float] = []
    started = time.time()
    error = ""
    for n, turn in enumerate(plan):
        t0 = time.perf_counter()
        try:
            store.append_turn(
                turn.user_id, turn.session_id, turn.human, turn.ai, {"token": turn.token}
            )
        except StoreError as exc:
            error = f"{type(exc).__name__}: {exc}"
            break
        latencies.append((time.perf_counter() - t0) * 1000)
        if n == 0 and on_first is not None:
            on_first()
    return WriterReport(worker, len(latencies), started, time.time(), tuple(latencies), error)


@dataclass(frozen=True)
class Verification:
    """The store read back after writers ran.

    Attributes:
        expected: turns the writers reported as written.
        found: turns in the store (all sessions of the plan).
        lost: reported written but absent.
        duplicated: tokens found more than once.
        out_of_order: pairs of one writer's turns stored in the wrong order in a session.
        partial: turns whose human and AI halves (or metadata) disagree, malformed turns,
            ``seq`` gaps and sessions whose counter disagrees with their turns.
        not_prefix: writers whose stored turns are not their first k turns (a turn after a
            missing one: the log lost a write in the middle).
        problems: the first problems found, for messages.

    Example:
        >>> Verification(1, 1, 0, 0, 0, 0, 0).ok
        True
    """

    expected: int
    found: int
    lost: int
    duplicated: int
    out_of_order: int
    partial: int
    not_prefix: int
    problems: tuple[str, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        """No turn lost, duplicated, reordered or partial."""
        return not (
            self.lost or self.duplicated or self.out_of_order or self.partial or self.not_prefix
        )


def verify_turns(
    store: BaseStore, sessions: int, users: int, written: dict[int, int] | None = None
) -> Verification:
    """Read every session of the plan back and check it.

    Args:
        store: the store (set up).
        sessions, users: as given to :func:`turn_plan`.
        written: turns each writer reported as written (writer -> count); a writer killed
            mid-write may have one more turn stored than it reported, never fewer.

    Example:
        >>> from memory_chains.stores import InMemoryStore
        >>> store = InMemoryStore()
        >>> report = write_turns(store, 0, turn_plan(0, 4, 2, 1))
        >>> verify_turns(store, 2, 1, {0: report.written}).ok
        True
    """
    problems: list[str] = []
    seen: dict[tuple[int, int], int] = {}
    partial = out_of_order = 0
    for s in range(sessions):
        user_id, session_id = f"u{s % users}", f"s{s}"
        turns = store.turns_after(user_id, session_id)
        count, last = store.count_turns(user_id, session_id), store.last_seq(user_id, session_id)
        if [t.seq for t in turns] != list(range(1, len(turns) + 1)) or (count, last) != (
            len(turns),
            len(turns),
        ):
            partial += 1
            problems.append(
                f"{session_id}: seqs {[t.seq for t in turns][:8]}…, count {count}, last {last}"
            )
        last_index: dict[int, int] = {}
        for t in turns:
            h, a = _TOKEN_RE.findall(t.human), _TOKEN_RE.findall(t.ai)
            meta = t.metadata.get("token")
            if len(h) != 1 or h != a or meta != f"w{h[0][0]}-i{h[0][1]}":
                partial += 1
                problems.append(f"{session_id} seq {t.seq}: partial turn {t.human!r}/{t.ai!r}")
                continue
            worker, index = int(h[0][0]), int(h[0][1])
            if (worker + index) % sessions != s:
                partial += 1
                problems.append(f"{session_id} seq {t.seq}: turn w{worker}-i{index} misfiled")
            seen[(worker, index)] = seen.get((worker, index), 0) + 1
            if index <= last_index.get(worker, -1):
                out_of_order += 1
                problems.append(f"{session_id} seq {t.seq}: w{worker}-i{index} out of order")
            last_index[worker] = index
    duplicated = sum(n - 1 for n in seen.values() if n > 1)
    lost = not_prefix = 0
    workers = set(written or {}) | {w for w, _ in seen}
    for w in sorted(workers):
        indexes = sorted({i for ww, i in seen if ww == w})
        if indexes != list(range(len(indexes))):
            not_prefix += 1
            problems.append(f"writer {w}: stored turns are not a prefix ({indexes[:5]}…)")
        reported = (written or {}).get(w)
        if reported is not None:
            missing = [i for i in range(reported) if (w, i) not in seen]
            lost += len(missing)
            if missing:
                problems.append(f"writer {w}: {len(missing)} turns lost, first i{missing[0]}")
            if len(indexes) > reported + 1:
                problems.append(f"writer {w}: {len(indexes)} stored, {reported} reported")
                not_prefix += 1
    return Verification(
        expected=sum((written or {}).values()),
        found=sum(seen.values()),
        lost=lost,
        duplicated=duplicated,
        out_of_order=out_of_order,
        partial=partial,
        not_prefix=not_prefix,
        problems=tuple(problems[:10]),
    )


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
    """The command line of one writer process (``python -m memory_chains.stores._loadgen``).

    The child prints ``ready`` once set up (and, without ``gate``, after its first
    append), waits for a line on stdin if ``gate``, then writes and prints its
    :class:`WriterReport` as one JSON line.

    Example:
        >>> child_command(StoreTarget("memory://"), 0, 1, 1, 1)[1:3]
        ['-m', 'memory_chains.stores._loadgen']
    """
    return [
        sys.executable,
        "-m",
        "memory_chains.stores._loadgen",
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
    parser = argparse.ArgumentParser(prog="python -m memory_chains.stores._loadgen")
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
