"""The five notebooks, executed top to bottom on the embedded default (issue #7).

Each notebook is copied to a temporary directory and run there in a fresh ``python3``
kernel of this interpreter (nbclient), with the test process's environment; the saved
notebooks in ``notebooks/`` are left untouched (``scripts/run_notebooks.py`` refreshes
them). Beyond "no cell raised", each test checks a few outputs that show the notebook
did its job.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
CELL_TIMEOUT = 1800  # seconds per cell: generous, the machine may be shared

pytest.importorskip("nbclient", reason="notebook tests need the dev extra (nbclient)")


def _runner() -> Any:
    spec = importlib.util.spec_from_file_location(
        "run_notebooks", ROOT / "scripts" / "run_notebooks.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RUNNER = _runner()


def run(name: str, tmp_path: Path) -> tuple[Any, str]:
    """Execute a copy of ``notebooks/<name>``; return the notebook and its text outputs."""
    copy = tmp_path / name
    shutil.copy(ROOT / "notebooks" / name, copy)
    nb = RUNNER.execute(copy, timeout=CELL_TIMEOUT, workdir=tmp_path)
    return nb, RUNNER.text_outputs(nb)


def images(nb: Any) -> int:
    return sum(
        "image/png" in out.get("data", {}) for cell in nb.cells for out in cell.get("outputs", [])
    )


def test_01_quickstart_follow_up_answer_names_the_gpu(tmp_path: Path) -> None:
    _, text = run("01_quickstart.ipynb", tmp_path)
    with_memory = text.split("👤 Et la carte graphique ?", 1)[1]
    rewritten = re.search(r"rewritten: (.*)", with_memory)
    assert rewritten and re.search(r"(?i)asus|rog|strix|g15", rewritten.group(1))
    assert re.search(r"(?i)rtx\s*4060|geforce", with_memory), with_memory
    assert "asus_rog_strix_g15.md" in with_memory


def test_02_short_term_memories_plot_and_what_they_keep(tmp_path: Path) -> None:
    nb, text = run("02_short_term_memories.ipynb", tmp_path)
    assert images(nb) == 1
    assert "50 turns" in text
    keeps = dict(
        re.findall(
            r"^(buffer|window \(k=5\)|token budget \(300\)|summary)\s.*\s(True|False)$",
            text,
            re.MULTILINE,
        )
    )
    assert keeps == {
        "buffer": "True",
        "window (k=5)": "False",
        "token budget (300)": "False",
        "summary": "True",
    }
    assert re.search(r"topic_coherence\s+0\.\d+", text)
    assert re.search(r"clarification_requests\s+[1-9]", text)


def test_03_entity_memory_resolves_references_and_draws_relations(tmp_path: Path) -> None:
    nb, text = run("03_entity_memory.ipynb", tmp_path)
    assert images(nb) == 1
    assert re.search(r"'sa' -> Dell XPS 15", text)
    assert re.search(r"'celui de Lenovo'\s+-> Lenovo ThinkPad", text)
    assert "('entities', 'claire')" in text


def test_04_long_term_memory_returning_user_export_and_forget(tmp_path: Path) -> None:
    _, text = run("04_long_term_memory.ipynb", tmp_path)
    assert "Known facts about the user:" in text
    assert re.search(r"turns_with_memory\s+1", text)
    assert "sessions: [('monday', 2), ('week-2', 1)]" in text
    assert "after forget: 0 sessions, 0 documents; facts recalled: 0" in text


def test_05_langchain_1x_agent_and_lcel_share_one_memory(tmp_path: Path) -> None:
    _, text = run("05_langchain_1x.ipynb", tmp_path)
    rewritten = re.search(r"rewritten: (.*)", text)
    assert rewritten and re.search(r"(?i)pilates", rewritten.group(1))
    assert "salle_de_sport/pilates.md" in text
    assert "[1, 2]" in text
