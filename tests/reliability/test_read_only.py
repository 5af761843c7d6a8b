"""A store the user may only read can be read (finding 5 of issue #21): ``sessions list``
and ``export`` failed with "attempt to write a readonly database".

* In-process, per backend: ``read_only=True`` reads everything, refuses every write with
  :class:`ReadOnlyStoreError`, and leaves the store byte for byte as it was.
* Through the CLI, on a SQLite file in a read-only place: as root (CI) the directory is
  bind-mounted read-only in a private mount namespace (``unshare -m``), so not even the
  ``-shm`` file can be created; otherwise the file and its directory lose their write
  bits. ``sessions list``, ``export`` and ``metrics`` answer; ``forget`` fails cleanly.

Cost: about 2 s (the CLI runs in subprocesses).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memory_chains.evaluation.loadgen import StoreTarget, child_env
from memory_chains.sessions import SessionManager
from memory_chains.stores import export_user, forget_user

from ._backends import open_target

CANARY = "kanari-ro-5d1c"


def _fill(target: StoreTarget) -> None:
    store = open_target(target)
    store.setup()
    SessionManager(store).create("alice", device="phone", session_id="s1")
    store.append_turn("alice", "s1", f"question {CANARY}", "réponse")
    store.put(("entities", "alice"), "xps", {"name": "XPS 15"})
    store.close()


def test_a_read_only_store_reads_everything_and_writes_nothing(
    target: StoreTarget,
) -> None:
    from memory_chains.errors import ReadOnlyStoreError  # new in this version

    _fill(target)
    before = _fingerprint(target)
    store = open_target(target, read_only=True)
    try:
        store.setup()
        assert store.exists()
        doc = export_user(store, "alice")
        assert [s["session_id"] for s in doc["sessions"]] == ["s1"]
        assert CANARY in json.dumps(doc)
        assert [s.session_id for s in SessionManager(store).list("alice")] == ["s1"]
        writes = [
            lambda: store.append_turn("alice", "s1", "q", "a"),
            lambda: store.put(("entities", "alice"), "k", {"v": 1}),
            lambda: store.put_if(("entities", "alice"), "k", {"v": 1}, expected=None),
            lambda: store.delete(("entities", "alice"), "xps"),
            lambda: store.delete_session("alice", "s1"),
            lambda: store.replace_summary("alice", "s1", "x", 1, expected_version=0),
            lambda: store.add_tombstone("alice"),
            lambda: forget_user(store, "alice"),
        ]
        for write in writes:
            with pytest.raises(ReadOnlyStoreError):
                write()
    finally:
        store.close()
    assert _fingerprint(target) == before


def _fingerprint(target: StoreTarget) -> str:
    """Everything the target holds, as one digest (the SQLite file's bytes, or a dump)."""
    if target.kind == "sqlite":
        path = Path(target.url.split("://", 1)[1][1:])
        return hashlib.sha256(path.read_bytes()).hexdigest()
    store = open_target(target)
    try:
        dump = export_user(store, "alice")
        dump.pop("exported_at")
        return json.dumps(dump, sort_keys=True)
    finally:
        store.close()


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "memory_chains", *args]


def _run_read_only(
    folder: Path, commands: list[list[str]]
) -> list[subprocess.CompletedProcess[str]]:
    """Run each command with ``folder`` read-only, by the strongest means available."""
    env = child_env()
    if os.geteuid() == 0:
        unshare = shutil.which("unshare")
        if unshare is None:
            pytest.skip("unshare is missing: cannot make a folder read-only as root")
        results = []
        for command in commands:
            script = 'mount --bind -o ro "$0" "$0" && exec "$@"'
            done = subprocess.run(
                [unshare, "-m", "sh", "-c", script, str(folder), *command],
                capture_output=True,
                text=True,
                env=env,
                timeout=120,
            )
            if "mount" in done.stderr and done.returncode != 0 and "ermission" in done.stderr:
                pytest.skip(f"cannot bind-mount read-only here: {done.stderr.strip()}")
            results.append(done)
        return results
    for path in folder.iterdir():
        path.chmod(0o444)
    folder.chmod(0o555)
    try:
        return [
            subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
            for command in commands
        ]
    finally:
        folder.chmod(0o755)


def test_cli_reads_a_store_in_a_read_only_folder(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    db = folder / "memory.sqlite3"
    _fill(StoreTarget(f"sqlite:///{db}"))
    assert sorted(p.name for p in folder.iterdir()) == ["memory.sqlite3"]  # closed cleanly
    url = f"sqlite:///{db}"
    listed, exported, measured, forgot = _run_read_only(
        folder,
        [
            _cli("sessions", "list", "--store", url, "--user", "alice", "--json"),
            _cli("export", "--store", url, "--user", "alice"),
            _cli("metrics", "--store", url, "--user", "alice", "--session", "s1", "--no-coherence"),
            _cli("forget", "--yes", "--store", url, "--user", "alice"),
        ],
    )
    assert listed.returncode == 0, listed.stderr
    assert [s["session_id"] for s in json.loads(listed.stdout)["sessions"]] == ["s1"]
    assert exported.returncode == 0, exported.stderr
    assert CANARY in exported.stdout
    assert measured.returncode == 0, measured.stderr
    assert "readonly" not in listed.stderr + exported.stderr + measured.stderr
    # erasing cannot work there: a clear error, not a traceback nor "erased 0"
    assert forgot.returncode == 1
    assert forgot.stderr.startswith("memory-chains: error:") and "erased" not in forgot.stdout
    assert sorted(p.name for p in folder.iterdir()) == ["memory.sqlite3"]
