"""Execute the notebooks in ``notebooks/`` top to bottom and save them with their outputs.

Usage::

    .venv/bin/python scripts/run_notebooks.py                 # all, in place
    .venv/bin/python scripts/run_notebooks.py notebooks/02_short_term_memories.ipynb
    .venv/bin/python scripts/run_notebooks.py --check         # execute, save nothing

Each notebook runs in a fresh ``python3`` kernel of this interpreter (run it with the
project's ``.venv/bin/python``), with ``notebooks/`` as working directory and this
process's environment (``MEMORY_CHAINS_HOME``, ``OPENAI_API_KEY``…). A notebook that
fails is not saved. Prints the seconds each notebook took; exits 1 if any failed.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"


def execute(path: Path, *, timeout: int = 1800, workdir: Path | None = None) -> Any:
    """Execute the notebook at ``path`` and return it (an ``nbformat`` node) with outputs.

    Raises:
        nbclient.exceptions.CellExecutionError: a cell raised; the message has the traceback.
        nbclient.exceptions.CellTimeoutError: a cell ran longer than ``timeout`` seconds.
    """
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        kernel_manager_class=_this_python_kernel_manager(),
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(workdir or path.parent)}},
    )
    client.execute()
    return nb


def _this_python_kernel_manager() -> type:
    """A kernel manager that only knows this interpreter's ``python3`` kernel spec.

    Its ``"python"`` argv is run with ``sys.executable``, so the notebooks use this
    environment; a user-level ``python3`` spec pointing at another Python is ignored.
    """
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import default

    class ThisPythonKernelManager(AsyncKernelManager):
        @default("kernel_spec_manager")
        def _only_this_python(self) -> KernelSpecManager:
            kernels = Path(sys.prefix) / "share" / "jupyter" / "kernels"
            return KernelSpecManager(kernel_dirs=[str(kernels)])

    return ThisPythonKernelManager


def text_outputs(nb: Any) -> str:
    """Every printed or displayed text of an executed notebook, in order."""
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                parts.append(out.get("text", ""))
            elif "data" in out:
                parts.append(out["data"].get("text/plain", ""))
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, help="notebooks (default: all)")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds per cell")
    parser.add_argument("--check", action="store_true", help="execute but do not save")
    args = parser.parse_args(argv)

    import nbformat

    paths = args.paths or sorted(NOTEBOOKS.glob("[0-9]*.ipynb"))
    failed = []
    total = 0.0
    for path in paths:
        started = time.perf_counter()
        try:
            nb = execute(path, timeout=args.timeout)
        except Exception as exc:  # report every notebook, then fail
            seconds = time.perf_counter() - started
            print(f"FAILED {path.name} after {seconds:.1f} s: {exc}", file=sys.stderr)
            failed.append(path.name)
            continue
        seconds = time.perf_counter() - started
        total += seconds
        if not args.check:
            nbformat.write(nb, path)
        print(f"{path.name:36} {seconds:7.1f} s", flush=True)
    print(f"{'total':36} {total:7.1f} s")
    if failed:
        print("failed: " + ", ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
