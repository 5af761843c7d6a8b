"""Long-term memory over a real SQLite file: a returning user, other processes, forgetting.

No model here (the rule extractor and hash embeddings): what is tested is persistence,
scoping and erasure on disk.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memory_chains.longterm import LongTermMemory
from memory_chains.stores import export_user, forget_user, open_store
from memory_chains.testing import HashEmbeddings

pytestmark = pytest.mark.integration


def _disk_bytes(path: Path) -> bytes:
    files = [p for p in path.parent.iterdir() if p.name.startswith(path.name)]  # db, -wal, -shm
    return b"".join(p.read_bytes() for p in files)


def _python(code: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_returning_user_in_another_process_gets_profile_and_facts(tmp_path: Path) -> None:
    path = tmp_path / "lt.sqlite3"
    _python(
        f"""
        from memory_chains.longterm import LongTermMemory
        from memory_chains.stores import open_store
        from memory_chains.testing import HashEmbeddings
        mem = LongTermMemory(open_store("sqlite:///{path}"), "camille", HashEmbeddings())
        mem.observe("Je m'appelle Camille et je préfère le Pilates le samedi matin.",
                    "Noté !", session_id="mon-1", seq=1)
        mem.observe("Je suis débutante.", session_id="mon-1", seq=2)
        """
    )
    store = open_store(f"sqlite:///{path}")
    mem = LongTermMemory(store, "camille", HashEmbeddings())
    ctx = mem.context("Quel cours de Pilates le samedi ?", max_tokens=200)
    assert "- technical_level: beginner" in ctx
    assert "L'utilisateur préfère le Pilates le samedi matin." in ctx
    assert LongTermMemory(store, "other", HashEmbeddings()).context("Pilates", max_tokens=200) == ""
    store.close()


def test_forget_user_leaves_nothing_on_disk(tmp_path: Path) -> None:
    path = tmp_path / "forget.sqlite3"
    store = open_store(f"sqlite:///{path}")
    mem = LongTermMemory(store, "zoe", HashEmbeddings())
    keep = LongTermMemory(store, "yann", HashEmbeddings())
    mem.observe("Je m'appelle Zoephira et mon adresse est 9 impasse Quetzal.", session_id="s1")
    mem.observe("Mon adresse est 4 allée Xylophage.", session_id="s2")  # supersedes
    mem.observe_in_background("Je préfère le Kitesurf zanzibarien.", session_id="s2")
    mem.flush(timeout=30)
    mem.close()
    keep.observe("Je m'appelle Yann.", session_id="s1")
    assert len(mem.facts(include_superseded=True)) == 4
    exported = export_user(store, "zoe")
    namespaces = {tuple(d["namespace"]) for d in exported["documents"]}
    assert namespaces == {("facts", "zoe"), ("profile", "zoe")}
    assert all(d["value"]["vector"] for d in exported["documents"] if d["namespace"][0] == "facts")

    result = forget_user(store, "zoe")
    assert result.documents == len(exported["documents"])
    store.close()  # checkpoint the WAL: the file holds what is left
    raw = _disk_bytes(path)
    for word in (b"Zoephira", b"Quetzal", b"Xylophage", b"zanzibarien"):
        assert word not in raw, word
    assert b"Yann" in raw  # the other user is untouched
    reopened = open_store(f"sqlite:///{path}")
    assert LongTermMemory(reopened, "zoe", HashEmbeddings()).facts(include_superseded=True) == []
    assert len(LongTermMemory(reopened, "yann", HashEmbeddings()).facts()) == 1
    reopened.close()
