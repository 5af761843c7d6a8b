"""The runnable examples in the docstrings of the entity memory modules."""

from __future__ import annotations

import doctest
import importlib
import logging

import pytest

MODULES = [
    "memory_chains.entities",
    "memory_chains.entities._context",
    "memory_chains.entities._eval",
    "memory_chains.entities._fold",
    "memory_chains.entities._langchain",
    "memory_chains.entities._llm",
    "memory_chains.entities._repair",
    "memory_chains.entities._resolve",
    "memory_chains.entities._rules",
    "memory_chains.entities._state",
    "memory_chains.entities._tracker",
    "memory_chains.entities._types",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    logging.getLogger("memory_chains.entities").disabled = True  # failure examples log
    try:
        result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    finally:
        logging.getLogger("memory_chains.entities").disabled = False
    assert result.attempted > 0
    assert result.failed == 0
