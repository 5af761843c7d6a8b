"""Fixtures of the reliability probes: ``target`` (SQLite, Redis, PostgreSQL) and
``store`` (the same plus in-memory), fresh for each test and erased afterwards."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_chains.evaluation.loadgen import StoreTarget
from memory_chains.stores import BaseStore, InMemoryStore

from ._backends import ALL_BACKENDS, PERSISTENT_BACKENDS, new_target, open_target


@pytest.fixture(params=PERSISTENT_BACKENDS)
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreTarget]:
    """A fresh target on SQLite, Redis and PostgreSQL, erased afterwards."""
    made = new_target(request.param, tmp_path)
    try:
        yield made
    finally:
        made.destroy()


@pytest.fixture(params=ALL_BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BaseStore]:
    """A fresh, set-up store on every backend (in-memory included)."""
    if request.param == "memory":
        yield InMemoryStore()
        return
    made = new_target(request.param, tmp_path)
    opened = open_target(made)
    opened.setup()
    try:
        yield opened
    finally:
        opened.close()
        made.destroy()
