"""``memory-chains bench memory`` on a short run: JSON contract and sanity of the figures."""

from __future__ import annotations

import json

import pytest

from memory_chains.cli import main


def test_bench_memory_json_last_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "memory", "--turns", "60", "--json"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    report = json.loads(last)
    assert report["turns"] == 60
    by_name = {r["name"]: r for r in report["results"]}
    assert {r["kind"] for r in report["results"]} == {"ours", "anchor"}
    for r in report["results"]:
        assert set(r) >= {
            "name",
            "kind",
            "ms_per_turn_last100",
            "prompt_tokens_last",
            "llm_calls_per_turn",
        }
        assert r["ms_per_turn_last100"] > 0
    full = by_name["ours_buffer_sqlite"]["prompt_tokens_last"]
    assert full == by_name["lc_buffer_sqlhistory"]["prompt_tokens_last"]  # same dialogue
    for name in ("ours_window5_sqlite", "ours_token1000_sqlite", "ours_summary_sqlite"):
        assert by_name[name]["prompt_tokens_last"] < full
    assert by_name["ours_token1000_sqlite"]["prompt_tokens_last"] <= 1000
    assert by_name["ours_window5_sqlite"]["llm_calls_per_turn"] == 0
    assert 0 < by_name["ours_summary_sqlite"]["llm_calls_per_turn"] < 0.5


def test_bench_memory_rejects_bad_turns(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "memory", "--turns", "0"]) == 1
    assert "--turns" in capsys.readouterr().err
