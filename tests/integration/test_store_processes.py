"""Real processes against one store, per backend (SQLite file, Redis, PostgreSQL).

* concurrency: several writer processes append turns for many sessions at once; nothing is
  lost or duplicated and each writer's turns keep their order within a session;
* crash: a writer killed with SIGKILL at random points, 20 times; the store always reopens
  (setup + reads) and holds only whole turns, with gap-free ``seq`` and matching counters;
* compare-and-swap: processes released together increment one document through
  ``put_if``; no increment is lost.

Not marked ``integration``: no model is involved, and CI runs them with real servers.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_chains.evaluation.loadgen import (
    StoreTarget,
    child_command,
    child_env,
    run_load,
    verify_turns,
)
from memory_chains.stores import BaseStore, Turn

from ._store_targets import BACKENDS, fresh_target

pytestmark = pytest.mark.skipif(os.name != "posix", reason="SIGKILL and fork are POSIX")


@pytest.fixture(params=BACKENDS)
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreTarget]:
    yield from fresh_target(request.param, tmp_path)


def test_concurrent_writer_processes_lose_and_duplicate_nothing(target: StoreTarget) -> None:
    processes, turns, sessions, users = 4, 120, 16, 4
    reports = run_load(target, processes, turns, sessions=sessions, users=users, timeout=120)

    assert [(r.written, r.error) for r in reports] == [(turns, "")] * processes
    store = target.open()
    try:
        check = verify_turns(store, sessions, users, {r.worker: r.written for r in reports})
        assert check.problems == ()
        assert (check.expected, check.found) == (processes * turns, processes * turns)
        assert (check.lost, check.duplicated, check.out_of_order, check.partial) == (0, 0, 0, 0)
        # every session really was written by several processes at once
        writers = {t.metadata["token"].split("-")[0] for t in store.turns_after("u1", "s1")}
        assert len(writers) == processes
    finally:
        store.close()


def _kill_a_writer(target: StoreTarget, worker: int, delay: float) -> None:
    """Start a writer that would write for minutes and SIGKILL it ``delay`` s after its
    first append returned."""
    child = subprocess.Popen(
        child_command(target, worker, 1_000_000, 8, 2, payload=1000),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
    )
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        assert line.strip() == "ready", child.stderr.read() if child.stderr else line
        time.sleep(delay)
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait(timeout=30) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        for pipe in (child.stdout, child.stderr):
            if pipe is not None:
                pipe.close()


def test_sigkill_during_writes_leaves_only_whole_turns(target: StoreTarget) -> None:
    rng = random.Random(20261201)
    setup = target.open()
    setup.setup()
    setup.close()
    for kill in range(20):
        # from "right after the first append" to some hundred appends in
        delay = 0.0 if kill == 0 else rng.uniform(0.0, 0.1)
        _kill_a_writer(target, kill, delay)

        store = target.open()  # what a restarted application does
        try:
            store.setup()
            check = verify_turns(store, 8, 2)
            assert check.ok, (kill, delay, check.problems)
            writers = {int(t.metadata["token"][1:].split("-")[0]) for t in _all_turns(store)}
            assert writers == set(range(kill + 1))  # every killed writer got turns in
            # still writable, and the next seq follows the whole turns
            assert store.append_turn("probe", "s", "after", "the crash").seq == kill + 1
        finally:
            store.close()
    if target.kind == "sqlite":
        path = target.url.split("://", 1)[1][1:]
        with sqlite3.connect(path) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def _all_turns(store: BaseStore) -> list[Turn]:
    return [t for s in range(8) for t in store.turns_after(f"u{s % 2}", f"s{s}")]


# One process of the compare-and-swap test: read, add one, put_if; again when it lost.
_INCREMENT = """
import sys
from memory_chains.evaluation.loadgen import StoreTarget
store = StoreTarget.from_json(sys.argv[1]).open()
store.setup()
print("ready", flush=True)
sys.stdin.readline()  # all start together
retries = 0
for _ in range(int(sys.argv[2])):
    while True:
        doc = store.get(("counters",), "c")
        expected = None if doc is None else dict(doc.value)
        n = 0 if expected is None else expected["n"]
        if store.put_if(("counters",), "c", {"n": n + 1}, expected=expected):
            break
        retries += 1
store.close()
print(retries)
"""


def test_compare_and_swap_loses_no_update_between_processes(target: StoreTarget) -> None:
    processes, rounds = 4, 100
    children = [
        subprocess.Popen(
            [sys.executable, "-c", _INCREMENT, target.to_json(), str(rounds)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=child_env(),
        )
        for _ in range(processes)
    ]
    for child in children:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    for child in children:
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
    retries = [int(child.communicate(timeout=120)[0]) for child in children]
    assert [child.returncode for child in children] == [0] * processes
    store = target.open()
    try:
        doc = store.get(("counters",), "c")
        assert doc is not None and doc.value == {"n": processes * rounds}
    finally:
        store.close()
    print(f"{target.kind}: {sum(retries)} compare-and-swaps lost and retried")
