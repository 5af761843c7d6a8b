"""The runnable examples in the docstrings of memory, stores and privacy modules."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "memory_chains.memory",
    "memory_chains.memory._core",
    "memory_chains.memory._text",
    "memory_chains.memory._summary",
    "memory_chains.memory._summary_data",
    "memory_chains.memory._langchain",
    "memory_chains.stores",
    "memory_chains.stores._base",
    "memory_chains.stores._memory",
    "memory_chains.stores._sqlite",
    "memory_chains.privacy",
    "memory_chains.privacy._pii",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
