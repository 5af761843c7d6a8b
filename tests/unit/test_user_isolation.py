"""Per-user isolation, for every memory on every backend: what user A wrote never comes back
through any public read API called for user B — even when both use the same session id.

To cover a new memory, append a :class:`MemoryUnderTest` to :data:`MEMORIES`: ``write``
stores something for a user and returns a string that must be readable by that user only;
``read`` returns, as one text, everything the memory's public read APIs give that user.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from memory_chains.context import (
    ContextBuilder,
    ContextMemory,
    EntitySource,
    RecallSource,
    long_term_sources,
    short_term_sources,
)
from memory_chains.entities import EntityTracker, RuleEntityExtractor
from memory_chains.longterm import LongTermMemory, RuleLongTermExtractor
from memory_chains.memory import (
    BufferCore,
    BufferMemory,
    SummaryCore,
    TokenBudgetCore,
    WindowCore,
)
from memory_chains.recall import TurnIndex
from memory_chains.sessions import SessionManager
from memory_chains.stores import BaseStore, export_user
from memory_chains.testing import HashEmbeddings, ScriptedChatModel, word_counter

from ._backends import any_store  # noqa: F401

SESSION = "shared-session"  # the same session id for both users: the hardest case


@dataclass(frozen=True)
class MemoryUnderTest:
    """How to write for a user, and how to read everything back for a user."""

    name: str
    write: Callable[[BaseStore, str, str], str]
    read: Callable[[BaseStore, str], str]


def _store_reads(store: BaseStore, user: str) -> str:
    """The store's own public reads for a user (what every memory relies on)."""
    parts: list[object] = [store.list_sessions(user)]
    for session in {SESSION, *store.list_sessions(user)}:
        parts += [
            store.turns_after(user, session),
            store.last_turns(user, session, 50),
            store.get_summary(user, session),
        ]
    parts.append(export_user(store, user))
    return json.dumps(parts, default=repr, ensure_ascii=False)


def _short_term(make: Callable[..., object]) -> MemoryUnderTest:
    def write(store: BaseStore, user: str, tag: str) -> str:
        memory = make(store=store, user_id=user, session_id=SESSION, token_counter=word_counter)
        memory.add_exchange(f"mon code est {tag}", f"noté {tag}")  # type: ignore[attr-defined]
        return tag

    def read(store: BaseStore, user: str) -> str:
        memory = make(store=store, user_id=user, session_id=SESSION, token_counter=word_counter)
        return " ".join(
            [
                memory.render(),  # type: ignore[attr-defined]
                repr(memory.context()),  # type: ignore[attr-defined]
                repr(memory.stats()),  # type: ignore[attr-defined]
                _store_reads(store, user),
            ]
        )

    return MemoryUnderTest(make.__name__ if hasattr(make, "__name__") else "core", write, read)


def _summary_core(**kwargs: object) -> SummaryCore:
    # the fake summariser copies the last human message into the summary's facts
    def summarise(messages: list) -> str:  # type: ignore[type-arg]
        text = str(messages[-1].content)
        code = next((w for w in text.split() if w.startswith("tag")), "none")
        return json.dumps({"add_facts": [f"The user's code is {code}."]})

    llm = ScriptedChatModel(default="{}", replies=[summarise] * 10)
    return SummaryCore(llm=llm, max_turns=1, keep_last=0, background=False, **kwargs)  # type: ignore[arg-type]


def _write_summary(store: BaseStore, user: str, tag: str) -> str:
    memory = _summary_core(
        store=store, user_id=user, session_id=SESSION, token_counter=word_counter
    )
    memory.add_exchange(f"mon code est {tag}", "noté")
    memory.add_exchange("et ensuite ?", "rien")
    assert tag in memory.context().summary  # the summary holds the secret
    return tag


def _read_summary(store: BaseStore, user: str) -> str:
    memory = _summary_core(
        store=store, user_id=user, session_id=SESSION, token_counter=word_counter
    )
    return f"{memory.render()} {memory.stats()!r} {_store_reads(store, user)}"


def _write_shell(store: BaseStore, user: str, tag: str) -> str:
    memory = BufferMemory(store=store, user_id=user, session_id=SESSION)
    memory.save_context({"question": f"code {tag}"}, {"answer": "ok"})
    return tag


def _read_shell(store: BaseStore, user: str) -> str:
    memory = BufferMemory(store=store, user_id=user, session_id=SESSION, return_messages=False)
    return f"{memory.load_memory_variables({})} {_store_reads(store, user)}"


def _tracker(store: BaseStore, user: str) -> EntityTracker:
    return EntityTracker(RuleEntityExtractor(use_spacy=False), user_id=user, store=store)


def _write_entities(store: BaseStore, user: str, tag: str) -> str:
    price = f"{random.Random(tag).randint(1000, 9999)} €"
    _tracker(store, user).observe(f"Le Dell XPS 15 est à {price}.")
    return price


