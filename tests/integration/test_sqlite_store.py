"""The SQLite store on a real file: other processes, concurrency, constant cost per turn."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path
from statistics import median

import pytest

from memory_chains.memory import SummaryCore, WindowCore
from memory_chains.stores import SQLiteStore
from memory_chains.testing import ScriptedChatModel

pytestmark = pytest.mark.integration


def _python(code: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_memory_written_by_one_process_is_read_by_another(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite3"
    _python(
        f"""
        from memory_chains.memory import WindowCore
        mem = WindowCore(store="sqlite:///{path}", k=3, user_id="alice", session_id="s1")
        mem.add_exchange("Mon IBAN est FR76 3000 6000 0112 3456 7890 189", "Merci.")
        mem.add_exchange("Je vis à Lyon", "Noté.")
        mem.store.put(("profile", "alice"), "city", {{"value": "Lyon"}})
        """
    )
    read = _python(
        f"""
        from memory_chains.memory import WindowCore
        mem = WindowCore(store="sqlite:///{path}", k=3, user_id="alice", session_id="s1")
        print([t.human for t in mem.context().turns])
        print(mem.store.get(("profile", "alice"), "city").value)
        """
    )
    assert read.splitlines() == [
        "['Mon IBAN est [IBAN]', 'Je vis à Lyon']",
        "{'value': 'Lyon'}",
    ]
    files = [p for p in tmp_path.iterdir() if p.name.startswith(path.name)]  # db, -wal, -shm
    raw = b"".join(p.read_bytes() for p in files)
    assert b"FR76" not in raw  # the IBAN never reached the disk


def test_two_processes_appending_to_one_session(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite3"
    SQLiteStore(path).setup()
    code = f"""
        from memory_chains.stores import SQLiteStore
        store = SQLiteStore({str(path)!r}, timeout=30)
        for i in range(150):
            store.append_turn("u", "s", f"q{{i}}", "a")
        """
    procs = [
        subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    for p in procs:
        _, err = p.communicate(timeout=180)
        assert p.returncode == 0, err
    with SQLiteStore(path) as store:
        assert store.count_turns("u", "s") == 300
        assert [t.seq for t in store.turns_after("u", "s")] == list(range(1, 301))


def test_summary_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite3"
    llm = ScriptedChatModel(default='{"add_facts": ["Client 48213 delivers to Lyon."]}')
    mem = SummaryCore(llm, store=SQLiteStore(path), max_turns=2, keep_last=1, background=False)
    for i, question in enumerate(("Client 48213 here, deliver to Lyon.", "q1", "q2")):
        mem.add_exchange(question, f"a{i}")
    mem.store.close()
    out = _python(
        f"""
        from memory_chains.memory import SummaryCore
        from memory_chains.testing import ScriptedChatModel
        mem = SummaryCore(ScriptedChatModel(), store="sqlite:///{path}", max_turns=2, keep_last=1)
        ctx = mem.context()
        print(ctx.summary, [t.seq for t in ctx.turns], mem.stats().compactions)
        """
    )
    assert out == "Key facts: Client 48213 delivers to Lyon. [3] 1"


def _turn_cost(mem: WindowCore, rounds: int = 60) -> float:
    costs = []
    for i in range(rounds):
        start = time.perf_counter()
        mem.context()
        mem.add_exchange(f"question {i} about the Dell XPS 15", f"answer {i}: three years")
        costs.append(time.perf_counter() - start)
    return median(costs)


def test_cost_per_turn_is_the_same_at_turn_10_and_10000(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "memory.sqlite3")
    store.setup()
    small = WindowCore(store=store, k=5, session_id="small")
    for i in range(10):
        small.add_exchange(f"q{i}", f"a{i}")
    big = WindowCore(store=store, k=5, session_id="big")
    # fill the big session straight through one transaction (10,000 turns)
    conn = store._connect()
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO mc_turns (user_id, session_id, seq, human, ai, metadata, created_at)"
        " VALUES ('default', 'big', ?, ?, ?, '{}', 0)",
        [(i, f"q{i}", f"a{i}") for i in range(1, 10_001)],
    )
    conn.execute("INSERT INTO mc_sessions VALUES ('default', 'big', 10000, 10000, 0, 0)")
    conn.execute("COMMIT")
    assert big.stats().turns == 10_000
    at_10 = min(_turn_cost(small) for _ in range(3))
    at_10000 = min(_turn_cost(big) for _ in range(3))
    # generous bound: the machine is shared; a full-history read would be ~100x slower
    assert at_10000 < 2.5 * at_10, (at_10, at_10000)
    assert [t.seq for t in big.context().turns][-1] == 10_000 + 180
