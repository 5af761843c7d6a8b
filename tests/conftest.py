"""Suite-wide hooks: at the end of a run, say how to run the tests that were skipped for
want of a Redis or PostgreSQL server (``make test`` starts them when it can)."""

from __future__ import annotations

import pytest

_SERVER_VARIABLES = ("MEMORY_CHAINS_TEST_REDIS_URL", "MEMORY_CHAINS_TEST_POSTGRES_URL")


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """After pytest's own summary line, so that it is the last thing printed."""
    terminalreporter = config.pluginmanager.get_plugin("terminalreporter")
    if terminalreporter is None:
        return
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
