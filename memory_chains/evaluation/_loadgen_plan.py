"""What each writer of the load generator writes: the turn plan and :func:`write_turns`.

Every turn carries a unique token ``w<worker>-i<index>`` in both messages, so a turn whose
human and AI halves disagree, a turn written twice and a turn missing are all visible.
Writer ``w`` sends its ``i``-th turn to session ``s<(w + i) % sessions>`` of user
``u<session % users>``: every session receives interleaved turns from every writer.
:func:`write_turns` appends a plan to a store in order and times each append
(:class:`WriterReport`); :mod:`memory_chains.evaluation.loadgen` runs it in child processes.

Example:
    >>> plan = turn_plan(worker=1, turns=3, sessions=4, users=2)
    >>> [(p.user_id, p.session_id, p.token) for p in plan]
    [('u1', 's1', 'w1-i0'), ('u0', 's2', 'w1-i1'), ('u1', 's3', 'w1-i2')]
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from memory_chains.errors import InvalidInputError, StoreError
from memory_chains.stores import BaseStore

__all__ = ["PlannedTurn", "WriterReport", "iter_turn_plan", "turn_plan", "write_turns"]


@dataclass(frozen=True)
class PlannedTurn:
    """One turn a writer will append.

    Example:
        >>> turn_plan(0, 1, 1, 1)[0].human.startswith("question w0-i0")
        True
    """

    user_id: str
    session_id: str
    token: str
    human: str
    ai: str


def turn_plan(
    worker: int, turns: int, sessions: int, users: int, *, payload: int = 0
) -> list[PlannedTurn]:
    """The turns writer ``worker`` appends, in order (``payload`` extra characters each).

    Raises:
        InvalidInputError: a count below 1 (``worker`` and ``payload`` below 0).

    Example:
        >>> len(turn_plan(0, 5, 2, 1))
        5
    """
    return list(iter_turn_plan(worker, turns, sessions, users, payload=payload))


def iter_turn_plan(
    worker: int, turns: int, sessions: int, users: int, *, payload: int = 0
) -> Iterator[PlannedTurn]:
    """:func:`turn_plan`, one turn at a time (a writer meant to be killed plans millions).

    Raises:
        InvalidInputError: as :func:`turn_plan`, before the first turn is yielded.

    Example:
        >>> next(iter_turn_plan(2, 10**9, 4, 2)).session_id
        's2'
    """
    for name, value, low in (
        ("worker", worker, 0),
        ("turns", turns, 1),
        ("sessions", sessions, 1),
        ("users", users, 1),
        ("payload", payload, 0),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise InvalidInputError(f"{name} must be an integer >= {low}, got {value!r}")
    return _plan(worker, turns, sessions, users, " " + "x" * payload if payload else "")


def _plan(worker: int, turns: int, sessions: int, users: int, filler: str) -> Iterator[PlannedTurn]:
    for i in range(turns):
        s = (worker + i) % sessions
        token = f"w{worker}-i{i}"
        yield PlannedTurn(
            user_id=f"u{s % users}",
            session_id=f"s{s}",
            token=token,
            human=f"question {token}{filler}",
            ai=f"answer {token}",
        )


@dataclass(frozen=True)
class WriterReport:
    """What one writer process did.

    Attributes:
        worker: the writer's number.
        written: turns whose append returned.
        started, ended: wall-clock time (``time.time()``) of the first and last append.
        latencies_ms: duration of each append, in order.
        error: the error that stopped the writer early ("" if none).

    Example:
        >>> WriterReport(0, 0, 0.0, 0.0).error
        ''
    """

    worker: int
    written: int
    started: float
    ended: float
    latencies_ms: tuple[float, ...] = ()
    error: str = ""


def write_turns(
    store: BaseStore, worker: int, plan: Iterable[PlannedTurn], *, on_first: Any = None
) -> WriterReport:
    """Append ``plan`` to ``store`` in order, timing each append.

    ``on_first`` (a callable) runs after the first append returned. A store error stops
    the writer and is reported, not raised.

    Example:
        >>> from memory_chains.stores import InMemoryStore
        >>> write_turns(InMemoryStore(), 0, turn_plan(0, 3, 2, 1)).written
        3
    """
    latencies: list[float] = []
    started = time.time()
    error = ""
    for n, turn in enumerate(plan):
        t0 = time.perf_counter()
        try:
            store.append_turn(
                turn.user_id, turn.session_id, turn.human, turn.ai, {"token": turn.token}
            )
        except StoreError as exc:
            error = f"{type(exc).__name__}: {exc}"
            break
        latencies.append((time.perf_counter() - t0) * 1000)
        if n == 0 and on_first is not None:
            on_first()
    return WriterReport(worker, len(latencies), started, time.time(), tuple(latencies), error)
