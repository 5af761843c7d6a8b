"""Fresh stores and store targets on every backend, for the reliability probes.

SQLite and in-memory always run. Redis and PostgreSQL use the servers of
``scripts/ci_services.sh`` (``MEMORY_CHAINS_TEST_REDIS_URL`` /
``MEMORY_CHAINS_TEST_POSTGRES_URL``): skipped when unset or unreachable, failed under
``CI=true``. Each store gets a key prefix or schema no other test uses, erased afterwards.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import NoReturn

import pytest

from memory_chains.evaluation.loadgen import StoreTarget
from memory_chains.stores import BaseStore, SQLiteStore

REDIS_ENV = "MEMORY_CHAINS_TEST_REDIS_URL"
POSTGRES_ENV = "MEMORY_CHAINS_TEST_POSTGRES_URL"
SERVER_BACKENDS = ("redis", "postgresql")
PERSISTENT_BACKENDS = ("sqlite", *SERVER_BACKENDS)
ALL_BACKENDS = ("memory", *PERSISTENT_BACKENDS)
_probed: dict[str, str | None] = {}


def unusable(reason: str) -> NoReturn:
    """Skip locally, fail under ``CI=true`` (where every backend must run)."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true and {reason}")
    pytest.skip(reason)


def server_url(kind: str) -> str:
    """The test server of ``kind`` (``redis`` or ``postgresql``), or skip / fail."""
    env = REDIS_ENV if kind == "redis" else POSTGRES_ENV
    url = os.environ.get(env, "")
    if not url:
        unusable(f"{env} is not set (run scripts/ci_services.sh, then export {env})")
    if url not in _probed:
        try:
            if kind == "redis":
                import redis

                redis.Redis.from_url(url, socket_connect_timeout=2).ping()
            else:
                import psycopg

                psycopg.connect(url, connect_timeout=2).close()
            _probed[url] = None
        except Exception as exc:  # any failure means "not usable here"
            _probed[url] = f"{env}={url} is unreachable: {exc}"
    reason = _probed[url]
    if reason is not None:
        unusable(reason)
    return url


def new_target(kind: str, tmp_path: Path) -> StoreTarget:
    """A target (URL plus prefix / schema) that no other test uses."""
    tag = uuid.uuid4().hex
    if kind == "sqlite":
        return StoreTarget(f"sqlite:///{tmp_path / f'{tag}.sqlite3'}")
    if kind == "redis":
        return StoreTarget(server_url(kind), prefix=f"mctest:{tag}:")
    return StoreTarget(server_url(kind), schema=f"mc_test_{tag}")


def open_target(target: StoreTarget, *, read_only: bool = False) -> BaseStore:
    """A store on ``target`` (not set up), read-only if asked."""
    # the option only when asked, so that the probes run on a version without it too
    options = {"read_only": True} if read_only else {}
    if target.kind == "redis":
        from memory_chains.stores import RedisStore

        return RedisStore(target.url, prefix=target.prefix or "mc:", **options)
    if target.kind == "postgresql":
        from memory_chains.stores import PostgresStore

        return PostgresStore(target.url, schema=target.schema or "public", timeout=3.0, **options)
    path = target.url.split("://", 1)[1][1:]
    return SQLiteStore(path, **options)


def raw_dump(target: StoreTarget) -> bytes:
    """Every byte the target holds, read below the store interface: the SQLite file and
    its ``-wal``, every value under the Redis prefix, every row of the PostgreSQL schema
    as text. For canary scans."""
    if target.kind == "sqlite":
        path = target.url.split("://", 1)[1][1:]
        chunks = [Path(path + suffix) for suffix in ("", "-wal")]
        return b"".join(p.read_bytes() for p in chunks if p.exists())
    if target.kind == "redis":
        import redis

        client = redis.Redis.from_url(target.url)
        parts: list[bytes] = []
        for key in client.scan_iter(match=f"{target.prefix}*"):
            kind = client.type(key)
            if kind == b"string":
                parts.append(client.get(key) or b"")
            elif kind == b"hash":
                parts += [k + v for k, v in client.hgetall(key).items()]
            elif kind == b"zset":
                parts += list(client.zrange(key, 0, -1))
            elif kind == b"set":
                parts += list(client.smembers(key))
        client.close()
        return b"\n".join(parts)
    import psycopg
    from psycopg import sql

    with psycopg.connect(target.url) as conn:
        tables = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
            (target.schema,),
        ).fetchall()
        rows = []
        for (table,) in tables:
            query = sql.SQL("SELECT t::text FROM {}.{} AS t").format(
                sql.Identifier(target.schema or "public"), sql.Identifier(table)
            )
            rows += [r[0] for r in conn.execute(query).fetchall()]
    return "\n".join(rows).encode()
