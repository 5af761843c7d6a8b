"""The model lane: one run at a time, first come first served, bounded, cancellable."""

from __future__ import annotations

import asyncio

import pytest

from memory_chains.errors import InvalidInputError, ServiceBusyError
from memory_chains.web import ModelWorker


async def test_runs_one_at_a_time_in_arrival_order() -> None:
    worker = ModelWorker(max_waiting=10)
    order: list[int] = []
    running = 0
    most = 0

    async def job(n: int) -> None:
        nonlocal running, most
        async with worker.admit():
            running += 1
            most = max(most, running)
            await asyncio.sleep(0.001 * (5 - n))  # later jobs are shorter: order still holds
            order.append(n)
            running -= 1

    await asyncio.gather(*(job(n) for n in range(5)))
    assert order == [0, 1, 2, 3, 4] and most == 1
    assert not worker.running and worker.waiting == 0


async def test_a_full_queue_refuses_with_a_retry_after() -> None:
    worker = ModelWorker(max_waiting=1)
    first = worker.admit()
    second = worker.admit()  # waits behind the first
    with pytest.raises(ServiceBusyError) as refused:
        worker.admit()
    assert refused.value.retry_after >= 2  # the running one and the waiting one
    assert worker.refused == 1
    first.release()
    second.release()
    third = worker.admit()  # room again
    async with third:
        assert worker.running


async def test_a_request_cancelled_while_waiting_leaves_the_queue() -> None:
    worker = ModelWorker(max_waiting=4)
    gate = asyncio.Event()
    ran: list[str] = []

    async def job(name: str, hold: bool = False) -> None:
        async with worker.admit():
            ran.append(name)
            if hold:
                await gate.wait()

    holder = asyncio.create_task(job("holder", hold=True))
    await asyncio.sleep(0)
    gone = asyncio.create_task(job("gone"))
    after = asyncio.create_task(job("after"))
    await asyncio.sleep(0)
    assert worker.waiting == 2
    gone.cancel()
    await asyncio.sleep(0)
    assert worker.waiting == 1
    gate.set()
    await asyncio.gather(holder, after)
    with pytest.raises(asyncio.CancelledError):
        await gone
    assert ran == ["holder", "after"] and not worker.running


async def test_a_failing_run_frees_the_lane() -> None:
    worker = ModelWorker()
    with pytest.raises(RuntimeError):
        async with worker.admit():
            raise RuntimeError("model crashed")
    async with worker.admit():
        assert worker.running


async def test_release_is_idempotent_and_a_released_ticket_cannot_run() -> None:
    worker = ModelWorker(max_waiting=2)
    holder = worker.admit()
    waiting = worker.admit()
    waiting.release()
    waiting.release()
    assert worker.waiting == 0
    with pytest.raises(InvalidInputError):
        async with waiting:
            pass
    holder.release()
    assert not worker.running


def test_bad_sizes_are_refused() -> None:
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(InvalidInputError):
            ModelWorker(bad)  # type: ignore[arg-type]
