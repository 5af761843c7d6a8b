"""Core modules never import evaluation or CLI code (the runtime package is the product).

Read from the source with :mod:`ast`, so a lazy import inside a function counts too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import memory_chains

PACKAGE = Path(memory_chains.__file__).resolve().parent
OUTER = ("memory_chains.evaluation", "memory_chains.cli")


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _core_modules() -> list[Path]:
    outer_dirs = {PACKAGE / "evaluation", PACKAGE / "cli"}
    return [
        p
        for p in sorted(PACKAGE.rglob("*.py"))
        if not any(d in p.parents for d in outer_dirs) and p.name != "__main__.py"
    ]


def test_no_core_module_imports_evaluation_or_cli() -> None:
    offenders = {
        str(path.relative_to(PACKAGE)): sorted(
            name for name in _imports(path) if name.startswith(OUTER)
        )
        for path in _core_modules()
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_check_sees_a_lazy_import(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from memory_chains.evaluation import metrics\n")
    assert "memory_chains.evaluation" in _imports(module)


def _private_across(relative: Path, imports: set[str]) -> list[str]:
    """The ``memory_chains.<other package>._name`` imports among a module's ``imports``."""
    parts = relative.parts
    own = parts[0] if len(parts) > 1 else None
    return sorted(
        name
        for name in imports
        if (names := name.split("."))[0] == "memory_chains"
        and len(names) >= 3
        and names[1] != own
        and names[2].startswith("_")
    )


def _private_imports_across_packages(path: Path) -> list[str]:
    """``memory_chains.<other package>._name`` imports of a module of one package."""
    return _private_across(path.relative_to(PACKAGE), _imports(path))


def test_packages_use_each_other_through_their_public_names() -> None:
    # The kernel (memory_chains._folding, _history, _json…) is shared on purpose; a
    # package's own private modules are not, not even for the CLI, which wires everything.
    offenders = {
        str(path.relative_to(PACKAGE)): found
        for path in sorted(PACKAGE.rglob("*.py"))
        if (found := _private_imports_across_packages(path))
    }
    assert offenders == {}


def test_the_check_sees_a_private_import_from_another_package() -> None:
    imports = {"memory_chains.rewrite._rules", "memory_chains.cli._eval", "memory_chains._json"}
    assert _private_across(Path("cli/_eval_rewrite.py"), imports) == [
        "memory_chains.rewrite._rules"
    ]
    assert _private_across(Path("rewrite/_rewriter.py"), imports) == ["memory_chains.cli._eval"]


MEMORIES = ("memory_chains.entities", "memory_chains.longterm", "memory_chains.recall")


def test_the_builder_and_the_adapters_read_memories_through_the_protocol_only() -> None:
    """The context builder imports no memory package, the 1.x adapters only the short-term
    memory's type (for its session and turn numbers)."""
    readers = [*(PACKAGE / "context").glob("*.py"), *(PACKAGE / "langchain_v1").glob("*.py")]
    offenders = {
        str(path.relative_to(PACKAGE)): sorted(
            name
            for name in _imports(path)
            if name.startswith(MEMORIES)
            or (name.startswith("memory_chains.memory") and path.parent.name == "context")
        )
        for path in readers
    }
    assert {k: v for k, v in offenders.items() if v} == {}
