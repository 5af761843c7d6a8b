"""Names a package exports but imports only when first used (PEP 562).

A package whose shells need LangChain's classic package, or whose top level should import
fast, lists those names and the module each comes from; :func:`lazy_exports` gives it the
module-level ``__getattr__`` and ``__dir__`` that import them on first access and keep
them in the package's namespace.

Example:
    >>> namespace = {"__all__": ["dumps"]}
    >>> getattr_, dir_ = lazy_exports("pkg", {"dumps": "json"}, namespace)
    >>> getattr_("dumps").__module__, "dumps" in namespace
    ('json', True)
    >>> getattr_("loads")
    Traceback (most recent call last):
    ...
    AttributeError: module 'pkg' has no attribute 'loads'
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` for names imported on first use.

    Args:
        package: the package's name, for the error message.
        exports: each lazily exported name → the module that defines it.
        namespace: the package's ``globals()``; a name, once imported, is stored there so
            that ``__getattr__`` is not called for it again.
    """

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(namespace.get("__all__", ())))

    return __getattr__, __dir__
