"""How the long-term memories observe a turn: :class:`Observing`, :func:`check_turn`, reports.

``_Turn`` is one exchange once checked and masked (the messages, its session and sequence
number, its time), the unit both :class:`~memory_chains.longterm.LongTermMemory` and
:class:`~memory_chains.longterm.MemoryUpdater` queue for their background worker;
:func:`check_turn` builds it with the same checks for both. :class:`Observing` writes
``observe`` / ``aobserve`` / ``observe_in_background`` once over four steps each class
defines (check the turn, read what is known, call the extractor, apply its answer);
:class:`ObserveReport` says what observing a turn changed in the profile and the facts.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from memory_chains.errors import InvalidInputError
from memory_chains.longterm._background import WithBackground
from memory_chains.longterm._fact_types import FactChanges
from memory_chains.stores import validate_id

__all__ = ["ObserveReport", "Observing", "check_turn"]

R = TypeVar("R")


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@dataclass(frozen=True)
class ObserveReport:
    """What one observed turn changed.

    Attributes:
        profile: profile keys whose entry changed.
        facts: facts added, merged and superseded.
        model_calls: calls the extractor made.
        rejected: unusable items of the model's answer, with why.

    Example:
        >>> ObserveReport().changed
        False
    """

    profile: tuple[str, ...] = ()
    facts: FactChanges = field(default_factory=FactChanges)
    model_calls: int = 0
    rejected: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        """True when the turn changed the profile or the facts."""
        return bool(self.profile) or self.facts.changed


@dataclass(frozen=True)
class _Turn:
    human: str
    ai: str
    session_id: str
    seq: int | None
    when: float


def check_turn(
    human: str,
    ai: str,
    session_id: str,
    seq: int | None,
    when: float | None,
    *,
    clock: Callable[[], float],
    mask: Callable[[str], str] | None = None,
) -> _Turn:
    """The checked turn, its messages masked by ``mask`` (``when`` defaults to ``clock()``).

    Raises:
        InvalidInputError: a message that is not a string, is empty (the human one), holds
            a NUL or a lone surrogate; a bad session id, ``seq`` or ``when``.

    Example:
        >>> check_turn("Bonjour", "", "s1", 3, None, clock=lambda: 10.0)
        _Turn(human='Bonjour', ai='', session_id='s1', seq=3, when=10.0)
        >>> check_turn("Bonjour", "", "s1", -1, None, clock=lambda: 10.0)
        Traceback (most recent call last):
        ...
        memory_chains.errors.InvalidInputError: seq must be a non-negative integer, got -1
    """
    for name, value in (("human", human), ("ai", ai)):
        if not isinstance(value, str):
            raise InvalidInputError(f"{name} must be a string, got {type(value).__name__}")
        if "\x00" in value or not _encodable(value):
            raise InvalidInputError(
                f"{name} has a NUL character or a lone surrogate: decode the text with "
                "errors='replace' first"
            )
    validate_id(session_id, "session_id")
    if seq is not None and (isinstance(seq, bool) or not isinstance(seq, int) or seq < 0):
        raise InvalidInputError(f"seq must be a non-negative integer, got {seq!r:.40}")
    if when is not None and (isinstance(when, bool) or not isinstance(when, (int, float))):
        raise InvalidInputError(f"when must be a UNIX time (float), got {when!r:.40}")
    if not human.strip():
        raise InvalidInputError("the human message is empty: there is nothing to observe")
    if mask is not None:
        human, ai = mask(human), mask(ai)
    return _Turn(human, ai, session_id, seq, clock() if when is None else float(when))


class Observing(WithBackground, ABC, Generic[R]):
    """Mixin: ``observe`` / ``aobserve`` / ``observe_in_background``, written once.

    A subclass defines the four steps: ``_turn`` (check and mask, raising
    ``InvalidInputError`` before anything is called), ``_known`` (what the memory already
    holds, read from the store), ``_extract`` / ``_aextract`` (the extractor's call) and
    ``_apply`` (write the answer, returning the report ``R``); and creates its
    ``_background`` worker over :meth:`_observe_queued`.

    Example:
        >>> from memory_chains.longterm._background import BackgroundWorker
        >>> class Echo(Observing[str]):
        ...     def __init__(self) -> None:
        ...         self._background = BackgroundWorker(self._observe_queued, name="e", what="turn")
        ...     def _turn(self, human, ai, session_id, seq, when):
        ...         return check_turn(human, ai, session_id, seq, when, clock=lambda: 0.0)
        ...     def _known(self): return ["known"]
        ...     def _extract(self, turn, known): return f"{turn.human} {known}"
        ...     async def _aextract(self, turn, known): return self._extract(turn, known)
        ...     def _apply(self, turn, extraction): return extraction.upper()
        >>> Echo().observe("hi", session_id="s1")
        "HI ['KNOWN']"
    """

    @abstractmethod
    def _turn(
        self, human: str, ai: str, session_id: str, seq: int | None, when: float | None
    ) -> _Turn: ...

    @abstractmethod
    def _known(self) -> Any: ...

    @abstractmethod
    def _extract(self, turn: _Turn, known: Any) -> Any: ...

    @abstractmethod
    async def _aextract(self, turn: _Turn, known: Any) -> Any: ...

    @abstractmethod
    def _apply(self, turn: _Turn, extraction: Any) -> R: ...

    def observe(
        self,
        human: str,
        ai: str = "",
        *,
        session_id: str,
        seq: int | None = None,
        when: float | None = None,
    ) -> R:
        """Extract the durable content of one turn and write it to memory.

        Args:
            human: the user's message; ai: the assistant's reply.
            session_id, seq: the turn (kept as the source of facts and profile values).
            when: UNIX time of the turn (now by default).

        Raises:
            InvalidInputError: bad message or ids; nothing is called or written.
            ModelCallError, MalformedOutputError: the extractor failed; memory unchanged.
        """
        turn = self._turn(human, ai, session_id, seq, when)
        return self._apply(turn, self._extract(turn, self._known()))

    async def aobserve(
        self,
        human: str,
        ai: str = "",
        *,
        session_id: str,
        seq: int | None = None,
        when: float | None = None,
    ) -> R:
        """Async :meth:`observe` (the model call awaited, store work in a thread)."""
        turn = self._turn(human, ai, session_id, seq, when)
        known = await asyncio.to_thread(self._known)
        extraction = await self._aextract(turn, known)
        return await asyncio.to_thread(self._apply, turn, extraction)

    def observe_in_background(
        self,
        human: str,
        ai: str = "",
        *,
        session_id: str,
        seq: int | None = None,
        when: float | None = None,
    ) -> None:
        """Queue the turn for :meth:`observe` on this object's worker thread.

        Arguments are checked and masked now (``InvalidInputError`` raised here); ``when``
        defaults to now, not to when the worker gets to it. Failures are kept in
        :attr:`errors` and raised by :meth:`flush`. The worker is a daemon thread: call
        :meth:`flush` or :meth:`close` before the process exits, or queued turns are lost.
        """
        self._background.submit(self._turn(human, ai, session_id, seq, when))

    def _observe_queued(self, turn: _Turn) -> None:
        self._apply(turn, self._extract(turn, self._known()))
