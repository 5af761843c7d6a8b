"""One worker thread that processes queued turns off the reply's path: :class:`BackgroundWorker`.

Used by :class:`~memory_chains.longterm.LongTermMemory` and
:class:`~memory_chains.longterm.MemoryUpdater` (``observe_in_background`` / ``flush`` /
``close``): a failure is logged, kept in :attr:`BackgroundWorker.errors` and raised by the
next :meth:`~BackgroundWorker.flush`, never dropped.

Example:
    >>> seen = []
    >>> worker = BackgroundWorker(seen.append, name="demo", what="item")
    >>> worker.submit(1); worker.submit(2)
    >>> worker.flush(), seen
    (2, [1, 2])
    >>> worker.close()
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = ["BackgroundWorker", "WithBackground"]

log = logging.getLogger("memory_chains.longterm")

T = TypeVar("T")


class BackgroundWorker(Generic[T]):
    """A daemon thread that calls ``process`` on each submitted item, in order.

    Args:
        process: what to do with one item; an exception is kept, not raised there.
        name: the thread's name.
        what: how items are called in messages ("long-term observation").
        describe: a note added to a failure, naming the item.

    Example:
        >>> def fail(item: int) -> None:
        ...     raise ValueError(item)
        >>> worker = BackgroundWorker(fail, name="demo", what="item")
        >>> worker.submit(7)
        >>> try:
        ...     worker.flush()
        ... except ValueError as exc:
        ...     print("raised", exc, "| kept", len(worker.errors))
        raised 7 | kept 1
        >>> worker.close()
    """

    def __init__(
        self,
        process: Callable[[T], None],
        *,
        name: str,
        what: str,
        describe: Callable[[T], str] = repr,
    ) -> None:
        self.errors: list[BaseException] = []
        self._process = process
        self._name = name
        self._what = what
        self._describe = describe
        self._idle = threading.Condition()
        self._pending = 0
        self._reported = 0
        self._processed = 0
        self._queue: queue.Queue[tuple[T] | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._closed: threading.Thread | None = None  # the thread close() last stopped

    def submit(self, item: T) -> None:
        """Queue ``item``; the thread starts on first use (and again after :meth:`close`)."""
        with self._idle:  # the item goes to the queue of the thread that will run it
            self._pending += 1
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run,
                    args=(self._queue, self._closed),
                    name=self._name,
                    daemon=True,
                )
                self._thread.start()
            self._queue.put((item,))

    def _run(self, items: queue.Queue[tuple[T] | None], previous: threading.Thread | None) -> None:
        if previous is not None:
            previous.join()  # a closing thread finishes its items first: order is kept
        while True:
            boxed = items.get()
            if boxed is None:
                return
            failure: Exception | None = None
            try:
                self._process(boxed[0])
            except Exception as exc:  # kept for flush()/errors, never dropped
                log.warning("background %s failed: %r", self._what, exc)
                exc.add_note(f"processing {self._describe(boxed[0])}")
                failure = exc
            finally:
                with self._idle:
                    if failure is not None:
                        self.errors.append(failure)
                    self._pending -= 1
                    self._processed += 1
                    self._idle.notify_all()

    @property
    def last_error(self) -> BaseException | None:
        """The most recent failure, or ``None``."""
        return self.errors[-1] if self.errors else None

    def flush(self, timeout: float | None = None) -> int:
        """Wait until every queued item is processed; return how many were processed so far.

        Raises:
            TimeoutError: still busy after ``timeout`` seconds.
            Exception: the first failure not yet raised by a previous ``flush`` (all
                failures stay in :attr:`errors`).
        """
        with self._idle:
            if not self._idle.wait_for(lambda: self._pending == 0, timeout):
                raise TimeoutError(
                    f"{self._pending} {self._what}(s) still queued after {timeout} s: "
                    "call flush() again or raise the timeout"
                )
            new = self.errors[self._reported :]
            self._reported = len(self.errors)
            processed = self._processed
        if new:
            raise new[0]
        return processed

    def close(self, timeout: float | None = None) -> None:
        """Process what is queued, then stop the thread (errors stay in :attr:`errors`).

        An item submitted while this waits goes to a new thread and queue, not behind the
        stop marker (where it would never be processed and ``flush`` would hang); that
        thread starts on it once this one is done, so items keep their order.
        """
        with self._idle:
            thread, items = self._thread, self._queue
            self._thread, self._queue, self._closed = None, queue.Queue(), thread
        if thread is not None and thread.is_alive():
            items.put(None)
            thread.join(timeout)


class WithBackground:
    """Mixin: ``errors`` / ``last_error`` / ``flush`` / ``close`` of a ``_background`` worker.

    Example:
        >>> class Demo(WithBackground):
        ...     def __init__(self) -> None:
        ...         self._background = BackgroundWorker(print, name="demo", what="item")
        >>> d = Demo(); d._background.submit("hi"); d.flush(); d.close()
        hi
        1
    """

    _background: BackgroundWorker[Any]

    @property
    def errors(self) -> list[BaseException]:
        """Background failures, oldest first (each also raised once by :meth:`flush`)."""
        return self._background.errors

    @property
    def last_error(self) -> BaseException | None:
        """The most recent background failure, or ``None``."""
        return self._background.last_error

    def flush(self, timeout: float | None = None) -> int:
        """Wait until every queued turn is processed.

        Returns:
            How many turns the worker has processed since this object was created.

        Raises:
            TimeoutError: still busy after ``timeout`` seconds.
            MemoryChainsError: the first background failure not yet raised by a previous
                ``flush`` (all failures stay in :attr:`errors`).
        """
        return self._background.flush(timeout)

    def close(self, timeout: float | None = None) -> None:
        """Process what is queued, then stop the worker thread (errors stay in :attr:`errors`)."""
        self._background.close(timeout)
