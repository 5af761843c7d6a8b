"""The store conformance suite on Redis and PostgreSQL, plus those backends' specifics.

The servers come from ``scripts/ci_services.sh``; tests read
``MEMORY_CHAINS_TEST_REDIS_URL`` and ``MEMORY_CHAINS_TEST_POSTGRES_URL``. When a URL is
unset or its server unreachable the backend's tests are skipped, except under ``CI=true``
where they fail. Each test gets a fresh Redis key prefix / PostgreSQL schema.
"""

from __future__ import annotations

import importlib
import json
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest

from memory_chains.errors import (
    ConfigurationError,
    ForgottenError,
    SchemaVersionError,
    StoreUnavailableError,
)
from memory_chains.stores import (
    BaseStore,
    InMemoryStore,
    PostgresStore,
    RedisStore,
    SQLiteStore,
    export_user,
    forget_user,
    open_store,
)
from memory_chains.stores._postgres import MIGRATIONS
from memory_chains.stores._redis import SCHEMA_VERSION

from .test_stores import StoreSuite

REDIS_ENV = "MEMORY_CHAINS_TEST_REDIS_URL"
POSTGRES_ENV = "MEMORY_CHAINS_TEST_POSTGRES_URL"
_probed: dict[str, str | None] = {}  # url -> None when reachable, else the reason


def _probe_redis(url: str) -> None:
    import redis

    redis.Redis.from_url(url, socket_connect_timeout=2).ping()


def _probe_postgres(url: str) -> None:
    import psycopg

    psycopg.connect(url, connect_timeout=2).close()


def _unusable(reason: str) -> NoReturn:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true and {reason}")
    pytest.skip(reason)


def require_drivers(*modules: str) -> None:
    """Skip (locally) or fail (``CI=true``) unless the backends' drivers are installed."""
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:
            _unusable(f"{name} is not installed (pip install 'memory_chains[redis,postgres]')")


def server_url(env: str, probe: Callable[[str], None]) -> str:
    """The URL in ``env`` if its server answers; else skip (locally) or fail (``CI=true``)."""
    require_drivers("redis" if env == REDIS_ENV else "psycopg", "psycopg_pool")
    url = os.environ.get(env, "")
    reason: str | None
    if not url:
        reason = f"{env} is not set (run scripts/ci_services.sh, then export {env})"
    else:
        if url not in _probed:
            try:
                probe(url)
                _probed[url] = None
            except Exception as exc:  # any failure means "not usable here"
                _probed[url] = f"{env}={url} is unreachable: {exc}"
        reason = _probed[url]
    if reason is None:
        return url
    _unusable(reason)


@pytest.fixture
def redis_url() -> str:
    return server_url(REDIS_ENV, _probe_redis)


@pytest.fixture
def postgres_url() -> str:
    return server_url(POSTGRES_ENV, _probe_postgres)


def _drop_prefix(store: RedisStore) -> None:
    store.clear()


def _drop_schema(store: PostgresStore) -> None:
    from psycopg import sql

    with store._tx() as conn:
        conn.execute(
            sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(store.schema))
        )


@pytest.fixture
def fresh_redis(redis_url: str) -> Iterator[Callable[..., RedisStore]]:
    """Factory of stores sharing one fresh prefix (several instances = several clients)."""
    prefix = f"mctest:{uuid.uuid4().hex}:"
    made: list[RedisStore] = []

    def make(**options: Any) -> RedisStore:
        made.append(RedisStore(redis_url, prefix=prefix, **options))
        return made[-1]

    yield make
    if made:
        _drop_prefix(made[0])
    for s in made:
        s.close()


@pytest.fixture
def fresh_postgres(postgres_url: str) -> Iterator[Callable[[], PostgresStore]]:
    """Factory of stores sharing one fresh schema (several instances = several pools)."""
    schema = f"mc_test_{uuid.uuid4().hex}"
    made: list[PostgresStore] = []

    def make() -> PostgresStore:
        made.append(PostgresStore(postgres_url, schema=schema))
        return made[-1]

    yield make
    if made:
        _drop_schema(made[0])
    for s in made:
        s.close()


CANARY = "canary-7f3a9c-FR7630006000011234567890189"


