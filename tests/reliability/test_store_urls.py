"""Where a store is opened, and what a mistyped one does (findings 2 and 3 of issue #21).

* ``MEMORY_CHAINS_HOME`` went into the default store URL unescaped and the URL was then
  percent-decoded: a home with a ``%2e%2e`` segment put the store outside it. The default
  store is now opened as a path, and ``default_store_url`` is percent-encoded.
* A typo in ``--store`` created directories and an empty database, and ``forget --yes``
  then said "erased 0" with exit code 0. Now every command that needs an existing store
  exits 1 with "no store at …; check --store", and creates nothing; the same refusal on
  Redis (an unused prefix) and PostgreSQL (a missing schema) through ``open_store``.
* Control characters in a URL (a NUL reached ``sqlite3`` as a raw ``ValueError``) are a
  :class:`ConfigurationError`.

Cost: under a second (SQLite), plus a few round trips per server.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_chains.cli import main
from memory_chains.config import Settings, load_settings
from memory_chains.errors import ConfigurationError
from memory_chains.evaluation.loadgen import StoreTarget
from memory_chains.stores import open_store

from ._backends import SERVER_BACKENDS, new_target, open_target


def test_a_home_with_percent_signs_keeps_the_store_inside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "outer" / "%2e%2e"
    monkeypatch.setenv("MEMORY_CHAINS_HOME", str(home))
    monkeypatch.delenv("MEMORY_CHAINS_STORE", raising=False)
    store = open_store()
    store.append_turn("alice", "s1", "Bonjour", "Salut")
    store.close()
    assert (home / "memory.sqlite3").is_file()
    assert not (tmp_path / "memory.sqlite3").exists()  # where "outer/%2e%2e/.." points
    assert not (tmp_path / "outer" / "memory.sqlite3").exists()
    # the URL form decodes back to the very same file
    url = load_settings().default_store_url
    assert "%252e%252e" in url
    reopened = open_store(url, read_only=True)
    assert reopened.count_turns("alice", "s1") == 1
    reopened.close()


def test_default_store_url_round_trips_any_home() -> None:
    for name in ("a b", "100%", "%2e%2e", "é#?&", "x%00y"):
        settings = Settings(home=Path("/srv") / name)
        store = open_store(settings.default_store_url, setup=False)
        assert store.path == str(settings.default_store_path)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "argv",
    [
        ["forget", "--yes", "--user", "alice"],
        ["forget", "--yes", "--user", "alice", "--session", "s1"],
        ["export", "--user", "alice"],
        ["sessions", "list", "--user", "alice"],
        ["sessions", "end", "--user", "alice", "s1"],
        ["sessions", "purge"],
        ["metrics", "--user", "alice", "--session", "s1", "--no-coherence"],
    ],
    ids=lambda a: "-".join(a[:2]),
)
def test_a_mistyped_store_is_an_error_and_creates_nothing(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    typo = tmp_path / "stroe" / "memory.sqlite3"
    assert main([*argv, "--store", f"sqlite:///{typo}"]) == 1
    err = capsys.readouterr().err
    assert "no store at" in err and str(typo) in err and "check --store" in err
    assert "erased" not in err
    assert not (tmp_path / "stroe").exists()


def test_a_missing_default_store_names_the_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MEMORY_CHAINS_HOME", str(tmp_path / "nohome"))
    monkeypatch.delenv("MEMORY_CHAINS_STORE", raising=False)
    assert main(["export", "--user", "alice"]) == 1
    assert "MEMORY_CHAINS_HOME" in capsys.readouterr().err
    assert not (tmp_path / "nohome").exists()


@pytest.mark.parametrize("kind", SERVER_BACKENDS)
def test_a_missing_server_store_is_refused_and_not_created(kind: str, tmp_path: Path) -> None:
    from memory_chains.errors import StoreNotFoundError  # new in this version

    target: StoreTarget = new_target(kind, tmp_path)
    try:
        store = open_target(target, read_only=True)
        with pytest.raises(StoreNotFoundError, match="no store"):
            store.setup()
        store.close()
        probe = open_target(target)
        assert not probe.exists()  # the read-only attempt created nothing
        probe.setup()
        assert probe.exists()
        probe.close()
    finally:
        target.destroy()


@pytest.mark.parametrize(
    "url",
    [
        "sqlite:///tmp/a\x00b.sqlite3",
        "sqlite:///tmp/a\nb.sqlite3",
        "redis://127.0.0.1:6390/0\x00",
        "postgresql://postgres@127.0.0.1/db\x00",
        "sqlite:///%00",
        "memory://\x1b",
    ],
)
def test_control_characters_in_a_url_are_a_configuration_error(url: str) -> None:
    with pytest.raises(ConfigurationError):
        open_store(url)


def test_a_nul_in_the_home_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="MEMORY_CHAINS_HOME"):
        Settings.from_env({"MEMORY_CHAINS_HOME": "/tmp/a\x00b"})
