"""Every public entry point raises only the library's exception tree (finding 4 of issue
#21): ``OverflowError`` from a window of 2**64 at load time, ``RecursionError`` from a deeply
nested index manifest (which also prevented the rebuild), a raw ``ValueError`` for a NUL
in a store URL, pydantic's ``ValidationError`` from the LangChain shells.

Sizes are bounded up front (2**31), every JSON read back from disk or a store has a
nesting limit, and a hypothesis run throws random arguments at the entry points: the only
exceptions allowed are :class:`MemoryChainsError` subclasses.

Cost: about 3 s.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_chains.config import Settings
from memory_chains.context import ContextMemory
from memory_chains.entities import EntityMemory
from memory_chains.errors import (
    ConfigurationError,
    IndexCorruptedError,
    InvalidInputError,
    MemoryChainsError,
    StoreError,
)
from memory_chains.knowledge import KnowledgeBase, sample_kb_path
from memory_chains.knowledge._persist import MANIFEST_FILE, read_index_dir
from memory_chains.memory import BufferMemory, SummaryMemory, WindowCore, WindowMemory
from memory_chains.providers import ChatLlamaCpp
from memory_chains.sessions import SessionManager
from memory_chains.stores import BaseStore, SQLiteStore, open_store
from memory_chains.testing import HashEmbeddings, ScriptedChatModel

HUGE = 2**64
DEEP = "[" * 50_000 + "]" * 50_000


def test_huge_window_sizes_are_refused_up_front(
    store: BaseStore,
    tmp_path: Path,
) -> None:
    store.append_turn("u", "s", "q", "a")
    for call in (
        lambda: store.last_turns("u", "s", HUGE),
        lambda: store.turns_after("u", "s", 0, last=HUGE),
        lambda: store.turns_after("u", "s", HUGE),
        lambda: store.list((), limit=HUGE),
        lambda: store.replace_summary("u", "s", "x", HUGE, expected_version=0),
        lambda: WindowCore(k=HUGE, store=store, user_id="u", session_id="s").context(),
    ):
        with pytest.raises(InvalidInputError):
            call()
    url = f"sqlite:///{tmp_path / 'w.sqlite3'}"
    with pytest.raises(InvalidInputError, match="k"):
        WindowMemory(k=HUGE, store=url).load_memory_variables({})
    assert store.count_turns("u", "s") == 1


def test_huge_model_sizes_are_refused_up_front() -> None:
    with pytest.raises(ConfigurationError, match="MEMORY_CHAINS_N_CTX"):
        Settings.from_env({"MEMORY_CHAINS_N_CTX": str(HUGE)})
    with pytest.raises(ConfigurationError, match="MEMORY_CHAINS_N_THREADS"):
        Settings.from_env({"MEMORY_CHAINS_N_THREADS": str(HUGE)})
    with pytest.raises(InvalidInputError, match="n_ctx"):
        ChatLlamaCpp(model_path="/nonexistent.gguf", n_ctx=HUGE)


def _kb(index_dir: Path) -> KnowledgeBase:
    return KnowledgeBase.from_folder(
        sample_kb_path(), HashEmbeddings(), index_dir=index_dir, progress=False
    )


@pytest.mark.parametrize("name", [MANIFEST_FILE, "docstore.json"])
def test_a_deeply_nested_index_file_is_corrupt_and_rebuilt(name: str, tmp_path: Path) -> None:
    index_dir = tmp_path / "index"
    assert _kb(index_dir).rebuilt
    (index_dir / name).write_text(DEEP, encoding="utf-8")
    with pytest.raises(IndexCorruptedError):
        read_index_dir(index_dir)
    again = _kb(index_dir)
    assert again.rebuilt and len(again) > 0
    assert not _kb(index_dir).rebuilt  # and the rebuilt index is sound


def test_a_deeply_nested_value_is_refused_on_write_and_a_tampered_one_on_read(
    store: BaseStore,
    tmp_path: Path,
) -> None:
    deep: Any = {}
    for _ in range(200):
        deep = {"d": deep}
    with pytest.raises(InvalidInputError):
        store.put(("facts", "u"), "k", deep)
    with pytest.raises(InvalidInputError):
        store.append_turn("u", "s", "q", "a", {"m": deep})
    loop: dict[str, Any] = {}
    loop["self"] = loop
    with pytest.raises(InvalidInputError):
        store.put(("facts", "u"), "k", loop)
    assert store.list(()) == [] and store.count_turns("u", "s") == 0


def test_a_tampered_sqlite_document_raises_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite3"
    with SQLiteStore(path) as s:
        s.put(("facts", "u"), "k", {"v": 1})
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE mc_documents SET value = ?", (DEEP,))
    with SQLiteStore(path) as s:
        with pytest.raises(StoreError, match="nested"):
            s.get(("facts", "u"), "k")
        with pytest.raises(StoreError):
            s.list(())


@pytest.mark.parametrize(
    "make",
    [
        lambda: WindowMemory(k="many"),
        lambda: WindowMemory(k=-1),
        lambda: BufferMemory(memory_key=3),
        lambda: BufferMemory(return_messages="perhaps"),
        lambda: SummaryMemory(llm=ScriptedChatModel(replies=["x"]), keep_last="x"),
        lambda: ContextMemory(builder=3),
        lambda: EntityMemory(extractor="rules", max_tokens=-5),
    ],
)
def test_langchain_shells_raise_invalid_input_not_pydantic_errors(make: Any) -> None:
    import pydantic

    with pytest.raises(InvalidInputError) as caught:
        make()
    assert not isinstance(caught.value, pydantic.ValidationError)
    assert isinstance(caught.value, MemoryChainsError)


ANYTHING = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.binary(max_size=10),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
URLS = st.one_of(
    ANYTHING,
    st.builds(
        lambda scheme, rest: f"{scheme}://{rest}",
        st.sampled_from(["memory", "sqlite", "redis", "rediss", "postgresql", "ftp", ""]),
        st.text(max_size=30),
    ),
)


@settings(
    max_examples=150,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(n=ANYTHING, k=ANYTHING, ttl=ANYTHING, user=ANYTHING, url=URLS)
def test_entry_points_raise_only_the_library_errors(
    store: BaseStore,
    n: Any,
    k: Any,
    ttl: Any,
    user: Any,
    url: Any,
) -> None:
    calls = [
        lambda: store.last_turns("u", "s", n),
        lambda: store.turns_after("u", "s", n, last=k),
        lambda: store.list((), limit=n),
        lambda: store.append_turn(user, "s", "q", "a"),
        lambda: store.put(("facts", "u"), "k", {"v": n}),
        lambda: WindowCore(k=k, store=store, user_id="u", session_id="s").context(),
        lambda: SessionManager(store, ttl=ttl).list("u"),
        lambda: open_store(url, setup=False, read_only=True),
        lambda: WindowMemory(k=k, store=store),
    ]
    for call in calls:
        with contextlib.suppress(MemoryChainsError):
            call()
    assert json.dumps(store.list(()), default=str) is not None
