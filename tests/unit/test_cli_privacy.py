"""``memory-chains forget / export / sessions`` and the chat's ``--store/--user/--session``."""

from __future__ import annotations

import json
import stat
import time
from pathlib import Path

import pytest

from memory_chains.cli import main
from memory_chains.sessions import SessionManager
from memory_chains.stores import BaseStore, open_store

CANARY = "canary-FR7630006000011234567890189"


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'store.sqlite3'}"


def _fill(url: str) -> None:
    store = open_store(url)
    manager = SessionManager(store)
    s = manager.create("alice", device="phone", session_id="s1")
    store.append_turn("alice", s.session_id, f"my IBAN {CANARY}", "noted")
    store.append_turn("alice", "s2", "second", "device")
    store.put(("entities", "alice"), "state", {"iban": CANARY})
    store.append_turn("bob", "s1", "bob's question", "bob's answer")
    store.close()


def _store(url: str) -> BaseStore:
    return open_store(url)


def test_export_prints_one_json_document_of_that_user_only(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _fill(url)
    assert main(["export", "--store", url, "--user", "alice"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["user_id"] == "alice"
    assert [s["session_id"] for s in doc["sessions"]] == ["s1", "s2"]
    assert {tuple(d["namespace"]) for d in doc["documents"]} == {
        ("entities", "alice"),
        ("sessions", "alice"),
    }
    assert CANARY in json.dumps(doc) and "bob's" not in json.dumps(doc)


def test_export_to_a_private_file(
    url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _fill(url)
    out = tmp_path / "alice.json"
    assert main(["export", "--store", url, "--user", "alice", "--output", str(out)]) == 0
    assert json.loads(out.read_text())["user_id"] == "alice"
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert "2 session(s), 2 turn(s), 2 document(s)" in capsys.readouterr().err


def test_forget_user_prints_counts_and_erases_everything(
    url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _fill(url)
    assert main(["forget", "--store", url, "--user", "alice", "--yes", "--json"]) == 0
    counts = json.loads(capsys.readouterr().out)
    assert (counts["sessions"], counts["turns"], counts["documents"]) == (2, 2, 2)
    store = _store(url)
    assert store.list_sessions("alice") == [] and store.count_turns("bob", "s1") == 1
    store.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("store.sqlite3*"))
    assert CANARY.encode() not in raw


def test_forget_one_session(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    _fill(url)
    assert main(["forget", "--store", url, "--user", "alice", "--session", "s1", "--yes"]) == 0
    assert "1 session(s), 1 turn(s), 1 document(s)" in capsys.readouterr().out
    store = _store(url)
    assert store.list_sessions("alice") == ["s2"]
    assert store.get(("entities", "alice"), "state") is not None
    store.close()


def test_forget_without_yes_and_without_a_terminal_refuses(
    url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(url)
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    assert main(["forget", "--store", url, "--user", "alice"]) == 1
    assert "pass --yes" in capsys.readouterr().err
    store = _store(url)
    assert store.list_sessions("alice") == ["s1", "s2"]
    store.close()


@pytest.mark.parametrize("command", ["forget", "export"])
@pytest.mark.parametrize("user", ["", "a b", "x" * 65, "'; DROP TABLE mc_turns;--"])
def test_bad_user_is_a_clear_error(
    url: str, command: str, user: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _fill(url)
    extra = ["--yes"] if command == "forget" else []
    assert main([command, "--store", url, "--user", user, *extra]) == 1
    err = capsys.readouterr().err
    assert "--user=" in err and "1-64 characters" in err
    store = _store(url)
    assert store.list_sessions("alice") == ["s1", "s2"]
    store.close()


def test_sessions_list_merge_end_purge(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    _fill(url)
    assert main(["sessions", "list", "--store", url, "--user", "alice", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["sessions"]
    assert sorted(s["session_id"] for s in listed) == ["s1", "s2"]

    assert (
        main(["sessions", "merge", "--store", url, "--user", "alice", "s1", "s2", "--into", "all"])
        == 0
    )
    assert "into all (2 turns)" in capsys.readouterr().out
    store = _store(url)
    assert store.turns_after("alice", "all")[0].human == f"my IBAN {CANARY}"
    store.close()

    assert main(["sessions", "end", "--store", url, "--user", "alice", "all"]) == 0
    assert main(["sessions", "list", "--store", url, "--user", "alice"]) == 0
    out = capsys.readouterr().out
    assert "all  ended" in out and "2 turns" in out

    store = _store(url)  # a session last active two days ago
    SessionManager(store, clock=lambda: time.time() - 48 * 3600).create("alice", session_id="old")
    store.close()
    assert main(["sessions", "purge", "--store", url, "--json"]) == 0
    # only "old" is idle for more than 24 h: "all" (ended) and the tombstones are recent
    assert json.loads(capsys.readouterr().out) == {"purged": 1}
    store = _store(url)
    manager = SessionManager(store)
    assert manager.get("alice", "old") is None and manager.get("alice", "all") is not None
    store.close()


def test_sessions_merge_of_an_unknown_session_is_an_error(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _fill(url)
    assert main(["sessions", "merge", "--store", url, "--user", "alice", "s1", "ghost"]) == 1
    assert "no session 'ghost'" in capsys.readouterr().err


# -- chat --store/--user/--session -------------------------------------------------------


@pytest.fixture
def fake_models(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[list[str]]:
    """The chat command with a scripted model and hashing embeddings; returns the prompts."""
    from memory_chains.testing import HashEmbeddings, ScriptedChatModel

    prompts: list[list[str]] = []

    def reply(messages: list) -> str:  # type: ignore[type-arg]
        prompts.append([str(m.content) for m in messages])
        return "Réponse scriptée."

    model = ScriptedChatModel(default="", replies=[reply] * 20)
    monkeypatch.setenv("MEMORY_CHAINS_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("MEMORY_CHAINS_STORE", raising=False)
    monkeypatch.setattr("memory_chains.providers.get_chat_model", lambda *a, **k: model)
    monkeypatch.setattr("memory_chains.providers.get_embeddings", lambda *a, **k: HashEmbeddings())
    return prompts


def test_chat_once_persists_in_the_store_and_resumes_the_session(
    url: str, fake_models: list[list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["chat", "--store", url, "--user", "alice", "--no-stream", "--once"]
    assert main([*base, "Quels sont les horaires du Pilates ?"]) == 0
    first_err = capsys.readouterr().err
    assert "user alice, session s-" in first_err and "(new)" in first_err
    assert main([*base, "Et le samedi ?"]) == 0
    assert "1 earlier exchange(s)" in capsys.readouterr().err

    store = _store(url)
    (session,) = store.list_sessions("alice")
    assert [t.human for t in store.turns_after("alice", session)] == [
        "Quels sont les horaires du Pilates ?",
        "Et le samedi ?",
    ]
    manager = SessionManager(store)
    assert manager.latest("alice").session_id == session  # type: ignore[union-attr]
    store.close()
    # the second run's model calls saw the first exchange
    assert any("Pilates" in " ".join(p) for p in fake_models[1:])


def test_chat_explicit_session_and_default_user(
    tmp_path: Path, fake_models: list[list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["chat", "--session", "kiosk", "--no-stream", "--once", "Bonjour"]) == 0
    store = open_store(f"sqlite:///{tmp_path / 'home' / 'memory.sqlite3'}")
    assert store.count_turns("default", "kiosk") == 1
    assert SessionManager(store).get("default", "kiosk") is not None
    store.close()


def test_chat_without_store_options_keeps_memory_in_the_process(
    tmp_path: Path, fake_models: list[list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["chat", "--no-stream", "--once", "Bonjour"]) == 0
    assert "this process only" in capsys.readouterr().err
    assert not (tmp_path / "home" / "memory.sqlite3").exists()


def test_chat_bad_session_is_a_clear_error(
    url: str, fake_models: list[list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["chat", "--store", url, "--session", "a b", "--once", "x"]) == 1
    assert "--session='a b' is invalid" in capsys.readouterr().err


def test_interactive_chat_persists_and_forget_clears_the_session(
    url: str,
    fake_models: list[list[str]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lines = iter(["Bonjour", "/memory", "/forget", "Encore", "/quit"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(lines))
    assert main(["chat", "--store", url, "--user", "alice", "--session", "s9", "--no-stream"]) == 0
    assert "👤 Bonjour" in capsys.readouterr().out
    store = _store(url)
    assert [t.human for t in store.turns_after("alice", "s9")] == ["Encore"]
    store.close()
