"""ResilientStore: a conversation goes on without memory while the store is down.

Logic with a store that fails on demand; then real parts (a SQLite path that cannot be
opened, a Redis URL on a closed port where a server is started later) and a whole chat.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever

from memory_chains.errors import (
    InvalidInputError,
    SchemaVersionError,
    StoreError,
    StoreUnavailableError,
    StoreUnavailableWarning,
)
from memory_chains.stores import (
    InMemoryStore,
    ResilientStore,
    SQLiteStore,
    _resilient,
    export_user,
    forget_user,
    open_store,
)
from memory_chains.testing import ScriptedChatModel

_PRIMITIVES = (
    "_setup",
    "_append_turn",
    "_read_turns",
    "_count_turns",
    "_delete_session",
    "_list_sessions",
    "_get_summary",
    "_replace_summary",
    "_put",
    "_put_if",
    "_get",
    "_list",
    "_delete",
)


class FlakyStore(InMemoryStore):
    """An in-memory store that raises ``error`` from every primitive while ``down``."""

    def __init__(self) -> None:
        super().__init__()
        self.down = False
        self.error: Exception = StoreUnavailableError("connection refused")
        self.calls = 0


def _failing(name: str) -> Callable[..., Any]:
    def method(self: FlakyStore, *args: Any) -> Any:
        self.calls += 1
        if self.down:
            raise self.error
        return getattr(InMemoryStore, name)(self, *args)

    return method


for _name in _PRIMITIVES:
    setattr(FlakyStore, _name, _failing(_name))


@pytest.fixture
def flaky() -> FlakyStore:
    return FlakyStore()


def test_outage_degrades_reads_drops_writes_and_warns_once(flaky: FlakyStore) -> None:
    store = ResilientStore(flaky, retry_interval=0)
    store.append_turn("alice", "s1", "q1", "a1")
    store.put(("entities", "alice"), "state", {"v": 1})
    flaky.down = True

    with pytest.warns(StoreUnavailableWarning, match="answering without memory") as record:
        dropped = store.append_turn("alice", "s1", "q2", "a2", {"n": 2})
        assert (dropped.seq, dropped.human, dict(dropped.metadata)) == (0, "q2", {"n": 2})
        assert store.last_turns("alice", "s1", 5) == []
        assert store.turns_after("alice", "s1") == []
        assert store.count_turns("alice", "s1") == 0
        assert store.get_summary("alice", "s1").version == 0
        assert store.replace_summary("alice", "s1", "sum", 1, expected_version=0) is None
        store.put(("entities", "alice"), "state", {"v": 2})
        assert store.get(("entities", "alice"), "state") is None
        assert store.list(("entities", "alice")) == []
    assert len(record) == 1
    stats = store.stats()
    assert (stats.available, stats.outages, stats.dropped_writes, stats.degraded_reads) == (
        False,
        1,
        3,
        6,
    )
    assert "connection refused" in stats.last_error

    flaky.down = False  # back: memory resumes with what was stored before the outage
    assert [t.human for t in store.last_turns("alice", "s1", 5)] == ["q1"]
    assert store.append_turn("alice", "s1", "q3", "a3").seq == 2
    doc = store.get(("entities", "alice"), "state")
    assert doc is not None and doc.value == {"v": 1}  # the write during the outage is lost
    assert store.stats().available and store.available

    flaky.down = True  # a second outage warns again
    with pytest.warns(StoreUnavailableWarning):
        store.count_turns("alice", "s1")
    assert store.stats().outages == 2


def test_a_compare_and_swap_during_an_outage_raises_instead_of_losing(flaky: FlakyStore) -> None:
    store = ResilientStore(flaky, retry_interval=0)
    assert store.put_if(("sessions", "alice"), "s1", {"n": 1}, expected=None)
    flaky.down = True
    with pytest.raises(StoreUnavailableError), pytest.warns(StoreUnavailableWarning):
        # a silent False would be read again and retried in vain
        store.put_if(("sessions", "alice"), "s1", {"n": 2}, expected={"n": 1})
    flaky.down = False
    assert store.put_if(("sessions", "alice"), "s1", {"n": 2}, expected={"n": 1})
    doc = store.get(("sessions", "alice"), "s1")
    assert doc is not None and doc.value == {"n": 2}


def test_a_copy_read_blind_during_an_outage_never_overwrites_the_document(
    flaky: FlakyStore,
) -> None:
    store = ResilientStore(flaky, retry_interval=0)
    store.put(("entities", "alice"), "state", {"known": ["Dell XPS 15"]})
    flaky.down = True
    with pytest.warns(StoreUnavailableWarning):
        assert store.get(("entities", "alice"), "state") is None  # reads as missing
        assert store.get(("entities", "bob"), "state") is None
        assert store.list(("facts", "alice")) == []
    flaky.down = False

    # a copy built from the blind read would replace the real document: dropped
    store.put(("entities", "alice"), "state", {"known": ["MacBook"]})
    doc = store.get(("entities", "alice"), "state")
    assert doc is not None and doc.value == {"known": ["Dell XPS 15"]}
    assert store.stats().stale_writes == 1
    # once read again for real, the document can be updated
    store.put(("entities", "alice"), "state", {"known": ["Dell XPS 15", "MacBook"]})
    doc = store.get(("entities", "alice"), "state")
    assert doc is not None and doc.value == {"known": ["Dell XPS 15", "MacBook"]}
    # a document that did not exist: the empty read was right, the write goes through
    store.put(("entities", "bob"), "state", {"known": []})
    assert store.get(("entities", "bob"), "state") is not None
    store.put(("facts", "alice", "v1"), "f1", {"text": "new"})
    assert [d.key for d in store.list(("facts", "alice"))] == ["f1"]
    assert store.stats().stale_writes == 1


def test_entity_memory_started_during_an_outage_does_not_erase_known_entities(
    flaky: FlakyStore,
) -> None:
    from memory_chains.entities import EntityMemory

    store = ResilientStore(flaky, retry_interval=0)
    before = EntityMemory(extractor="rules", user_id="alice", store=store)
    before.save_context({"question": "Je veux le Dell XPS 15"}, {"answer": "Il coûte 1599 €."})
    flaky.down = True
    with pytest.warns(StoreUnavailableWarning):  # a new process starts during the outage
        during = EntityMemory(extractor="rules", user_id="alice", store=store)
        during.save_context({"question": "Et le MacBook Pro ?"}, {"answer": "Noté."})
    flaky.down = False
    during.save_context({"question": "Merci"}, {"answer": "De rien."})

    fresh = EntityMemory(extractor="rules", user_id="alice", store=store)
    assert "Dell XPS 15" in [e.name for e in fresh.entities()]


def test_erasure_and_export_never_pretend_to_succeed(flaky: FlakyStore) -> None:
    store = ResilientStore(flaky, retry_interval=0)
    store.append_turn("alice", "s1", "q", "a")
    flaky.down = True
    with pytest.warns(StoreUnavailableWarning):
        calls: list[Callable[[], object]] = [
            lambda: store.delete_session("alice", "s1"),
            lambda: store.delete(("entities", "alice"), "state"),
            lambda: store.list_sessions("alice"),
            lambda: store.list(()),
            lambda: forget_user(store, "alice"),
            lambda: export_user(store, "alice"),
        ]
        for call in calls:
            with pytest.raises(StoreUnavailableError):
                call()
    flaky.down = False
    assert forget_user(store, "alice").turns == 1


def test_no_retry_before_the_interval_then_recovery(
    flaky: FlakyStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [1000.0]
    monkeypatch.setattr(_resilient.time, "monotonic", lambda: now[0])
    store = ResilientStore(flaky, retry_interval=5)
    store.setup()
    flaky.down = True
    with pytest.warns(StoreUnavailableWarning):
        store.count_turns("u", "s")
    calls = flaky.calls
    flaky.down = False
    for _ in range(3):  # within the interval: answered at once, the store is not touched
        assert store.append_turn("u", "s", "q", "a").seq == 0
    with pytest.raises(StoreUnavailableError, match="retry once it is back"):
        store.delete_session("u", "s")
    assert flaky.calls == calls and store.stats().dropped_writes == 3
    now[0] += 5.1
    assert store.append_turn("u", "s", "q", "a").seq == 1
    assert store.available


def test_setup_during_an_outage_is_not_an_error(flaky: FlakyStore) -> None:
    flaky.down = True
    store = ResilientStore(flaky, retry_interval=0)
    with pytest.warns(StoreUnavailableWarning):
        store.setup()
    assert store.stats().degraded_reads == 0  # the setup itself is not a read
    flaky.down = False
    assert store.append_turn("u", "s", "q", "a").seq == 1


@pytest.mark.parametrize("error", [StoreError("disk image is malformed"), SchemaVersionError("x")])
def test_other_store_errors_are_not_outages(flaky: FlakyStore, error: Exception) -> None:
    store = ResilientStore(flaky, retry_interval=0)
    store.setup()
    flaky.down, flaky.error = True, error
    with pytest.raises(type(error)):
        store.append_turn("u", "s", "q", "a")
    assert store.stats().outages == 0


def test_bad_input_is_refused_before_the_store(flaky: FlakyStore) -> None:
    store = ResilientStore(flaky, retry_interval=0)
    flaky.down = True
    with pytest.raises(InvalidInputError):
        store.append_turn("bad id", "s", "q", "a")
    assert flaky.calls == 0
    for bad in (-1, True, "1"):
        with pytest.raises(InvalidInputError, match="retry_interval"):
            ResilientStore(flaky, retry_interval=bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="wraps a BaseStore"):
        ResilientStore("sqlite:///x")  # type: ignore[arg-type]


async def test_async_methods_degrade_too(flaky: FlakyStore) -> None:
    store = ResilientStore(flaky, retry_interval=0)
    flaky.down = True
    with pytest.warns(StoreUnavailableWarning):
        assert (await store.aappend_turn("u", "s", "q", "a")).seq == 0
        assert await store.alast_turns("u", "s", 3) == []
    flaky.down = False
    assert (await store.aappend_turn("u", "s", "q", "a")).seq == 1


def test_open_store_resilient_wraps_and_never_raises_at_setup() -> None:
    store = open_store("memory://", resilient=True)
    assert isinstance(store, ResilientStore) and store.scheme == "memory"
    assert isinstance(store.inner, InMemoryStore)


# -- real parts ----------------------------------------------------------------------------


def test_sqlite_file_that_cannot_be_opened_then_can(tmp_path: Path) -> None:
    blocker = tmp_path / "data"
    blocker.write_text("a file where the store's directory should be")
    store = ResilientStore(SQLiteStore(blocker / "memory.sqlite3"), retry_interval=0)
    with pytest.warns(StoreUnavailableWarning, match="memory.sqlite3"):
        assert store.append_turn("u", "s", "q1", "a1").seq == 0
        assert store.last_turns("u", "s", 3) == []
    blocker.unlink()  # the directory can be created now: the store comes back
    assert store.append_turn("u", "s", "q2", "a2").seq == 1
    assert [t.human for t in store.last_turns("u", "s", 3)] == ["q2"]
    store.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


@pytest.fixture
def redis_later() -> Iterator[tuple[str, Callable[[], None]]]:
    """A Redis URL on a closed port, and a function starting a server on that port."""
    pytest.importorskip("redis")
    binary = shutil.which("redis-server")
    if binary is None:
        from .test_stores_servers import _unusable

        _unusable("redis-server is not installed (run scripts/ci_services.sh)")
    port = _free_port()
    servers: list[subprocess.Popen[bytes]] = []

    def start() -> None:
        servers.append(
            subprocess.Popen(
                [binary, "--bind", "127.0.0.1", "--port", str(port), "--save", "",
                 "--appendonly", "no"],
                stdout=subprocess.DEVNULL,
            )
        )  # fmt: skip
        import redis

        client = redis.Redis(port=port)
        for _ in range(100):
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        client.close()

    yield f"redis://127.0.0.1:{port}/0", start
    for server in servers:
        server.terminate()
        server.wait(timeout=10)


class OneDoc(BaseRetriever):
    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        return [Document(page_content="Retours : 30 jours.", metadata={"source": "kb.md"})]


class SameQuestion:
    def rewrite(self, question: str, history: Any, *, entities: Any = ()) -> Any:
        return type("R", (), {"standalone": question})()

    async def arewrite(self, question: str, history: Any, *, entities: Any = ()) -> Any:
        return self.rewrite(question, history)


def _chat(store: ResilientStore) -> Any:
    from memory_chains.memory import BufferMemory
    from memory_chains.rag import ConversationalRAG, build_chain

    def reply(messages: list[Any]) -> str:
        text = messages[-1].content
        return f"answer #{text.count('Human:') + text.count('human:') + 1}"

    llm = ScriptedChatModel(default="", replies=[reply] * 50)
    memory = BufferMemory(store=store, user_id="alice", session_id="chat")
    return ConversationalRAG(build_chain(OneDoc(), llm=llm, memory=memory, rewriter=SameQuestion()))


def test_chat_with_redis_down_answers_every_question_then_memory_resumes(
    redis_later: tuple[str, Callable[[], None]],
) -> None:
    from memory_chains.stores import RedisStore

    url, start_server = redis_later
    store = ResilientStore(RedisStore(url, timeout=1, prefix="mcresil:"), retry_interval=0)
    rag = _chat(store)
    with pytest.warns(StoreUnavailableWarning) as record:
        answers = [rag.ask(q) for q in ("Politique de retour ?", "Et l'électronique ?", "Merci")]
    assert all(a.answer for a in answers) and len(record) == 1
    assert rag.history() == [] and store.stats().dropped_writes == 3

    start_server()
    rag.ask("Et les frais de port ?")
    rag.ask("Combien de jours déjà ?")
    assert [m.content for m in rag.history()][::2] == [
        "Et les frais de port ?",
        "Combien de jours déjà ?",
    ]
    assert store.available and store.stats().outages == 1
    assert store.inner.count_turns("alice", "chat") == 2
    store.close()


async def test_chat_with_store_down_answers_every_question_sync_and_async(
    flaky: FlakyStore,
) -> None:
    store = ResilientStore(flaky, retry_interval=0)
    rag = _chat(store)
    rag.ask("Bonjour")
    flaky.down = True
    with pytest.warns(StoreUnavailableWarning) as record:
        answers = [rag.ask("Politique de retour ?"), await rag.aask("Et l'électronique ?")]
        answers.append(rag.ask("Merci"))
    assert [bool(a.answer) for a in answers] == [True, True, True]
    assert len(record) == 1
    flaky.down = False
    assert [m.content for m in rag.history()][::2] == ["Bonjour"]
