"""What the long-term memory observes and reports: a checked turn and :class:`ObserveReport`.

``_Turn`` is one exchange once checked and masked (the messages, its session and sequence
number, its time), the unit both :class:`~memory_chains.longterm.LongTermMemory` and
:class:`~memory_chains.longterm.MemoryUpdater` queue for their background worker;
:class:`ObserveReport` says what observing it changed in the profile and the facts.
Plain data, no store and no model.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memory_chains.longterm._fact_types import FactChanges

__all__ = ["ObserveReport"]


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
