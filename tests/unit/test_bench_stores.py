"""``memory-chains bench stores`` on a SQLite file (servers: skipped when not given)."""

from __future__ import annotations

import json

import pytest

from memory_chains.cli import main


def test_bench_stores_sqlite_checks_and_reports(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["bench", "stores", "--processes", "2", "--turns", "15", "--sessions", "4"]
    argv += ["--backends", "sqlite,redis", "--redis-url", "redis://127.0.0.1:1/0", "--json"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    report = json.loads(out.strip().splitlines()[-1])
    sqlite, redis = report["results"]
    assert sqlite["backend"] == "sqlite" and sqlite["ok"] is True
    assert (sqlite["turns"], sqlite["lost"], sqlite["duplicated"], sqlite["partial"]) == (
        30,
        0,
        0,
        0,
    )
    assert sqlite["turns_per_s"] > 0 and 0 < sqlite["p50_ms"] <= sqlite["p95_ms"]
    assert redis["skipped"].startswith("unreachable") and "redis    " in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--processes", "0"], "--processes"),
        (["--backends", "sqlite,mongo"], "mongo"),
    ],
)
def test_bench_stores_rejects_bad_options(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bench", "stores", *argv]) == 1
    assert message in capsys.readouterr().err
