"""Bad input, property-based: whatever text or ids arrive, every backend either stores them
exactly (after the documented normalisation) or refuses them with InvalidInputError and
stores nothing.

The rules checked:

* stores keep text byte for byte, except that NUL characters and lone surrogates are
  refused (no backend can hold them the same way); document keys and namespace labels also
  refuse control characters and more than 256 characters;
* memories normalise first (:func:`memory_chains.memory.normalize_message`): NFC, newlines
  unified, control characters removed, whitespace stripped; an empty question or a message
  over ``max_chars`` is refused; ``None`` and non-strings are refused;
* user, session and device ids are 1-64 of ``A-Z a-z 0-9 _ - . : @``, nothing else.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_chains.errors import InvalidInputError
from memory_chains.memory import WindowCore, normalize_message
from memory_chains.sessions import SessionManager
from memory_chains.stores import BaseStore, InMemoryStore

from ._backends import any_store  # noqa: F401

# SQL, Redis (RESP, Lua, glob) and terminal syntax that must stay inert data
NASTY = [
    "'; DROP TABLE mc_turns;--",
    "' OR '1'='1",
    "Robert'); DELETE FROM mc_documents; --",
    "*",
    "mc:*",
    "KEYS *",
    "FLUSHALL",
    "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n",
    "EVAL \"return redis.call('FLUSHALL')\" 0",
    "]]; redis.call('DEL', KEYS[1]); --[[",
    "\r\n",
    "%",
    "_",
    "\\",
    "\\u0000",
    "$1",
    "\x1b[31mred\x1b[0m",
    "\u2028\u2029\ufeff\u200b",
    "e\u0301",  # decomposed é (NFC changes it)
    "😀 ✓ ☃ 中文 العربية",
]

SURROGATE = st.characters(categories=["Cs"])
ANY_CHAR = st.one_of(st.characters(exclude_categories=()), SURROGATE, st.sampled_from("\x00\r\n\t"))
TEXT = st.one_of(
    st.text(ANY_CHAR, max_size=40),
    st.sampled_from(NASTY),
    st.lists(st.one_of(st.sampled_from(NASTY), st.text(ANY_CHAR, max_size=5)), max_size=4).map(
        "".join
    ),
)
NOT_TEXT = st.one_of(
    st.none(), st.integers(), st.floats(), st.binary(max_size=5), st.lists(st.text(), max_size=2)
)
ID_RE = re.compile(r"[A-Za-z0-9_\-.:@]{1,64}")
IDS = st.one_of(
    st.from_regex(ID_RE, fullmatch=True),
    st.text(ANY_CHAR, max_size=70),
    st.sampled_from(NASTY),
    st.just("x" * 65),
    NOT_TEXT,
)

PROPERTY = settings(
    max_examples=60,
    deadline=None,
    database=None,  # no .hypothesis/ directory in the checkout
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _store_refuses(text: str) -> bool:
    return "\x00" in text or any(0xD800 <= ord(c) <= 0xDFFF for c in text)


def _snapshot(store: BaseStore, user: str = "u") -> tuple[Any, ...]:
    sessions = store.list_sessions(user)
    return (
        sessions,
        [(s, [(t.seq, t.human, t.ai) for t in store.turns_after(user, s)]) for s in sessions],
        [(d.namespace, d.key, dict(d.value)) for d in store.list(())],
    )


# -- stores ---------------------------------------------------------------------------------


@PROPERTY
@given(human=TEXT, ai=TEXT)
def test_append_turn_stores_text_exactly_or_refuses_it(
    any_store: BaseStore,  # noqa: F811
    human: str,
    ai: str,
) -> None:
    before = any_store.count_turns("u", "s")
    if _store_refuses(human) or _store_refuses(ai):
        with pytest.raises(InvalidInputError):
            any_store.append_turn("u", "s", human, ai, {"echo": human + ai})
        assert any_store.count_turns("u", "s") == before
        return
    turn = any_store.append_turn("u", "s", human, ai, {"echo": human})
    (back,) = any_store.last_turns("u", "s", 1)
    assert (back.seq, back.human, back.ai, back.metadata["echo"]) == (turn.seq, human, ai, human)
    assert any_store.count_turns("u", "s") == before + 1


@PROPERTY
@given(key=TEXT, label=TEXT, value=TEXT)
def test_put_stores_documents_exactly_or_refuses_them(
    any_store: BaseStore,  # noqa: F811
    key: str,
    label: str,
    value: str,
) -> None:
    namespace = ("facts", "u", label)
    control = re.compile(r"[\x00-\x1f\x7f\ud800-\udfff]")
    bad_key = not key or len(key) > 256 or bool(control.search(key))
    bad_label = not label or len(label) > 256 or bool(control.search(label))
    before = _snapshot(any_store)
    if bad_key or bad_label or _store_refuses(value):
        with pytest.raises(InvalidInputError):
            any_store.put(namespace, key, {"v": value, value: 1} if value else {"v": value})
        assert _snapshot(any_store) == before
        return
    document = {"v": value, "nested": [value, {value: None}]}
    any_store.put(namespace, key, document)
    back = any_store.get(namespace, key)
    assert back is not None and dict(back.value) == document
    assert [d.key for d in any_store.list(namespace)] == [key]
    any_store.delete(namespace, key)
    assert _snapshot(any_store) == before


@pytest.mark.parametrize("size", [1_000_000])
def test_a_one_megabyte_message_is_stored_whole_by_every_backend(
    any_store: BaseStore,  # noqa: F811
    size: int,
) -> None:
    text = ("Ça coûte 1 234,56 € ; " * (size // 20))[:size]
    any_store.append_turn("u", "s", text, text[::-1])
    (back,) = any_store.last_turns("u", "s", 1)
    assert (back.human, back.ai) == (text, text[::-1])


# -- memories ----------------------------------------------------------------------------------


def _expected(value: str, *, allow_empty: bool, max_chars: int) -> str | None:
    """The documented normalisation, written independently; None when refused."""
    text = unicodedata.normalize("NFC", value).replace("\r\n", "\n").replace("\r", "\n")
    text = re.sub(r"[\x00-\x08\x0b-\x1f\x7f\u200b\u2028\u2029\ufeff]", "", text).strip()
    if (not text and not allow_empty) or len(text) > max_chars or _store_refuses(text):
        return None
    return text


@PROPERTY
@given(human=st.one_of(TEXT, NOT_TEXT), ai=st.one_of(TEXT, NOT_TEXT))
def test_memory_add_exchange_normalises_or_refuses_and_never_stores_half(
    any_store: BaseStore,  # noqa: F811
    human: Any,
    ai: Any,
) -> None:
    memory = WindowCore(k=1, store=any_store, user_id="u", session_id="m", pii=False, max_chars=60)
    before = any_store.count_turns("u", "m")
    expected_h = (
        _expected(human, allow_empty=False, max_chars=60) if isinstance(human, str) else None
    )
    expected_a = _expected(ai, allow_empty=True, max_chars=60) if isinstance(ai, str) else None
    if expected_h is None or expected_a is None:
        with pytest.raises(InvalidInputError):
            memory.add_exchange(human, ai)
        assert any_store.count_turns("u", "m") == before
        return
    memory.add_exchange(human, ai)
    (turn,) = memory.context().turns
    assert (turn.human, turn.ai) == (expected_h, expected_a)
    assert (turn.human, turn.ai) == (
        normalize_message(human, "h", max_chars=60),
        normalize_message(ai, "a", allow_empty=True, max_chars=60),
    )


def test_memory_refuses_a_one_megabyte_message_unless_told_to_truncate() -> None:
    store = InMemoryStore()
    big = "mot " * 250_000
    with pytest.raises(InvalidInputError, match="max_chars"):
        WindowCore(store=store).add_exchange(big, "ok")
    assert store.count_turns("default", "default") == 0
    turn = WindowCore(store=store, on_overflow="truncate").add_exchange(big, "ok")
    assert turn.human.endswith(" […]") and len(turn.human) <= 32_000


# -- ids ---------------------------------------------------------------------------------------


@PROPERTY
@given(user=IDS, session=IDS, device=IDS)
def test_session_ids_are_validated_before_anything_is_written(
    any_store: BaseStore,  # noqa: F811
    user: Any,
    session: Any,
    device: Any,
) -> None:
    manager = SessionManager(any_store)

    def valid(x: Any) -> bool:
        return isinstance(x, str) and ID_RE.fullmatch(x) is not None

    before = any_store.list(())
    if not (valid(user) and valid(session)):
        with pytest.raises(InvalidInputError):
            any_store.append_turn(user, session, "q", "a")
        assert any_store.list_sessions("u") == []
    # session=None asks create() for a generated id, device=None for no device
    if not (
        valid(user) and (session is None or valid(session)) and (device is None or valid(device))
    ):
        with pytest.raises(InvalidInputError):
            manager.create(user, device=device, session_id=session)
        assert any_store.list(()) == before
        return
    if session is not None and manager.get(user, session) is not None:
        assert manager.touch(user, session, device=device).session_id == session
        return
    created = manager.create(user, device=device, session_id=session)
    assert valid(created.session_id) and manager.get(user, created.session_id) == created