class PrivacySuite:
    """forget_user / export_user on one backend. Subclasses provide ``store`` and
    ``raw_dump`` (every byte the backend holds, as text) fixtures."""

    def _fill(self, store: BaseStore) -> None:
        store.append_turn("alice", "s1", f"my IBAN is {CANARY}", "noted", {"n": 1})
        store.append_turn("alice", "s2", "second device", f"echo {CANARY}")
        store.replace_summary("alice", "s1", f"IBAN {CANARY}", 1, {"k": CANARY}, expected_version=0)
        store.put(("entities", "alice"), "state", {"iban": CANARY})
        store.put(("facts", "alice", "v1"), "f1", {"text": CANARY})
        store.append_turn("bob", "s1", "bob's question", "bob's answer")
        store.put(("entities", "bob"), "state", {"alice": "mentioned"})
        store.put(("alice",), "global", {"kept": True})  # not a user namespace

    def test_export_user_has_everything_and_only_that_user(self, store: BaseStore) -> None:
        self._fill(store)
        doc = export_user(store, "alice")
        assert json.loads(json.dumps(doc)) == doc  # JSON-serialisable as is
        assert doc["user_id"] == "alice" and doc["format"].startswith("memory_chains.export/")
        assert [s["session_id"] for s in doc["sessions"]] == ["s1", "s2"]
        s1 = doc["sessions"][0]
        assert [t["human"] for t in s1["turns"]] == [f"my IBAN is {CANARY}"]
        assert s1["turns"][0]["metadata"] == {"n": 1}
        assert s1["summary"]["data"] == {"k": CANARY} and doc["sessions"][1]["summary"] is None
        assert sorted((tuple(d["namespace"]), d["key"]) for d in doc["documents"]) == [
            (("entities", "alice"), "state"),
            (("facts", "alice", "v1"), "f1"),
        ]
        assert "bob's" not in json.dumps(doc)

    def test_forget_user_erases_the_canary(
        self, store: BaseStore, raw_dump: Callable[[], str]
    ) -> None:
        self._fill(store)
        assert CANARY in raw_dump()
        result = forget_user(store, "alice")
        assert (result.sessions, result.turns, result.documents) == (2, 2, 2)
        assert CANARY not in raw_dump()
        doc = export_user(store, "alice")
        assert (doc["sessions"], doc["documents"]) == ([], [])
        # bob and non-user documents untouched; a stale compaction cannot write back
        assert store.count_turns("bob", "s1") == 1
        assert store.get(("entities", "bob"), "state") is not None
        assert store.get(("alice",), "global") is not None
        with pytest.raises(ForgottenError):
            store.replace_summary("alice", "s1", CANARY, 1, expected_version=1)
        assert CANARY not in raw_dump()
        assert forget_user(store, "alice") == type(result)(0, 0, 0)

    def test_bad_user_id_is_refused(self, store: BaseStore) -> None:
        from memory_chains.errors import InvalidInputError

        for bad in ("", "a b", None, "x" * 65):
            with pytest.raises(InvalidInputError):
                forget_user(store, bad)  # type: ignore[arg-type]
            with pytest.raises(InvalidInputError):
                export_user(store, bad)  # type: ignore[arg-type]


class TestPrivacyInMemory(PrivacySuite):
    @pytest.fixture
    def store(self) -> BaseStore:
        return InMemoryStore()

    @pytest.fixture
    def raw_dump(self, store: InMemoryStore) -> Callable[[], str]:
        return lambda: repr(vars(store))


class TestPrivacySQLite(PrivacySuite):
    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[BaseStore]:
        s = SQLiteStore(tmp_path / "m.sqlite3")
        s.setup()
        yield s
        s.close()

    @pytest.fixture
    def raw_dump(self, store: SQLiteStore, tmp_path: Path) -> Callable[[], str]:
        def dump() -> str:
            # The store itself checkpoints the WAL after deletes and zeroes freed pages
            # (secure_delete): the files are read as they are.
            return "".join(
                p.read_bytes().decode("latin-1") for p in sorted(tmp_path.glob("m.sqlite3*"))
            )

        return dump


