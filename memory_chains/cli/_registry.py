"""Registering subcommand modules that may or may not be installed yet."""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import Any


def register_modules(sub: Any, module_names: Iterable[str]) -> None:
    """Import each module and call its ``register(sub)``; skip modules that do not exist.

    Only the absence of the module itself is tolerated: an import error *inside* a module
    is a bug and propagates.
    """
    for name in module_names:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        module.register(sub)
