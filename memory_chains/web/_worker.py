"""One model, many requests: :class:`ModelWorker` runs answers one at a time, in order.

The embedded model uses both cores for one answer; two answers at once take twice as long
each, and ten thrash the machine. The worker admits a request only while its queue has
room (:meth:`ModelWorker.admit` raises :class:`~memory_chains.errors.ServiceBusyError`
otherwise, which the app turns into a 503 with ``Retry-After``), then runs the admitted
requests strictly one after the other, first come first served. A request cancelled while it
waits (the browser went away) leaves the queue without ever running.

Example:
    >>> import asyncio
    >>> async def main():
    ...     worker = ModelWorker(max_waiting=1)
    ...     ticket = worker.admit()
    ...     async with ticket:
    ...         busy = worker.running
    ...     return busy, worker.running, worker.waiting
    >>> asyncio.run(main())
    (True, False, 0)
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from types import TracebackType

from memory_chains.errors import InvalidInputError, ServiceBusyError

__all__ = ["ModelWorker", "Ticket"]

# Weight of the newest run in the moving mean of a run's duration (Retry-After).
_SMOOTHING = 0.2


class Ticket:
    """A place in the worker's queue; ``async with ticket:`` waits for the turn and runs.

    Releasing is idempotent: leaving the ``async with`` block, or :meth:`release` on a
    ticket that never ran, frees the place once.

    Example:
        >>> worker = ModelWorker(max_waiting=0)
        >>> ticket = worker.admit()
        >>> ticket.release(); ticket.release()
        >>> ticket.released, worker.running
        (True, False)
    """

    def __init__(self, worker: ModelWorker) -> None:
        self._worker = worker
        self._turn: asyncio.Future[None] | None = None
        self._started = 0.0
        self.released = False

    async def __aenter__(self) -> Ticket:
        await self._worker._wait_for_turn(self)
        self._started = time.perf_counter()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._worker._finished(time.perf_counter() - self._started)
        self.release()

    def release(self) -> None:
        """Give the place back (a no-op after the first call)."""
        if not self.released:
            self.released = True
            self._worker._release(self)


class ModelWorker:
    """A single-lane, bounded, first-come-first-served queue for model work.

    Args:
        max_waiting: admitted requests that may wait behind the running one; one more is
            refused with :class:`~memory_chains.errors.ServiceBusyError`.

    Attributes:
        running: True while a ticket holds the lane.
        waiting: tickets admitted and not yet running.
        refused: admissions refused so far.

    Example:
        >>> worker = ModelWorker(max_waiting=0)
        >>> running = worker.admit()
        >>> try:
        ...     worker.admit()
        ... except ServiceBusyError as busy:
        ...     print(busy.retry_after)
        1
    """

    def __init__(self, max_waiting: int = 16) -> None:
        if isinstance(max_waiting, bool) or not isinstance(max_waiting, int) or max_waiting < 0:
            raise InvalidInputError(f"max_waiting must be an integer >= 0, got {max_waiting!r}")
        self.max_waiting = max_waiting
        self.running = False
        self.refused = 0
        self._holder: Ticket | None = None
        self._queue: deque[Ticket] = deque()
        self._mean_seconds = 1.0
        self._runs = 0

    @property
    def waiting(self) -> int:
        """Admitted tickets not yet running."""
        return len(self._queue)

    def retry_after(self) -> int:
        """Seconds after which a refused client may try again (the queue's expected drain)."""
        return max(1, math.ceil(self._mean_seconds * (self.waiting + 1)))

    def admit(self) -> Ticket:
        """A ticket for one run, or :class:`ServiceBusyError` when the queue is full.

        Raises:
            ServiceBusyError: ``max_waiting`` tickets already wait; ``retry_after`` says
                when to come back.
        """
        busy = self.running or bool(self._queue)
        if busy and self.waiting >= self.max_waiting:
            self.refused += 1
            raise ServiceBusyError(
                f"the model is busy ({self.waiting} request(s) waiting): try again in "
                f"{self.retry_after()} s",
                retry_after=self.retry_after(),
            )
        ticket = Ticket(self)
        if busy:
            self._queue.append(ticket)
        else:
            self._holder, self.running = ticket, True
        return ticket

    async def _wait_for_turn(self, ticket: Ticket) -> None:
        if self._holder is ticket:
            return
        if ticket.released or ticket not in self._queue:
            raise InvalidInputError("this ticket was released: admit() a new one")
        ticket._turn = asyncio.get_running_loop().create_future()
        try:
            await ticket._turn
        except asyncio.CancelledError:
            ticket.release()
            raise

    def _finished(self, seconds: float) -> None:
        self._runs += 1
        weight = 1.0 if self._runs == 1 else _SMOOTHING
        self._mean_seconds += weight * (seconds - self._mean_seconds)

    def _release(self, ticket: Ticket) -> None:
        if self._holder is not ticket:
            if ticket in self._queue:
                self._queue.remove(ticket)  # left before its turn
            return
        self._holder, self.running = None, False
        while self._queue:
            following = self._queue.popleft()
            self._holder, self.running = following, True
            if following._turn is None:
                return  # admitted, not awaiting yet: its __aenter__ finds the lane its own
            if not following._turn.done():
                following._turn.set_result(None)
                return
            self._holder, self.running = None, False