def _read_entities(store: BaseStore, user: str) -> str:
    tracker = _tracker(store, user)
    return " ".join(
        [
            tracker.context("Et le prix du XPS 15 ?"),
            repr(tracker.entities()),
            repr(tracker.get("XPS 15")),
            repr(tracker.resolve("le portable")),
            repr(tracker.prioritized("prix")),
            tracker.export_json(),
            _store_reads(store, user),
        ]
    )


def _write_sessions(store: BaseStore, user: str, tag: str) -> str:
    manager = SessionManager(store)
    manager.create(user, device=f"dev-{tag}", session_id=f"sess-{tag}")
    store.append_turn(user, SESSION, f"q {tag}", "a")
    manager.merge(user, [SESSION], into=f"merged-{tag}")
    return tag


def _read_sessions(store: BaseStore, user: str) -> str:
    manager = SessionManager(store)
    sessions = manager.list(user, include_expired=True)
    return " ".join(
        [
            repr(sessions),
            repr(manager.latest(user)),
            repr([manager.get(user, s.session_id) for s in sessions]),
            repr(manager.resume(user)),
            _store_reads(store, user),
        ]
    )


def _long_term(store: BaseStore, user: str) -> LongTermMemory:
    return LongTermMemory(store, user, HashEmbeddings(), RuleLongTermExtractor())


def _write_long_term(store: BaseStore, user: str, tag: str) -> str:
    memory = _long_term(store, user)
    report = memory.observe(f"Je m'appelle Zo{tag}. Mon code est {tag}.", session_id=SESSION)
    assert report.changed  # the rules did extract something
    return tag


def _read_long_term(store: BaseStore, user: str) -> str:
    memory = _long_term(store, user)
    question = "Quel est mon code et comment je m'appelle ?"
    return " ".join(
        [
            repr(memory.profile()),
            repr(memory.facts(include_superseded=True)),
            repr(memory.recall(question, k=20)),
            memory.instructions(),
            memory.profile_block(500),
            memory.facts_block(question, 500),
            memory.context(question, max_tokens=1000),
            _store_reads(store, user),
        ]
    )


def _context_memory(store: BaseStore, user: str) -> tuple[ContextMemory, TurnIndex]:
    """Every kind of source, each over a memory kept in ``store`` for ``user``."""
    short_term = WindowCore(store=store, user_id=user, session_id=SESSION, k=5)
    index = TurnIndex(store=store)
    sources = [
        *short_term_sources(short_term),
        EntitySource(_tracker(store, user)),
        *long_term_sources(_long_term(store, user), session_id=SESSION),
        RecallSource(index, user_id=user),
    ]
    builder = ContextBuilder(sources, 2000, word_counter)
    return ContextMemory(builder=builder), index


def _write_context(store: BaseStore, user: str, tag: str) -> str:
    memory, index = _context_memory(store, user)
    human = f"Mon code est {tag}. Le Dell XPS 15 est à 1599 €."
    memory.save_context({"question": human}, {"answer": f"Noté, {tag}."})
    index.add(user, f"{SESSION}#1", human, speaker="Human", session=SESSION)
    return tag


def _read_context(store: BaseStore, user: str) -> str:
    memory, _ = _context_memory(store, user)
    question = {"question": "Quel est mon code pour le XPS 15 ?"}
    as_text = memory.model_copy(update={"return_messages": False})
    return " ".join(
        [
            repr(memory.load_memory_variables(question)),
            repr(as_text.load_memory_variables(question)),
            memory.context(question["question"]).render(),
            _store_reads(store, user),
        ]
    )


MEMORIES: list[MemoryUnderTest] = [
    _short_term(BufferCore),
    _short_term(WindowCore),
    _short_term(TokenBudgetCore),
    MemoryUnderTest("SummaryCore", _write_summary, _read_summary),
    MemoryUnderTest("BufferMemory", _write_shell, _read_shell),
    MemoryUnderTest("EntityTracker", _write_entities, _read_entities),
    MemoryUnderTest("SessionManager", _write_sessions, _read_sessions),
    MemoryUnderTest("LongTermMemory", _write_long_term, _read_long_term),
    MemoryUnderTest("ContextMemory", _write_context, _read_context),
]


@pytest.mark.parametrize("memory", MEMORIES, ids=lambda m: m.name)
def test_one_user_never_reads_another_users_data(
    any_store: BaseStore,  # noqa: F811
    memory: MemoryUnderTest,
) -> None:
    alice_secret = memory.write(any_store, "alice", "tagalice7f3a")
    bob_secret = memory.write(any_store, "bob", "tagbob91c2")
    assert alice_secret != bob_secret
    alice_view, bob_view = memory.read(any_store, "alice"), memory.read(any_store, "bob")
    assert alice_secret in alice_view and bob_secret in bob_view  # the reads do read
    assert alice_secret not in bob_view
    assert bob_secret not in alice_view
    # a third user sees nothing of either
    carol_view = memory.read(any_store, "carol")
    assert alice_secret not in carol_view and bob_secret not in carol_view
