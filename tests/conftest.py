"""Suite-wide hooks: at the end of a run, say how to run the tests that were skipped for
want of a Redis or PostgreSQL server (``make test`` starts them when it can)."""

from __future__ import annotations

import pytest

_SERVER_VARIABLES = ("MEMORY_CHAINS_TEST_REDIS_URL", "MEMORY_CHAINS_TEST_POSTGRES_URL")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    skipped = terminalreporter.stats.get("skipped", [])
    waiting = [
        report
        for report in skipped
        if any(name in str(getattr(report, "longrepr", "")) for name in _SERVER_VARIABLES)
    ]
    if waiting:
        terminalreporter.write_line(
            f"{len(waiting)} tests need a Redis or PostgreSQL server and were skipped; to run "
            "them: bash scripts/ci_services.sh (installs redis-server and postgresql when run "
            "as root), then make test",
            yellow=True,
        )
