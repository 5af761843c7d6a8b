"""memory_chains: conversational memory for LangChain applications, offline by default.

Public names are imported lazily so that ``import memory_chains`` and the CLI's ``--help``
stay fast; see ``__all__`` for what is exported.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    "MemoryChainsError": "memory_chains.errors",
    "Settings": "memory_chains.config",
    "load_settings": "memory_chains.config",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'memory_chains' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
