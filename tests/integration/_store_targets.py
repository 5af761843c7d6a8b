"""Fresh store targets per backend for the process-level tests (SQLite file, Redis prefix,
PostgreSQL schema), skipped locally when a server is not configured, failed under CI."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest

from memory_chains.evaluation.loadgen import StoreTarget

REDIS_ENV = "MEMORY_CHAINS_TEST_REDIS_URL"
POSTGRES_ENV = "MEMORY_CHAINS_TEST_POSTGRES_URL"
BACKENDS = ("sqlite", "redis", "postgresql")
_probed: dict[str, str | None] = {}


def _unusable(reason: str) -> NoReturn:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true and {reason}")
    pytest.skip(reason)


def _probe(kind: str, url: str) -> None:
    if kind == "redis":
        import redis

        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
    else:
        import psycopg

        psycopg.connect(url, connect_timeout=2).close()


def server_url(kind: str) -> str:
    """The test server URL of ``kind`` (``redis`` or ``postgresql``), or skip / fail."""
    env = REDIS_ENV if kind == "redis" else POSTGRES_ENV
    url = os.environ.get(env, "")
    if not url:
        _unusable(f"{env} is not set (run scripts/ci_services.sh, then export {env})")
    if url not in _probed:
        try:
            _probe(kind, url)
            _probed[url] = None
        except Exception as exc:  # any failure means "not usable here"
            _probed[url] = f"{env}={url} is unreachable: {exc}"
    reason = _probed[url]
    if reason is not None:
        _unusable(reason)
    return url


def fresh_target(kind: str, tmp_path: Path) -> Iterator[StoreTarget]:
    """A target no other test uses; everything it holds is erased afterwards."""
    tag = uuid.uuid4().hex
    if kind == "sqlite":
        target = StoreTarget(f"sqlite:///{tmp_path / 'shared.sqlite3'}")
    elif kind == "redis":
        target = StoreTarget(server_url(kind), prefix=f"mctest:{tag}:")
    else:
        target = StoreTarget(server_url(kind), schema=f"mc_test_{tag}")
    try:
        yield target
    finally:
        target.destroy()
