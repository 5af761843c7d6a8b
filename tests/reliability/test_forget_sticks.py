"""Forgetting sticks (finding 6 of issue #21): a session still writing for a user re-created
that user's data right after ``forget_user`` returned.

Per backend (SQLite file, Redis, PostgreSQL), with real writer processes: two processes
append turns for the user as fast as they can; ``forget_user`` runs in the test process
while they write. From the moment it returns, the store holds nothing of the user and
never will again: each writer stops on :class:`ForgottenError` and the user has no
session, turn or document afterwards. Re-admitting the user lets a new turn in; the
tombstone holds the ids and the time, no content, and not a byte of the messages is left
in the SQLite file and its WAL, under the Redis prefix or in the PostgreSQL schema. The
same for ``forget_session``, and in-process with threads on every backend (in-memory
included).

Cost: about 2 s per backend.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path

import pytest

from memory_chains.evaluation.loadgen import StoreTarget, child_command, child_env
from memory_chains.memory import WindowCore
from memory_chains.sessions import SessionManager
from memory_chains.stores import BaseStore, export_user, forget_session, forget_user

from ._backends import open_target, raw_dump

CANARY = "kanari-0f4e2b"


def _start_writers(target: StoreTarget, n: int) -> list[subprocess.Popen[str]]:
    """``n`` writer processes appending (for minutes if not stopped) for user ``u0``."""
    writers = []
    for worker in range(n):
        child = subprocess.Popen(
            child_command(target, worker, 1_000_000, 2, 1),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=child_env(),
        )
        writers.append(child)
    try:
        for child in writers:
            assert child.stdout is not None
            line = child.stdout.readline()
            assert line.strip() == "ready", child.stderr.read() if child.stderr else line
    except BaseException:
        _stop(writers)
        raise
    return writers


def _stop(writers: list[subprocess.Popen[str]]) -> None:
    """Kill the writers still running and close their pipes."""
    for child in writers:
        if child.poll() is None:
            child.kill()
        child.communicate()


def _reports(writers: list[subprocess.Popen[str]]) -> list[dict[str, object]]:
    reports = []
    for child in writers:
        try:
            out, err = child.communicate(timeout=60)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
        assert child.returncode == 0, err
        reports.append(json.loads(out.strip().splitlines()[-1]))
    return reports


def _user_data(store: BaseStore, user: str) -> tuple[object, ...]:
    doc = export_user(store, user)
    return tuple(doc["sessions"]), tuple(doc["documents"])


def test_writer_processes_cannot_bring_a_forgotten_user_back(
    target: StoreTarget,
) -> None:
    writers = _start_writers(target, 2)
    main = open_target(target)
    try:
        time.sleep(0.3)  # both are writing
        assert main.count_turns("u0", "s0") + main.count_turns("u0", "s1") > 0
        assert b"question w" in raw_dump(target)  # the scan does see the messages
        result = forget_user(main, "u0")
        assert result.turns > 0
        # from here on, nothing of u0 may be in the store, however long we look
        for _ in range(5):
            assert _user_data(main, "u0") == ((), ())
            time.sleep(0.1)
        reports = _reports(writers)
        assert _user_data(main, "u0") == ((), ())
        # and not a byte of their messages below the interface (file + WAL, keys, rows)
        raw = raw_dump(target)
        assert b"question w" not in raw and b"answer w" not in raw
        assert main.list_sessions("u0") == []
        for report in reports:
            assert str(report["error"]).startswith("ForgottenError: user 'u0' was forgotten")
        (tomb,) = main.tombstones("u0")
        assert (tomb.user_id, tomb.session_id) == ("u0", None)
        # re-admitted on purpose, the user can be remembered again
        from memory_chains.stores import readmit_user  # new in this version

        assert readmit_user(main, "u0") == 1
        assert main.append_turn("u0", "s0", "de retour", "bienvenue").seq == 1
    finally:
        _stop(writers)
        main.close()


def test_a_forgotten_session_stays_forgotten_and_the_others_go_on(
    target: StoreTarget,
) -> None:
    from memory_chains.errors import ForgottenError  # new in this version
    from memory_chains.stores import readmit_session

    main = open_target(target)
    try:
        main.setup()
        for session in ("s0", "s1"):
            main.append_turn("u0", session, f"question {CANARY}", "answer")
        SessionManager(main).create("u0", session_id="s2")
        assert forget_session(main, "u0", "s0").turns == 1
        with pytest.raises(ForgottenError) as caught:
            main.append_turn("u0", "s0", f"again {CANARY}", "no")
        assert (caught.value.user_id, caught.value.session_id) == ("u0", "s0")
        with pytest.raises(ForgottenError):  # its per-session documents too
            main.put(("sessions", "u0"), "s0", {"created_at": 1.0})
        with pytest.raises(ForgottenError):
            main.replace_summary("u0", "s0", CANARY, 1, expected_version=1)
        # the user's other sessions and documents are not affected
        assert main.append_turn("u0", "s1", "still here", "yes").seq == 2
        assert SessionManager(main).touch("u0", "s2").session_id == "s2"
        main.put(("entities", "u0"), "k", {"v": 1})
        assert sorted(s.session_id for s in SessionManager(main).list("u0")) == ["s1", "s2"]
        assert readmit_session(main, "u0", "s0") == 1
        assert main.append_turn("u0", "s0", "new start", "ok").seq == 1
    finally:
        main.close()


def test_writer_threads_get_a_typed_error_once_the_user_is_forgotten(
    store: BaseStore,
) -> None:
    errors: list[BaseException] = []
    stop = threading.Event()
    started = threading.Barrier(3)

    def write(session: str) -> None:
        memory = WindowCore(k=2, store=store, user_id="alice", session_id=session)
        started.wait()
        try:
            while not stop.is_set():
                memory.add_exchange(f"message {CANARY}", "réponse")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(s,)) for s in ("a", "b")]
    for t in threads:
        t.start()
    started.wait()
    time.sleep(0.2)
    forget_user(store, "alice")
    after = _user_data(store, "alice")
    for t in threads:
        t.join(timeout=30)
    stop.set()
    assert after == ((), ())
    assert _user_data(store, "alice") == ((), ())
    from memory_chains.errors import ForgottenError  # new in this version

    assert len(errors) == 2 and all(isinstance(e, ForgottenError) for e in errors), errors
    # the tombstone is only ids and a time, and another user is unaffected
    assert CANARY not in json.dumps(export_user(store, "alice"))
    assert store.append_turn("bob", "a", "q", "r").seq == 1


def test_the_tombstone_is_exported_and_purging_expired_sessions_leaves_none(
    store: BaseStore,
) -> None:
    now = [time.time()]
    manager = SessionManager(store, ttl=60, clock=lambda: now[0])
    manager.create("alice", session_id="old")
    now[0] += 120
    assert manager.purge_expired("alice") == 1
    assert store.tombstones("alice") == []  # housekeeping: the id may be used again
    manager.create("alice", session_id="old")
    forget_user(store, "alice")
    doc = export_user(store, "alice")
    assert [t["session_id"] for t in doc["tombstones"]] == [None]
    assert doc["tombstones"][0]["forgotten_at"] > 0


def test_forget_on_a_read_only_or_missing_store_is_an_error(tmp_path: Path) -> None:
    from memory_chains.errors import StoreNotFoundError
    from memory_chains.stores import open_store

    with pytest.raises(StoreNotFoundError):
        open_store(f"sqlite:///{tmp_path / 'typo' / 'memory.sqlite3'}", must_exist=True)
    assert not (tmp_path / "typo").exists()


def test_no_stale_copy_survives_page_splits_in_the_sqlite_file(tmp_path: Path) -> None:
    """secure_delete zeroes deleted rows, but a B-tree page split leaves a copy of the
    cells it moved in the old page's free space: forget rebuilds the file (VACUUM)."""
    from memory_chains.stores import SQLiteStore

    path = tmp_path / "splits.sqlite3"
    with SQLiteStore(path) as db:
        for i in range(3000):  # interleaved users: many splits inside the turn B-tree
            token = f"w0-i{i}"
            meta = {"token": token}
            db.append_turn("u0", f"s{i % 2}", f"question {token}", f"answer {token}", meta)
            db.append_turn("u1", f"s{i % 2}", f"question zz-i{i}", f"answer zz-i{i}")
        forget_user(db, "u0")
        raw = path.read_bytes() + (
            Path(f"{path}-wal").read_bytes() if Path(f"{path}-wal").exists() else b""
        )
        assert raw.count(b"question w0-i") == 0
        assert raw.count(b"question zz-i") == 3000  # what remains, once: no stale copy
