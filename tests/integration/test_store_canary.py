"""What reaches the bytes of each backend: personal data never, a forgotten user nothing.

Per backend (a SQLite file under ``MEMORY_CHAINS_HOME`` with its ``-wal``/``-shm``, a Redis
key prefix read key by key, a PostgreSQL schema read table by table as text):

* an IBAN and a card number sent through the memories never appear in the store;
* after :func:`forget_user`, a canary string from that user's messages, summary, entity and
  fact documents appears 0 times anywhere (every file under ``MEMORY_CHAINS_HOME``
  included), and :func:`export_user` returns an empty document, while another user's
  canary is still found (the scan does see the data).

Not marked ``integration``: no model is involved, and CI runs them with real servers.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memory_chains.entities import EntityMemory
from memory_chains.evaluation.loadgen import StoreTarget
from memory_chains.memory import BufferCore, SummaryCore, WindowCore
from memory_chains.stores import BaseStore, export_user, forget_user
from memory_chains.testing import ScriptedChatModel

from ._store_targets import BACKENDS, fresh_target

CANARY = "kanari-91d4e7"  # not personal data: the masker leaves it alone
OTHER_CANARY = "kanari-bob-52aa03"
IBAN_SPACED = "FR76 3000 6000 0112 3456 7890 189"
CARD_SPACED = "4111 1111 1111 1111"
# every way the numbers could be written down (spaces/dashes removed by a normaliser…)
SECRETS = (
    IBAN_SPACED,
    IBAN_SPACED.replace(" ", ""),
    "3000 6000 0112 3456 7890",
    "30006000011234567890",
    CARD_SPACED,
    CARD_SPACED.replace(" ", ""),
    CARD_SPACED.replace(" ", "-"),
)


@pytest.fixture(params=BACKENDS)
def backend(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[BaseStore, Callable[[], str]]]:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("MEMORY_CHAINS_HOME", str(home))
    monkeypatch.delenv("MEMORY_CHAINS_STORE", raising=False)
    targets = fresh_target(request.param, home)
    target = next(targets)
    if target.kind == "sqlite":  # the default store: a file under the home
        from memory_chains.config import load_settings

        target = StoreTarget(load_settings().default_store_url)
        assert str(home) in target.url
    store = target.open()
    store.setup()

    def dump() -> str:
        return _raw(store, target) + _files(home)

    try:
        yield store, dump
    finally:
        store.close()
        targets.close()  # erases the Redis prefix / PostgreSQL schema


def _files(home: Path) -> str:
    """Every byte of every file under the home (store files, indexes, caches)."""
    return "".join(p.read_bytes().decode("latin-1") for p in sorted(home.rglob("*")) if p.is_file())


def _raw(store: BaseStore, target: StoreTarget) -> str:
    if target.kind == "redis":
        return _redis_values(store)
    if target.kind == "postgresql":
        return _postgres_rows(store)
    return ""  # SQLite: the files under the home


def _redis_values(store: BaseStore) -> str:
    """Each key under the prefix and its whole value, read with the type's own command
    (DUMP may compress long strings, which would hide a canary)."""
    client = store._client  # type: ignore[attr-defined]
    out = []
    for key in client.scan_iter(match=f"{store.prefix}*"):  # type: ignore[attr-defined]
        kind = client.type(key)
        value: object
        if kind == "string":
            value = client.get(key)
        elif kind == "hash":
            value = client.hgetall(key)
        elif kind == "zset":
            value = client.zrange(key, 0, -1, withscores=True)
        elif kind == "set":
            value = client.smembers(key)
        else:
            assert kind == "list", kind
            value = client.lrange(key, 0, -1)
        out.append(f"{key}={value!r}")
    assert out, "the scan found no key: wrong prefix?"
    return "\n".join(out)


def _postgres_rows(store: BaseStore) -> str:
    from psycopg import sql

    out = []
    with store._tx() as conn:  # type: ignore[attr-defined]
        tables = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
            (store.schema,),  # type: ignore[attr-defined]
        ).fetchall()
        assert len(tables) >= 5
        for (table,) in tables:
            query = sql.SQL("SELECT t::text FROM {} AS t").format(sql.Identifier(table))
            out += [r[0] for r in conn.execute(query).fetchall()]
    return "\n".join(out)


def _talk(store: BaseStore, user: str, canary: str) -> None:
    """A user's conversation through every memory that persists, the canary everywhere."""
    summarizer = ScriptedChatModel(
        default=json.dumps({"add_facts": [f"The user's code word is {canary}."]})
    )
    summary = SummaryCore(
        store=store, user_id=user, session_id="s1", llm=summarizer, max_turns=2, keep_last=1,
        background=False,
    )  # fmt: skip
    window = WindowCore(store=store, user_id=user, session_id="s2", k=3)
    entities = EntityMemory(extractor="rules", user_id=user, store=store)
    for i in range(4):
        question = f"Mon code est {canary}, question {i} sur le Dell XPS 15"
        summary.add_exchange(question, f"Bien noté, {canary}.")
        window.add_exchange(question, "Noté.")
        entities.save_context({"question": question}, {"answer": f"Le code {canary} est noté"})
    store.put(("facts", user, "v1"), "f1", {"text": f"code word {canary}"})
    assert summary.store.get_summary(user, "s1").version >= 1  # a summary was written


def test_iban_and_card_number_never_reach_the_store(
    backend: tuple[BaseStore, Callable[[], str]],
) -> None:
    store, dump = backend
    buffer = BufferCore(store=store, user_id="alice", session_id="pay")
    entities = EntityMemory(extractor="rules", user_id="alice", store=store)
    messages = [
        (f"Mon IBAN est {IBAN_SPACED}", f"Votre IBAN {IBAN_SPACED} est noté."),
        (f"Ma carte : {CARD_SPACED}", f"Carte {CARD_SPACED.replace(' ', '-')} enregistrée."),
        (f"IBAN {IBAN_SPACED.replace(' ', '')}, carte {CARD_SPACED.replace(' ', '')}", "OK"),
    ]
    for human, ai in messages:
        buffer.add_exchange(human, ai)
        entities.save_context({"question": human}, {"answer": ai})
    raw = dump()
    assert "[IBAN]" in raw and "[CARD]" in raw  # the turns were stored, masked
    assert [s for s in SECRETS if s in raw] == []


def test_forget_user_leaves_no_canary_anywhere(
    backend: tuple[BaseStore, Callable[[], str]],
) -> None:
    store, dump = backend
    _talk(store, "alice", CANARY)
    _talk(store, "bob", OTHER_CANARY)
    assert CANARY in dump() and OTHER_CANARY in dump()

    result = forget_user(store, "alice")

    assert result.sessions == 2 and result.turns > 0 and result.documents == 2
    raw = dump()
    assert raw.count(CANARY) == 0
    assert OTHER_CANARY in raw  # bob is untouched, and the scan still sees data
    doc = export_user(store, "alice")
    assert (doc["sessions"], doc["documents"]) == ([], [])
    assert export_user(store, "bob")["sessions"]


def test_entity_memory_keeps_no_fragment_of_an_iban() -> None:
    from memory_chains.stores import InMemoryStore

    store = InMemoryStore()
    entities = EntityMemory(extractor="rules", user_id="alice", store=store)
    entities.save_context({"question": f"Mon IBAN est {IBAN_SPACED}"}, {"answer": "Noté."})
    stored = json.dumps([d.value for d in store.list(())])
    assert "FR76" not in stored
