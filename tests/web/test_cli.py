"""``memory-chains serve`` and ``memory-chains bench serve`` from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_chains.cli import build_parser, main


def test_serve_has_the_documented_options() -> None:
    args = build_parser().parse_args(["serve"])
    assert (args.host, args.port, args.docs, args.store) == ("127.0.0.1", 8000, None, None)
    args = build_parser().parse_args(
        ["serve", "--docs", "kb", "--store", "sqlite:///m.db", "--port", "9000"]
    )
    assert (args.docs, args.store, args.port) == (Path("kb"), "sqlite:///m.db", 9000)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["serve", "--port", "0"], "--port must be between 1 and 65535"),
        (["bench", "serve", "--sessions", "0"], "--sessions must be at least 1"),
    ],
)
def test_bad_options_are_refused_before_anything_starts(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 1
    assert message in capsys.readouterr().err


def test_serve_refuses_a_docs_path_that_is_not_a_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import memory_chains.cli._serve as serve

    monkeypatch.setattr("memory_chains.providers.get_chat_model", lambda *a, **k: None)
    monkeypatch.setattr("memory_chains.providers.get_embeddings", lambda *a, **k: None)
    missing = tmp_path / "nope"
    store = f"sqlite:///{tmp_path / 'm.sqlite3'}"
    assert main(["serve", "--docs", str(missing), "--store", store]) == 1
    assert f"{missing} is not a folder" in capsys.readouterr().err
    assert serve.register  # the module is the command's


def test_bench_serve_runs_sessions_against_a_real_server_and_checks_the_store(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["bench", "serve", "--sessions", "3", "--turns", "2", "--users", "2", "--json"]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert report["requests"] == 6 and report["ok"]
    assert report["lost"] == report["duplicated"] == report["reordered"] == 0
    assert report["mismatched_answers"] == 0 and report["failed"] == 0
    assert report["memory_work_p95_ms"] > 0 and report["anchor_in_process_p95_ms"] > 0
    assert set(report["stages_p95_ms"]) == {"session", "load", "save"}
