"""The runnable examples of the user documentation in ``docs/``: every ``python`` block runs
as it is, and each ``# expected`` comment under a ``print`` is what it prints.

A block fenced ```` ```python no-run ```` (it needs OpenAI, a server or the embedded model)
is shown to readers but not run here.

Cost: a few seconds (imports included); no model, no network.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = (
    "privacy-and-forget.md",
    "stores-and-sessions.md",
    "rewriting.md",
    "memories.md",
    "longterm-and-recall.md",
    "langchain-v1.md",
    "evaluation.md",
    "architecture.md",
)
# A fence opening ```python, then an optional info string on the same line, then the code up
# to the closing fence. Blocks whose info string holds ``no-run`` are not collected.
BLOCK_RE = re.compile(r"^```python(?P<info>[ \t][^\n]*)?\n(?P<code>.*?)^```", re.S | re.M)


def _runnable(text: str) -> list[str]:
    return [
        m.group("code")
        for m in BLOCK_RE.finditer(text)
        if "no-run" not in (m.group("info") or "").split()
    ]


def _blocks() -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        for n, block in enumerate(_runnable((DOCS / page).read_text(encoding="utf-8"))):
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


def test_no_run_blocks_are_skipped_and_plain_ones_collected() -> None:
    text = (
        "```python\nprint(1)\n```\n\n"
        "```python no-run\nimport openai\n```\n\n"
        "```bash\nls\n```\n\n"
        "```python\nprint(2)\n```\n"
    )
    assert _runnable(text) == ["print(1)\n", "print(2)\n"]


def test_every_page_has_a_runnable_example() -> None:
    pages = {where.split("#")[0] for where, _ in _blocks()}
    assert pages == set(PAGES)


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
