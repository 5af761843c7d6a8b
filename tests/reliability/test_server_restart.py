"""A Redis or PostgreSQL server killed and restarted while a conversation writes.

The server is one of this test's own (:mod:`._servers`: a new instance on a free port,
not the shared one). A writer appends turns, each with a unique token, without pause.
The server is killed after 40 acknowledged turns and started again once the writer has
seen the outage; the writer goes on until 40 more are acknowledged. Then:

* while it was down, every call failed with :class:`StoreUnavailableError` naming the
  store (no driver exception leaked, no call hung beyond the store's timeout);
* no turn is lost: every acknowledged token is stored;
* none is duplicated: each token at most once (no automatic retry of a write whose reply
  was lost), and only acknowledged or failed tokens are there;
* ``seq`` is gap-free and the turn count matches.

Cost: about 3 s (Redis) and 8 s (PostgreSQL, initdb included).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from memory_chains.errors import StoreUnavailableError
from memory_chains.stores import BaseStore, PostgresStore, RedisStore

from ._servers import own_postgres, own_redis


class Writer(threading.Thread):
    """Appends turns for ("u", "s") until stopped, recording what happened to each."""

    def __init__(self, store: BaseStore) -> None:
        super().__init__(daemon=True)
        self.store = store
        self.acked: list[str] = []
        self.failed: list[str] = []
        self.outage_errors: list[str] = []
        self.other_errors: list[BaseException] = []
        self.slowest = 0.0
        self.stop = threading.Event()

    def run(self) -> None:
        i = 0
        while not self.stop.is_set():
            token = f"t{i}"
            i += 1
            started = time.monotonic()
            try:
                self.store.append_turn("u", "s", f"question {token}", "ok", {"token": token})
                self.acked.append(token)
            except StoreUnavailableError as exc:
                self.failed.append(token)
                self.outage_errors.append(str(exc))
                time.sleep(0.05)
            except BaseException as exc:  # anything else is a finding
                self.other_errors.append(exc)
                return
            finally:
                self.slowest = max(self.slowest, time.monotonic() - started)


def _until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def _probe(make: Callable[[], BaseStore], kill: Callable[[], None], start: Callable[[], None],
           name: str) -> None:  # fmt: skip
    store = make()
    store.setup()
    writer = Writer(store)
    writer.start()
    try:
        _until(lambda: len(writer.acked) >= 40, 30, "40 turns before the outage")
        kill()
        _until(lambda: len(writer.failed) >= 3 or bool(writer.other_errors), 30, "the outage")
        with pytest.raises(StoreUnavailableError, match=name):  # reads fail clearly too
            store.count_turns("u", "s")
        before = len(writer.acked)
        start()
        _until(
            lambda: len(writer.acked) >= before + 40 or bool(writer.other_errors),
            60,
            "40 turns after the restart",
        )
    finally:
        writer.stop.set()
        writer.join(timeout=30)
        store.close()
    assert writer.other_errors == []
    assert all(name in message for message in writer.outage_errors)
    assert writer.slowest < 10  # bounded by the store's timeout, never a hang

    check = make()
    try:
        turns = check.turns_after("u", "s")
        tokens = [str(t.metadata["token"]) for t in turns]
        assert len(tokens) == len(set(tokens)), "a turn was stored twice"
        assert set(writer.acked) <= set(tokens), "an acknowledged turn was lost"
        assert set(tokens) <= set(writer.acked) | set(writer.failed)
        assert [t.seq for t in turns] == list(range(1, len(turns) + 1))
        assert check.count_turns("u", "s") == len(turns)
    finally:
        check.close()


def test_redis_killed_and_restarted_mid_conversation() -> None:
    with own_redis() as server:
        _probe(
            lambda: RedisStore(server.url, prefix="restart:", timeout=1.0),
            server.kill,
            server.start,
            "Redis store",
        )


def test_postgres_killed_and_restarted_mid_conversation() -> None:
    with own_postgres() as server:
        _probe(
            lambda: PostgresStore(server.url, timeout=1.0, max_size=2),
            server.kill,
            server.start,
            "PostgreSQL",
        )
