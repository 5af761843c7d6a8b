"""``memory-chains bench stores``: several processes writing turns into one store.

For each backend (a temporary SQLite file, a Redis server, a PostgreSQL server), N writer
processes append M turns each, spread over many sessions of many users, all released at
once (:func:`memory_chains.evaluation.loadgen.run_load`). The store is then read back and
checked: 0 lost, 0 duplicated, each writer's turns in order within every session, no
partial turn. Reported per backend: turns per second (all turns over the wall-clock
window from the first append to the last), p50 and p95 latency of one append. Redis and
PostgreSQL run under a private key prefix / schema, erased afterwards; a backend without
a URL or whose server does not answer is reported as skipped. With ``--json`` the last
line printed is one JSON object. The exit status is 1 if any check failed.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

__all__ = ["register"]

_BACKENDS = ("sqlite", "redis", "postgres")


def register(sub: Any) -> None:
    """Add ``stores`` to the ``bench`` sub-commands."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "stores", help="N processes x M turns into one store, per backend: throughput, checks"
    )
    parser.add_argument("--processes", type=int, default=8, help="writer processes (N)")
    parser.add_argument("--turns", type=int, default=500, help="turns per process (M)")
    parser.add_argument("--sessions", type=int, default=64, help="sessions written to")
    parser.add_argument("--users", type=int, default=8, help="users owning the sessions")
    parser.add_argument(
        "--backends",
        default=",".join(_BACKENDS),
        help="comma-separated among sqlite, redis, postgres (default: all)",
    )
    parser.add_argument("--redis-url", default=None, help="default: $MEMORY_CHAINS_TEST_REDIS_URL")
    parser.add_argument(
        "--postgres-url", default=None, help="default: $MEMORY_CHAINS_TEST_POSTGRES_URL"
    )
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    parser.set_defaults(run=run)


@dataclass(frozen=True)
class StoreBenchResult:
    """One backend's figures (``skipped`` holds the reason when it did not run).

    Example:
        >>> StoreBenchResult("redis", skipped="no URL").ok
        False
    """

    backend: str
    processes: int = 0
    turns: int = 0
    seconds: float = 0.0
    turns_per_s: float = 0.0
    p50_ms: float = 0.0
    p95_ms: float = 0.0
    lost: int = 0
    duplicated: int = 0
    out_of_order: int = 0
    partial: int = 0
    ok: bool = False
    skipped: str = ""
    problems: tuple[str, ...] = ()


def _reachable(kind: str, url: str) -> str:
    """ "" if the server answers, else why not."""
    try:
        if kind == "redis":
            import redis

            redis.Redis.from_url(url, socket_connect_timeout=2).ping()
        else:
            import psycopg

            psycopg.connect(url, connect_timeout=2).close()
    except ImportError as exc:
        return f"driver missing ({exc.name}): pip install 'memory_chains[redis,postgres]'"
    except Exception as exc:  # any failure to connect means "skip this backend"
        return f"unreachable: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
    return ""


