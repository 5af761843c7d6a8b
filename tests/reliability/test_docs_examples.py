"""The runnable examples of ``docs/privacy-and-forget.md`` and ``docs/stores-and-sessions.md``:
every ``python`` block runs as it is, and each ``# expected`` comment under a ``print`` is
what it prints.

Cost: well under a second.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
BLOCK_RE = re.compile(r"```python\n(.*?)```", re.S)


def _blocks() -> list[tuple[str, str]]:
    found = []
    for page in ("privacy-and-forget.md", "stores-and-sessions.md", "rewriting.md"):
        for n, block in enumerate(BLOCK_RE.findall((DOCS / page).read_text(encoding="utf-8"))):
            found.append((f"{page}#{n}", block))
    return found


def _expected(code: str) -> list[str]:
    """The ``# …`` comment lines that directly follow a ``print(...)`` line."""
    lines = code.splitlines()
    wanted = []
    for before, line in itertools.pairwise(lines):
        if before.lstrip().startswith("print(") and line.lstrip().startswith("# "):
            wanted.append(line.lstrip()[2:])
    return wanted


@pytest.mark.parametrize(("where", "code"), _blocks(), ids=[w for w, _ in _blocks()])
def test_doc_example_runs_and_prints_what_it_says(
    where: str, code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORY_CHAINS_HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, where, "exec"), {"__name__": "__doc_example__"})
    printed = out.getvalue().splitlines()
    for line in _expected(code):
        assert line in printed, (where, line, printed)
