"""``memory-chains chat --store --user --once`` with the real embedded model: a follow-up
asked in a second invocation is understood thanks to the session persisted by the first."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_chains.cli import main
from memory_chains.sessions import SessionManager
from memory_chains.stores import open_store

pytestmark = pytest.mark.integration


def test_second_invocation_resumes_the_session_and_rewrites_the_follow_up(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'chat.sqlite3'}"
    base = ["chat", "--store", url, "--user", "alice", "--no-stream", "--once"]
    assert main([*base, "Quels sont les horaires du cours de Pilates ?"]) == 0
    assert "(new)" in capsys.readouterr().err

    assert main([*base, "Et pour le samedi ?"]) == 0
    captured = capsys.readouterr()
    assert "1 earlier exchange(s)" in captured.err
    rewritten = next(line for line in captured.out.splitlines() if "question réécrite" in line)
    assert "pilates" in rewritten.lower()

    store = open_store(url)
    session = SessionManager(store).latest("alice")
    assert session is not None
    assert store.count_turns("alice", session.session_id) == 2
    store.close()
