"""Helpers for the tests that race threads against one memory object.

Example:
    >>> seen = []
    >>> with switching_often():
    ...     run_together(lambda: seen.append(1), lambda: seen.append(2))
    >>> sorted(seen)
    [1, 2]
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def switching_often() -> Iterator[None]:
    """Switch threads every 10 µs, so that a race shows up within a short test."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        yield
    finally:
        sys.setswitchinterval(previous)


def run_together(*steps: Callable[[], object]) -> None:
    """Run each step in its own thread, all released at once; wait for all of them."""
    barrier = threading.Barrier(len(steps))

    def run(step: Callable[[], object]) -> None:
        barrier.wait()
        step()

    threads = [threading.Thread(target=run, args=(step,)) for step in steps]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
