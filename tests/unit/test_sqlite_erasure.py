"""Forgetting on SQLite while another connection reads: the deleted bytes leave the -wal.

A connection reading a snapshot older than the delete keeps the WAL frames that hold the
deleted messages. The store waits for it (up to its timeout) before truncating the WAL; if
the reader is still there, the caller gets StoreUnavailableError and the erasure completes
at the next call once the reader is done.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from memory_chains.errors import StoreUnavailableError
from memory_chains.stores import SQLiteStore, export_user, forget_user

CANARY = "kanari-3b9f0c"


def _filled(path: Path, timeout: float) -> SQLiteStore:
    store = SQLiteStore(path, timeout=timeout)
    for i in range(40):
        store.append_turn("alice", "s1", f"my code {CANARY} #{i}", "noted")
    store.append_turn("bob", "s1", "hello", "hi")
    return store


def _canaries(path: Path) -> int:
    return sum(p.read_bytes().count(CANARY.encode()) for p in path.parent.glob(path.name + "*"))


def _reader(path: Path) -> sqlite3.Connection:
    """Another connection in the middle of a read transaction (an older snapshot)."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("BEGIN")
    conn.execute("SELECT count(*) FROM mc_turns").fetchone()
    return conn


def test_forget_waits_for_a_short_reader_then_erases(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    store = _filled(path, timeout=10)
    reader = _reader(path)
    threading.Timer(0.3, lambda: reader.execute("COMMIT")).start()

    assert forget_user(store, "alice").turns == 40

    assert _canaries(path) == 0
    reader.close()
    store.close()


def test_a_lingering_reader_is_reported_and_the_erasure_completes_later(
    tmp_path: Path,
) -> None:
    path = tmp_path / "m.sqlite3"
    store = _filled(path, timeout=0.2)
    reader = _reader(path)

    with pytest.raises(StoreUnavailableError, match="still in the -wal file"):
        forget_user(store, "alice")
    assert export_user(store, "alice")["sessions"] == []  # the rows are gone already
    assert _canaries(path) > 0  # …their bytes are not, while the reader reads

    reader.execute("COMMIT")
    reader.close()
    assert store.count_turns("bob", "s1") == 1  # any later call finishes the erasure
    assert _canaries(path) == 0
    assert forget_user(store, "alice").turns == 0
    store.close()