def bench_backend(
    backend: str,
    url: str | None,
    processes: int,
    turns: int,
    sessions: int,
    users: int,
    workdir: Path,
) -> StoreBenchResult:
    """Run the load on one backend and check the store; a missing server is a skip.

    Example:
        >>> import tempfile
        >>> r = bench_backend("sqlite", None, 2, 5, 4, 2, Path(tempfile.mkdtemp()))
        >>> (r.turns, r.lost, r.duplicated, r.ok)
        (10, 0, 0, True)
        >>> bench_backend("redis", "redis://127.0.0.1:1/0", 2, 5, 4, 2, Path(".")).skipped[:11]
        'unreachable'
    """
    from memory_chains.evaluation.loadgen import StoreTarget, percentile, run_load, verify_turns

    tag = uuid.uuid4().hex[:12]
    if backend == "sqlite":
        target = StoreTarget(f"sqlite:///{workdir / f'bench-{tag}.sqlite3'}")
    else:
        env = (
            "MEMORY_CHAINS_TEST_REDIS_URL"
            if backend == "redis"
            else ("MEMORY_CHAINS_TEST_POSTGRES_URL")
        )
        url = url or os.environ.get(env, "")
        if not url:
            return StoreBenchResult(backend, skipped=f"no URL (--{backend}-url or ${env})")
        why = _reachable(backend, url)
        if why:
            return StoreBenchResult(backend, skipped=why)
        target = (
            StoreTarget(url, prefix=f"mcbench:{tag}:")
            if backend == "redis"
            else StoreTarget(url, schema=f"mc_bench_{tag}")
        )
    try:
        reports = run_load(target, processes, turns, sessions=sessions, users=users)
        store = target.open()
        try:
            check = verify_turns(store, sessions, users, {r.worker: r.written for r in reports})
        finally:
            store.close()
    finally:
        target.destroy()
    written = sum(r.written for r in reports)
    window = max(r.ended for r in reports) - min(r.started for r in reports)
    latencies = [x for r in reports for x in r.latencies_ms]
    errors = tuple(f"writer {r.worker}: {r.error}" for r in reports if r.error)
    return StoreBenchResult(
        backend=backend,
        processes=processes,
        turns=written,
        seconds=round(window, 3),
        turns_per_s=round(written / window, 1) if window > 0 else 0.0,
        p50_ms=round(percentile(latencies, 50), 3),
        p95_ms=round(percentile(latencies, 95), 3),
        lost=check.lost + (processes * turns - written),
        duplicated=check.duplicated,
        out_of_order=check.out_of_order,
        partial=check.partial + check.not_prefix,
        ok=check.ok and not errors and written == processes * turns,
        problems=errors + check.problems,
    )


def run(args: argparse.Namespace) -> int:
    """Entry point of ``memory-chains bench stores``."""
    from memory_chains.errors import InvalidInputError

    for name in ("processes", "turns", "sessions", "users"):
        if getattr(args, name) < 1:
            raise InvalidInputError(f"--{name} must be at least 1")
    backends = [b.strip().lower() for b in args.backends.split(",") if b.strip()]
    backends = ["postgres" if b == "postgresql" else b for b in backends]
    unknown = sorted(set(backends) - set(_BACKENDS))
    if unknown or not backends:
        raise InvalidInputError(
            f"--backends: unknown {unknown or backends}; choose among {', '.join(_BACKENDS)}"
        )
    urls = {"sqlite": None, "redis": args.redis_url, "postgres": args.postgres_url}
    results = []
    with tempfile.TemporaryDirectory(prefix="mc-bench-stores-") as tmp:
        for backend in backends:
            results.append(
                bench_backend(
                    backend,
                    urls[backend],
                    args.processes,
                    args.turns,
                    args.sessions,
                    args.users,
                    Path(tmp),
                )
            )
    print(
        f"{args.processes} processes x {args.turns} turns into one store "
        f"({args.sessions} sessions of {args.users} users)"
    )
    print(
        f"{'backend':9} {'turns/s':>9} {'p50 ms':>8} {'p95 ms':>8} {'lost':>5} {'dup':>4} "
        f"{'order':>5} {'partial':>7}  check"
    )
    for r in results:
        if r.skipped:
            print(f"{r.backend:9} skipped: {r.skipped}")
            continue
        print(
            f"{r.backend:9} {r.turns_per_s:9.1f} {r.p50_ms:8.2f} {r.p95_ms:8.2f} {r.lost:5d} "
            f"{r.duplicated:4d} {r.out_of_order:5d} {r.partial:7d}  {'ok' if r.ok else 'FAILED'}"
        )
        for problem in r.problems[:5]:
            print(f"          {problem}")
    if args.json:
        print(
            json.dumps(
                {
                    "processes": args.processes,
                    "turns_per_process": args.turns,
                    "sessions": args.sessions,
                    "users": args.users,
                    "results": [asdict(r) for r in results],
                }
            )
        )
    return 0 if all(r.ok or r.skipped for r in results) else 1
