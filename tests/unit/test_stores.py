"""Store conformance suite (written once, run for every backend) and backend specifics.

A new backend (Redis, PostgreSQL) gets the whole suite by subclassing :class:`StoreSuite`
and providing a ``store`` fixture returning a fresh, set-up store.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from memory_chains.errors import (
    ConfigurationError,
    InvalidInputError,
    SchemaVersionError,
    StoreError,
)
from memory_chains.stores import (
    BaseStore,
    InMemoryStore,
    SQLiteStore,
    SummaryState,
    open_store,
)
from memory_chains.stores._sqlite import MIGRATIONS

from ._threads import run_together, switching_often


class StoreSuite:
    """Behaviour every backend must have. Subclasses provide the ``store`` fixture."""

    # -- turn log ------------------------------------------------------------------------

    def test_append_numbers_turns_per_session(self, store: BaseStore) -> None:
        assert store.append_turn("u", "s1", "q1", "a1").seq == 1
        assert store.append_turn("u", "s1", "q2", "a2").seq == 2
        assert store.append_turn("u", "s2", "x", "y").seq == 1
        assert store.append_turn("v", "s1", "x", "y").seq == 1
        assert store.count_turns("u", "s1") == 2
        assert store.last_seq("u", "s1") == 2
        assert store.count_turns("nobody", "none") == 0

    def test_turn_keeps_both_messages_and_metadata(self, store: BaseStore) -> None:
        store.append_turn("u", "s", "question é ☃", "réponse\nsur deux lignes", {"tokens": 7})
        (turn,) = store.last_turns("u", "s", 1)
        assert (turn.human, turn.ai, dict(turn.metadata)) == (
            "question é ☃",
            "réponse\nsur deux lignes",
            {"tokens": 7},
        )
        assert turn.created_at > 0

    def test_last_turns_and_turns_after(self, store: BaseStore) -> None:
        for i in range(1, 8):
            store.append_turn("u", "s", f"q{i}", f"a{i}")
        assert [t.seq for t in store.last_turns("u", "s", 3)] == [5, 6, 7]
        assert store.last_turns("u", "s", 0) == []
        assert [t.seq for t in store.last_turns("u", "s", 100)] == list(range(1, 8))
        assert [t.seq for t in store.turns_after("u", "s", 5)] == [6, 7]
        assert [t.seq for t in store.turns_after("u", "s", 2, last=2)] == [6, 7]
        assert store.turns_after("u", "s", 7) == []
        assert store.turns_after("u", "s", 0, last=0) == []

    def test_delete_session_only_touches_that_session(self, store: BaseStore) -> None:
        store.append_turn("u", "s1", "q", "a")
        store.append_turn("u", "s1", "q", "a")
        store.append_turn("u", "s2", "q", "a")
        store.replace_summary("u", "s1", "sum", 1, {}, expected_version=0)
        assert store.list_sessions("u") == ["s1", "s2"]
        assert store.delete_session("u", "s1") == 2
        assert store.count_turns("u", "s1") == 0
        reset = store.get_summary("u", "s1")
        assert (reset.text, reset.upto_seq, dict(reset.data)) == ("", 0, {})
        # a compaction that started before the deletion cannot write the old turns back
        assert store.replace_summary("u", "s1", "stale", 2, {}, expected_version=1) is None
        assert store.count_turns("u", "s2") == 1
        assert store.list_sessions("u") == ["s2"]
        assert store.append_turn("u", "s1", "again", "a").seq == 1

    @pytest.mark.parametrize("bad", ["", "a" * 65, "a b", "../x", "é", "x\n", None, 12, ("a",)])
    def test_bad_ids_are_refused_and_nothing_written(self, store: BaseStore, bad: object) -> None:
        with pytest.raises(InvalidInputError):
            store.append_turn(bad, "s", "q", "a")  # type: ignore[arg-type]
        with pytest.raises(InvalidInputError):
            store.append_turn("u", bad, "q", "a")  # type: ignore[arg-type]
        assert store.list_sessions("u") == []

    @pytest.mark.parametrize("good", ["a", "A" * 64, "user-1_2.x:y@z"])
    def test_good_ids(self, store: BaseStore, good: str) -> None:
        store.append_turn(good, good, "q", "a")
        assert store.count_turns(good, good) == 1

    @pytest.mark.parametrize(
        ("human", "ai", "meta"),
        [(None, "a", None), ("q", 3, None), ("q\x00", "a", None), ("q", "a", {"x": float("nan")})],
    )
    def test_bad_turns_write_nothing(
        self, store: BaseStore, human: object, ai: object, meta: object
    ) -> None:
        with pytest.raises(InvalidInputError):
            store.append_turn("u", "s", human, ai, meta)  # type: ignore[arg-type]
        assert store.count_turns("u", "s") == 0

    def test_negative_counts_are_refused(self, store: BaseStore) -> None:
        with pytest.raises(InvalidInputError):
            store.last_turns("u", "s", -1)
        with pytest.raises(InvalidInputError):
            store.turns_after("u", "s", -1)

    def test_concurrent_appends_get_distinct_seqs(self, store: BaseStore) -> None:
        def work(n: int) -> None:
            for i in range(25):
                store.append_turn("u", "s", f"{n}-{i}", "a")

        threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        seqs = [t.seq for t in store.turns_after("u", "s")]
        assert seqs == list(range(1, 101))
        assert store.count_turns("u", "s") == 100

    # -- summary -------------------------------------------------------------------------

    def test_summary_replace_is_compare_and_swap(self, store: BaseStore) -> None:
        assert store.get_summary("u", "s") == SummaryState()
        first = store.replace_summary("u", "s", "v1", 3, {"key_facts": ["a"]}, expected_version=0)
        assert first is not None and first.version == 1 and first.upto_seq == 3
        # a writer that started from version 0 lost the race: nothing written
        assert store.replace_summary("u", "s", "stale", 4, {}, expected_version=0) is None
        got = store.get_summary("u", "s")
        assert (got.text, got.upto_seq, dict(got.data), got.version) == (
            "v1",
            3,
            {"key_facts": ["a"]},
            1,
        )
        second = store.replace_summary("u", "s", "v2", 5, {}, expected_version=1)
        assert second is not None and second.version == 2
        assert store.get_summary("u", "s").text == "v2"

    def test_summary_bad_data_refused(self, store: BaseStore) -> None:
        with pytest.raises(InvalidInputError):
            store.replace_summary("u", "s", "t", 1, {"x": object()}, expected_version=0)
        with pytest.raises(InvalidInputError):
            store.replace_summary("u", "s", "t", -1, {}, expected_version=0)
        assert store.get_summary("u", "s").version == 0

    # -- documents -----------------------------------------------------------------------

    def test_put_get_delete(self, store: BaseStore) -> None:
        value = {"type": "PRODUCT", "aliases": ["XPS 15", "le XPS"], "n": 2, "ok": True}
        store.put(("entities", "alice"), "dell-xps-15", value)
        doc = store.get(("entities", "alice"), "dell-xps-15")
        assert doc is not None and dict(doc.value) == value
        assert doc.namespace == ("entities", "alice")
        assert store.get(("entities", "bob"), "dell-xps-15") is None
        store.put(("entities", "alice"), "dell-xps-15", {"n": 3})
        updated = store.get(("entities", "alice"), "dell-xps-15")
        assert updated is not None and dict(updated.value) == {"n": 3}
        assert updated.created_at <= updated.updated_at
        assert store.delete(("entities", "alice"), "dell-xps-15") is True
        assert store.delete(("entities", "alice"), "dell-xps-15") is False
        assert store.get(("entities", "alice"), "dell-xps-15") is None

    def test_put_if_writes_only_over_the_expected_value(self, store: BaseStore) -> None:
        ns = ("sessions", "alice")
        first = {"status": "active", "devices": ["phone", "tablette é"], "at": 1.5}
        assert store.put_if(ns, "s1", first, expected=None) is True
        assert store.put_if(ns, "s1", {"status": "other"}, expected=None) is False
        doc = store.get(ns, "s1")
        assert doc is not None and dict(doc.value) == first
        ended = {**first, "status": "ended"}
        assert store.put_if(ns, "s1", ended, expected=doc.value) is True
        assert store.put_if(ns, "s1", {"status": "stale"}, expected=doc.value) is False
        after = store.get(ns, "s1")
        assert after is not None and dict(after.value) == ended
        assert after.created_at == doc.created_at <= after.updated_at
        with pytest.raises(InvalidInputError):
            store.put_if(ns, "s1", {"x": float("nan")}, expected=ended)
        with pytest.raises(InvalidInputError):
            store.put_if(ns, "s1", ended, expected={"x": {1, 2}})  # type: ignore[dict-item]
        assert store.get(ns, "s1") == after  # nothing written by refused calls

    def test_put_if_loses_no_update_between_concurrent_writers(self, store: BaseStore) -> None:
        ns, writers, rounds = ("counters",), 4, 15

        def increment() -> None:
            for _ in range(rounds):
                while True:
                    doc = store.get(ns, "c")
                    expected = None if doc is None else dict(doc.value)
                    n = 0 if expected is None else int(expected["n"])
                    if store.put_if(ns, "c", {"n": n + 1}, expected=expected):
                        break

        with switching_often():
            run_together(*[increment] * writers)
        doc = store.get(ns, "c")
        assert doc is not None and doc.value == {"n": writers * rounds}

    def test_values_are_copies(self, store: BaseStore) -> None:
        value = {"items": [1, 2]}
        store.put(("ns",), "k", value)
        value["items"].append(3)
        doc = store.get(("ns",), "k")
        assert doc is not None and doc.value == {"items": [1, 2]}
        doc.value["items"].append(9)  # type: ignore[index]
        again = store.get(("ns",), "k")
        assert again is not None and again.value == {"items": [1, 2]}

    def test_list_by_prefix(self, store: BaseStore) -> None:
        store.put(("entities", "alice"), "b", {})
        store.put(("entities", "alice"), "a", {})
        store.put(("entities", "alice", "sub"), "c", {})
        store.put(("entities", "alicia"), "d", {})
        store.put(("profile", "alice"), "e", {})
        keys = [d.key for d in store.list(("entities", "alice"))]
        assert keys == ["a", "b", "c"]
        assert [d.key for d in store.list(("entities",))] == ["a", "b", "c", "d"]
        assert len(store.list()) == 5
        assert [d.key for d in store.list(("entities",), limit=2)] == ["a", "b"]
        assert store.list(("nothing",)) == []

    @pytest.mark.parametrize(
        ("namespace", "key", "value"),
        [
            ((), "k", {}),
            ("entities", "k", {}),
            (("a", ""), "k", {}),
            (("a\x1fb",), "k", {}),
            (("a",), "", {}),
            (("a",), 5, {}),
            (("a",), "k", []),
            (("a",), "k", {"s": {1, 2}}),
            (("a",), "k", {"f": float("inf")}),
            (("a",), "k", {1: "non-string key is fine in json? no: refused"}),
        ],
    )
    def test_bad_documents_refused(
        self, store: BaseStore, namespace: object, key: object, value: object
    ) -> None:
        try:
            store.put(namespace, key, value)  # type: ignore[arg-type]
        except InvalidInputError:
            pass
        else:
            # json.dumps turns int keys into strings: accepted, and read back as strings
            assert value == {1: "non-string key is fine in json? no: refused"}
            doc = store.get(namespace, key)  # type: ignore[arg-type]
            assert doc is not None and "1" in doc.value
            return
        assert store.list() == []

    # -- async ---------------------------------------------------------------------------

    async def test_async_methods(self, store: BaseStore) -> None:
        turn = await store.aappend_turn("u", "s", "q", "a")
        assert turn.seq == 1
        assert [t.human for t in await store.alast_turns("u", "s", 5)] == ["q"]
        assert [t.seq for t in await store.aturns_after("u", "s", 0)] == [1]
        assert await store.acount_turns("u", "s") == 1
        state = await store.areplace_summary("u", "s", "sum", 1, expected_version=0)
        assert state is not None
        assert (await store.aget_summary("u", "s")).text == "sum"
        await store.aput(("n",), "k", {"v": 1})
        doc = await store.aget(("n",), "k")
        assert doc is not None and doc.value == {"v": 1}
        assert len(await store.alist(("n",))) == 1
        assert await store.adelete(("n",), "k") is True
        assert await store.adelete_session("u", "s") == 1


class TestInMemoryStore(StoreSuite):
    @pytest.fixture
    def store(self) -> BaseStore:
        return InMemoryStore()


class TestSQLiteStore(StoreSuite):
    @pytest.fixture
    def store(self, tmp_path: Path) -> BaseStore:
        s = SQLiteStore(tmp_path / "memory.sqlite3")
        s.setup()
        yield s  # type: ignore[misc]
        s.close()


# -- SQLite specifics -------------------------------------------------------------------


def test_constructor_does_no_io(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "memory.sqlite3"
    store = SQLiteStore(path)
    assert not path.exists() and not path.parent.exists()
    store.append_turn("u", "s", "q", "a")  # first use runs setup()
    assert path.exists()
    store.close()


def test_setup_records_version_and_uses_wal(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    with SQLiteStore(path) as store:
        assert store.schema_version() == len(MIGRATIONS)
        store.setup()  # idempotent
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("SELECT version FROM mc_schema").fetchall() == [(len(MIGRATIONS),)]
    conn.close()


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    with SQLiteStore(path):
        pass
    conn = sqlite3.connect(path)
    conn.execute("UPDATE mc_schema SET version = ?", (len(MIGRATIONS) + 1,))
    conn.commit()
    conn.close()
    store = SQLiteStore(path)
    with pytest.raises(SchemaVersionError, match="upgrade memory_chains"):
        store.setup()
    with pytest.raises(SchemaVersionError):
        store.append_turn("u", "s", "q", "a")
    store.close()


def test_queries_use_the_primary_key(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    with SQLiteStore(path) as store:
        store.append_turn("u", "s", "q", "a")
    conn = sqlite3.connect(path)
    plan = conn.execute(
        "EXPLAIN QUERY PLAN SELECT seq FROM mc_turns WHERE user_id = ? AND session_id = ?"
        " AND seq > ? ORDER BY seq DESC LIMIT ?",
        ("u", "s", 0, 5),
    ).fetchall()
    conn.close()
    detail = " ".join(str(row[-1]) for row in plan)
    assert "USING PRIMARY KEY" in detail and "TEMP B-TREE" not in detail


def test_corrupt_file_maps_to_store_error(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    path.write_bytes(b"this is not a database" * 100)
    store = SQLiteStore(path)
    with pytest.raises(StoreError):
        store.setup()


def test_sql_injection_in_values_is_inert(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "m.sqlite3") as store:
        evil = "x'); DROP TABLE mc_turns; --"
        store.append_turn("u", "s", evil, evil)
        store.put((evil,), evil, {"v": evil})
        assert store.last_turns("u", "s", 1)[0].human == evil
        assert store.count_turns("u", "s") == 1


# -- open_store -------------------------------------------------------------------------


def test_open_store_urls(tmp_path: Path) -> None:
    assert isinstance(open_store("memory://"), InMemoryStore)
    mem_db = open_store("sqlite:///:memory:")
    assert isinstance(mem_db, SQLiteStore) and mem_db.path == ":memory:"
    absolute = open_store(f"sqlite:///{tmp_path}/a.sqlite3")  # tmp_path starts with "/"
    assert isinstance(absolute, SQLiteStore) and absolute.path == f"{tmp_path}/a.sqlite3"
    assert (tmp_path / "a.sqlite3").exists()  # setup ran
    lazy = open_store(f"sqlite:///{tmp_path}/b.sqlite3", setup=False)
    assert not (tmp_path / "b.sqlite3").exists()
    for s in (mem_db, absolute, lazy):
        s.close()


# "A://[": an unknown scheme whose netloc urllib refuses (found by test_typed_errors).
@pytest.mark.parametrize("url", ["ftp://x", "nope", "", "mysql://x/y", "A://[", "x://]:1/0"])
def test_open_store_bad_urls(url: str) -> None:
    with pytest.raises(ConfigurationError):
        open_store(url)


def test_open_store_default_uses_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_CHAINS_HOME", str(tmp_path))
    monkeypatch.delenv("MEMORY_CHAINS_STORE", raising=False)
    store = open_store()
    assert isinstance(store, SQLiteStore)
    assert Path(store.path) == tmp_path / "memory.sqlite3"
    store.close()