class ServerStoreSuite(StoreSuite, PrivacySuite):
    """The common suite plus what matters once several clients share a server."""

    @pytest.fixture
    def store(self, make_store: Callable[[], BaseStore]) -> BaseStore:
        s = make_store()
        s.setup()
        return s

    def test_data_survives_a_new_client(self, make_store: Callable[[], BaseStore]) -> None:
        with make_store() as first:
            first.append_turn("u", "s", "q1", "a1", {"k": [1, "é"]})
            first.replace_summary("u", "s", "sum", 1, {"facts": ["x"]}, expected_version=0)
            first.put(("entities", "u"), "xps", {"type": "PRODUCT"})
        with make_store() as second:
            (turn,) = second.last_turns("u", "s", 5)
            assert (turn.seq, turn.human, dict(turn.metadata)) == (1, "q1", {"k": [1, "é"]})
            assert second.get_summary("u", "s").data == {"facts": ["x"]}
            doc = second.get(("entities", "u"), "xps")
            assert doc is not None and doc.value == {"type": "PRODUCT"}
            assert second.append_turn("u", "s", "q2", "a2").seq == 2

    def test_concurrent_appends_from_several_clients(
        self, make_store: Callable[[], BaseStore]
    ) -> None:
        stores = [make_store() for _ in range(3)]
        for s in stores:
            s.setup()

        def work(s: BaseStore, n: int) -> None:
            for i in range(20):
                s.append_turn("u", "s", f"{n}-{i}", "a")

        threads = [threading.Thread(target=work, args=(s, n)) for n, s in enumerate(stores)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        turns = stores[0].turns_after("u", "s")
        assert [t.seq for t in turns] == list(range(1, 61))
        assert sorted(t.human for t in turns) == sorted(
            f"{n}-{i}" for n in range(3) for i in range(20)
        )
        assert stores[1].count_turns("u", "s") == 60

    def test_concurrent_compare_and_swap_has_one_winner(
        self, make_store: Callable[[], BaseStore]
    ) -> None:
        stores = [make_store() for _ in range(2)]
        results: list[object] = []
        barrier = threading.Barrier(6)

        def work(s: BaseStore, n: int) -> None:
            barrier.wait()
            results.append(s.replace_summary("u", "s", f"w{n}", n + 1, {}, expected_version=0))

        threads = [threading.Thread(target=work, args=(stores[n % 2], n)) for n in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        winners = [r for r in results if r is not None]
        assert len(winners) == 1
        assert stores[0].get_summary("u", "s").version == 1

    def test_injection_in_values_is_inert(self, store: BaseStore) -> None:
        evil = "x'); DROP TABLE mc_turns; -- \" * ? [a] {b} :1 /u/s"
        store.append_turn("u", "s", evil, evil, {evil: evil})
        store.put((evil, "n"), evil, {"v": evil})
        assert store.last_turns("u", "s", 1)[0].human == evil
        assert store.count_turns("u", "s") == 1
        doc = store.get((evil, "n"), evil)
        assert doc is not None and doc.value == {"v": evil}
        assert [d.key for d in store.list((evil,))] == [evil]

    def test_ids_with_colons_do_not_collide(self, store: BaseStore) -> None:
        store.append_turn("a:b", "c", "q", "a")
        store.append_turn("a", "b:c", "q", "a")
        assert store.count_turns("a:b", "c") == 1
        assert store.count_turns("a", "b:c") == 1
        assert store.list_sessions("a") == ["b:c"]


class TestRedisStore(ServerStoreSuite):
    @pytest.fixture
    def make_store(self, fresh_redis: Callable[[], RedisStore]) -> Callable[[], BaseStore]:
        return fresh_redis

    @pytest.fixture
    def raw_dump(self, store: RedisStore) -> Callable[[], str]:
        def dump() -> str:
            client = store._client
            return "".join(
                repr(client.dump(k)) + k for k in client.scan_iter(match=f"{store.prefix}*")
            )

        return dump

    def test_keys_stay_under_the_prefix_and_hold_json(
        self, fresh_redis: Callable[[], RedisStore]
    ) -> None:
        store = fresh_redis()
        store.append_turn("u", "s", "q", "a", {"n": 1})
        store.replace_summary("u", "s", "sum", 1, {"d": 1}, expected_version=0)
        store.put(("ns",), "k", {"v": 1})
        client = store._client
        keys = set(client.scan_iter(match=f"{store.prefix}*"))
        assert f"{store.prefix}turns/u/s" in keys and f"{store.prefix}schema" in keys
        (member,) = client.zrange(f"{store.prefix}turns/u/s", 0, -1)
        seq, _, body = member.partition(":")
        assert seq == "1" and json.loads(body)["m"] == {"n": 1}
        assert json.loads(client.hget(f"{store.prefix}docs:value", "ns\x1ek")) == {"v": 1}
        other = RedisStore(store.url, prefix=store.prefix + "other:")
        assert other.count_turns("u", "s") == 0 and other.list() == []
        _drop_prefix(other)
        other.close()

    def test_newer_layout_is_refused(self, fresh_redis: Callable[[], RedisStore]) -> None:
        store = fresh_redis()
        store.setup()
        assert store.schema_version() == SCHEMA_VERSION
        store._client.set(f"{store.prefix}schema", SCHEMA_VERSION + 1)
        newer = fresh_redis()
        with pytest.raises(SchemaVersionError, match="upgrade memory_chains"):
            newer.append_turn("u", "s", "q", "a")

    def test_session_ttl_expires_sessions_natively(
        self, fresh_redis: Callable[..., RedisStore]
    ) -> None:
        forever = fresh_redis()
        forever.append_turn("u", "keep", "q", "a")
        assert forever._client.pttl(f"{forever.prefix}turns/u/keep") == -1  # no expiry
        store = fresh_redis(session_ttl=0.4)
        store.append_turn("u", "s", "q", "a")
        store.replace_summary("u", "s", "sum", 1, expected_version=0)
        store.put(("entities", "u"), "k", {"v": 1})
        client = store._client
        for kind in ("turns", "count", "summary"):
            assert 0 < client.pttl(f"{store.prefix}{kind}/u/s") <= 400
        assert client.pttl(f"{store.prefix}sessions/u") == -1  # ids only, pruned on listing
        assert store.list_sessions("u") == ["keep", "s"]
        time.sleep(0.6)
        assert store.count_turns("u", "s") == 0 and store.last_turns("u", "s", 5) == []
        assert store.get_summary("u", "s").version == 0
        assert store.list_sessions("u") == ["keep"]  # the stale member is pruned
        assert store.get(("entities", "u"), "k") is not None  # documents do not expire
        assert store.append_turn("u", "s", "again", "a").seq == 1

    @pytest.mark.parametrize("ttl", [0, -1, "60", True, float("nan")])
    def test_bad_session_ttl(self, ttl: object) -> None:
        require_drivers("redis")
        with pytest.raises(ConfigurationError, match="session_ttl"):
            RedisStore("redis://127.0.0.1:1/0", session_ttl=ttl)  # type: ignore[arg-type]

    def test_clear_deletes_only_its_prefix(self, fresh_redis: Callable[..., RedisStore]) -> None:
        store = fresh_redis()
        neighbour = RedisStore(store.url, prefix=store.prefix[:-1] + "*:")  # a glob character
        try:
            for s in (store, neighbour):
                s.append_turn("u", "s", "q", "a")
                s.put(("n",), "k", {})
            assert store.clear() >= 5
            assert store.count_turns("u", "s") == 0 and store.list() == []
            assert neighbour.count_turns("u", "s") == 1 and len(neighbour.list()) == 1
        finally:
            neighbour.clear()
            neighbour.close()

    def test_open_store_redis_url(self, redis_url: str) -> None:
        store = open_store(redis_url, setup=False)  # setup would write mc:schema
        assert isinstance(store, RedisStore) and store.prefix == "mc:"
        assert store.schema_version() in (0, 1)  # reaches the server, read-only
        store.close()


class TestRedisStoreWithSessionTTL(ServerStoreSuite):
    """The whole suite again with expiring sessions (a TTL long enough not to fire)."""

    @pytest.fixture
    def make_store(self, fresh_redis: Callable[..., RedisStore]) -> Callable[[], BaseStore]:
        return lambda: fresh_redis(session_ttl=3600)

    @pytest.fixture
    def raw_dump(self, store: RedisStore) -> Callable[[], str]:
        client = store._client
        return lambda: "".join(
            repr(client.dump(k)) + k for k in client.scan_iter(match=f"{store.prefix}*")
        )


class TestPostgresStore(ServerStoreSuite):
    @pytest.fixture
    def make_store(self, fresh_postgres: Callable[[], PostgresStore]) -> Callable[[], BaseStore]:
        return fresh_postgres

    @pytest.fixture
    def raw_dump(self, store: PostgresStore) -> Callable[[], str]:
        def dump() -> str:
            from psycopg import sql

            out = []
            with store._tx() as conn:
                tables = conn.execute(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
                    (store.schema,),
                ).fetchall()
                for (table,) in tables:
                    query = sql.SQL("SELECT t::text FROM {} AS t").format(sql.Identifier(table))
                    out += [r[0] for r in conn.execute(query).fetchall()]
            return "\n".join(out)

        return dump

    def test_migrations_recorded_and_jsonb(
        self, fresh_postgres: Callable[[], PostgresStore]
    ) -> None:
        store = fresh_postgres()
        store.setup()
        store.setup()  # idempotent
        assert store.schema_version() == len(MIGRATIONS)
        with store._tx() as conn:
            rows = conn.execute("SELECT version FROM mc_schema").fetchall()
            kind = conn.execute(
                "SELECT data_type FROM information_schema.columns WHERE table_schema = %s"
                " AND table_name = 'mc_documents' AND column_name = 'value'",
                (store.schema,),
            ).fetchone()
        assert rows == [(len(MIGRATIONS),)]
        assert kind == ("jsonb",)

    def test_newer_schema_is_refused(self, fresh_postgres: Callable[[], PostgresStore]) -> None:
        store = fresh_postgres()
        store.setup()
        with store._tx() as conn:
            conn.execute("UPDATE mc_schema SET version = %s", (len(MIGRATIONS) + 1,))
        newer = fresh_postgres()
        with pytest.raises(SchemaVersionError, match="upgrade memory_chains"):
            newer.setup()

    def test_last_turns_uses_the_primary_key(
        self, fresh_postgres: Callable[[], PostgresStore]
    ) -> None:
        store = fresh_postgres()
        store.append_turn("u", "s", "q", "a")
        with store._tx() as conn:
            conn.execute("SET LOCAL enable_seqscan = off")
            plan = conn.execute(
                "EXPLAIN SELECT seq FROM mc_turns WHERE user_id = 'u' AND session_id = 's'"
                " AND seq > 0 ORDER BY seq DESC LIMIT 5"
            ).fetchall()
        text = " ".join(r[0] for r in plan)
        assert "mc_turns_pkey" in text and "Sort" not in text

    def test_drop_tables(self, fresh_postgres: Callable[[], PostgresStore]) -> None:
        store = fresh_postgres()
        store.append_turn("u", "s", "q", "a")
        store.drop_tables()
        with store._tx() as conn:
            assert conn.execute("SELECT to_regclass('mc_turns')").fetchone() == (None,)
        assert store.count_turns("u", "s") == 0  # set up again on next use

    def test_open_store_postgres_url(self, postgres_url: str) -> None:
        store = open_store(postgres_url.replace("postgresql://", "postgres://", 1), setup=False)
        assert isinstance(store, PostgresStore) and store.schema == "public"
        store.close()


# -- no server needed ----------------------------------------------------------------------


def test_open_store_maps_server_schemes_without_io() -> None:
    require_drivers("redis", "psycopg", "psycopg_pool")
    redis_store = open_store("redis://127.0.0.1:1/0", setup=False)
    pg_store = open_store("postgresql://nobody@127.0.0.1:1/none", setup=False)
    assert isinstance(redis_store, RedisStore) and redis_store.scheme == "redis"
    assert isinstance(pg_store, PostgresStore) and pg_store.scheme == "postgresql"
    redis_store.close()
    pg_store.close()


@pytest.mark.parametrize(
    "url", ["redis://127.0.0.1:1/0", "postgresql://nobody:secret@127.0.0.1:1/none"]
)
def test_unreachable_server_is_store_unavailable(url: str) -> None:
    require_drivers("redis", "psycopg", "psycopg_pool")
    with pytest.raises(StoreUnavailableError) as info:
        _open_fast(url)
    assert "secret" not in str(info.value)
    assert info.value.__cause__ is not None


def _open_fast(url: str) -> BaseStore:
    store: BaseStore = (
        RedisStore(url, timeout=1) if url.startswith("redis") else PostgresStore(url, timeout=1)
    )
    try:
        store.setup()
    finally:
        store.close()
    return store


@pytest.mark.parametrize(
    "make",
    [
        lambda: RedisStore("redis://x", prefix=""),
        lambda: PostgresStore("postgresql://x", schema=""),
        lambda: PostgresStore("postgresql://x", min_size=3, max_size=2),
    ],
)
def test_bad_backend_options(make: Callable[[], object]) -> None:
    require_drivers("redis", "psycopg", "psycopg_pool")
    with pytest.raises(ConfigurationError):
        make()


def test_missing_server_skips_locally_but_fails_on_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    require_drivers("redis", "psycopg_pool")
    monkeypatch.delenv(REDIS_ENV, raising=False)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=REDIS_ENV):
        server_url(REDIS_ENV, _probe_redis)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        server_url(REDIS_ENV, _probe_redis)
    monkeypatch.setenv(REDIS_ENV, "redis://127.0.0.1:1/0")
    with pytest.raises(pytest.fail.Exception, match="unreachable"):
        server_url(REDIS_ENV, _probe_redis)


def test_drivers_are_imported_only_when_chosen() -> None:
    import subprocess
    import sys

    code = (
        "import sys, memory_chains.stores as s; s.open_store('memory://');"
        "print(sorted(m for m in ('redis', 'psycopg', 'psycopg_pool') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
