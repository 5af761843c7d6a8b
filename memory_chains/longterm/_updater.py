"""One model call per turn for the entity AND long-term memories: :class:`MemoryUpdater`.

``observe(human, ai, session_id=…)`` masks personal data, asks a
:class:`~memory_chains.longterm.TurnExtractor` once for entities, relations, profile
updates and facts, then applies each part to its memory
(:class:`~memory_chains.entities.EntityTracker`,
:class:`~memory_chains.longterm.LongTermMemory`); the memories' own extractors are not
used. A failed or unusable call raises before anything is written, so both memories stay
as they were. The long-term part is applied first (embeddings and store writes, what
fails in practice); if the entity memory's write then fails, the raised error carries a
note saying the long-term memory was updated and the entity memory was not.
``observe_in_background`` runs the same on one worker thread, off the reply's critical
path; :meth:`MemoryUpdater.flush` waits for it and raises what failed. :class:`UpdateReport`
says what the turn changed in each memory.

Example:
    >>> from memory_chains.entities import EntityTracker, RuleEntityExtractor
    >>> from memory_chains.longterm import LongTermMemory, TurnExtractor
    >>> from memory_chains.stores import InMemoryStore
    >>> from memory_chains.testing import HashEmbeddings, ScriptedChatModel
    >>> model = ScriptedChatModel(replies=['{"entities": [{"name": "Dell XPS 15", "type":'
    ...     ' "PRODUCT"}], "relations": [], "profile": [{"key": "language", "value": "fr",'
    ...     ' "source": "inferred", "confidence": 0.9}], "facts": []}'])
    >>> store = InMemoryStore()
    >>> updater = MemoryUpdater(
    ...     TurnExtractor(model),
    ...     entities=EntityTracker(RuleEntityExtractor(), user_id="ana", store=store),
    ...     long_term=LongTermMemory(store, "ana", HashEmbeddings()),
    ... )
    >>> report = updater.observe("Le Dell XPS 15, il est bien ?", "Oui.", session_id="s1")
    >>> report.entities.mentioned, report.long_term.profile, report.model_calls
    (('Dell XPS 15',), ('language',), 1)
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memory_chains.errors import InvalidInputError
from memory_chains.longterm._background import BackgroundWorker
from memory_chains.longterm._combined import TurnExtraction
from memory_chains.longterm._observation import ObserveReport, Observing, _Turn, check_turn

if TYPE_CHECKING:
    from memory_chains.entities import EntityTracker, TurnReport
    from memory_chains.longterm._memory import LongTermMemory

__all__ = ["MemoryUpdater", "UpdateReport"]

log = logging.getLogger("memory_chains.longterm")


@dataclass(frozen=True)
class UpdateReport:
    """What one observed turn changed in each memory.

    Attributes:
        entities: the entity memory's report (``None`` without an entity memory).
        long_term: the long-term memory's report (``None`` without one).
        model_calls: model calls made for the turn, shared by both memories (their own
            reports repeat this number: do not add them up).
        rejected: unusable items of the model's answer, with why.

    Example:
        >>> UpdateReport().model_calls
        0
    """

    entities: TurnReport | None = None
    long_term: ObserveReport | None = None
    model_calls: int = 0
    rejected: tuple[str, ...] = ()


class MemoryUpdater(Observing[UpdateReport]):
    """Feed an entity memory and a long-term memory from ONE model call per turn.

    Args:
        extractor: a :class:`~memory_chains.longterm.TurnExtractor` (or anything with its
            ``extract``/``aextract`` signature returning a ``TurnExtraction``).
        entities: the user's :class:`~memory_chains.entities.EntityTracker` (its types,
            known entities and masker are used; its own extractor is not).
        long_term: the user's :class:`~memory_chains.longterm.LongTermMemory` (its known
            fact keys, masker and clock are used; its own extractor is not).

    Attributes:
        errors: failures of background observations, oldest first.
        last_report: the report of the last applied turn.

    Raises:
        InvalidInputError: neither memory given, or an extractor without
            ``extract``/``aextract``.

    Example:
        >>> from memory_chains.stores import InMemoryStore
        >>> from memory_chains.testing import HashEmbeddings, ScriptedChatModel
        >>> from memory_chains.errors import ModelCallError
        >>> from memory_chains.longterm import LongTermMemory, TurnExtractor
        >>> model = ScriptedChatModel(replies=[RuntimeError("server down")])
        >>> mem = LongTermMemory(InMemoryStore(), "bo", HashEmbeddings())
        >>> updater = MemoryUpdater(TurnExtractor(model), long_term=mem)
        >>> updater.observe_in_background("Je m'appelle Bo.", session_id="s1")
        >>> try:
        ...     updater.flush()
        ... except ModelCallError:
        ...     print("failed;", len(mem.facts()), "fact stored")
        failed; 0 fact stored
        >>> updater.close()
    """

    def __init__(
        self,
        extractor: Any,
        *,
        entities: EntityTracker | None = None,
        long_term: LongTermMemory | None = None,
    ) -> None:
        if entities is None and long_term is None:
            raise InvalidInputError("give an entity memory, a long-term memory or both")
        if not callable(getattr(extractor, "extract", None)) or not callable(
            getattr(extractor, "aextract", None)
        ):
            raise InvalidInputError(
                f"extractor must be a TurnExtractor (extract and aextract), got "
                f"{type(extractor).__name__}"
            )
        self.extractor = extractor
        self.entities = entities
        self.long_term = long_term
        self.last_report: UpdateReport | None = None
        self._background: BackgroundWorker[_Turn] = BackgroundWorker(
            self._observe_queued,
            name="memory-updater",
            what="memory update",
            describe=lambda t: f"turn {t.session_id}#{t.seq}",
        )

    # -- the pure steps, shared by every flavour ----------------------------------------
    def _turn(
        self, human: str, ai: str, session_id: str, seq: int | None, when: float | None
    ) -> _Turn:
        """The checked turn, masked by each memory's masker."""
        if self.long_term is not None:
            turn = self.long_term._turn(human, ai, session_id, seq, when)
        else:
            turn = check_turn(human, ai, session_id, seq, when, clock=time.time)
        masker = self.entities.masker if self.entities is not None else None
        if masker is not None:
            turn = _Turn(masker(turn.human), masker(turn.ai), session_id, turn.seq, turn.when)
        return turn

    def _known(self) -> dict[str, Any]:
        """The extractor's keyword arguments: entity types, known names, known keys."""
        kwargs: dict[str, Any] = {}
        if self.entities is not None:
            kwargs["types"] = self.entities.types
            kwargs["known_entities"] = self.entities._known()
        if self.long_term is not None:
            kwargs["known_keys"] = self.long_term._known()
        return kwargs

    def _extract(self, turn: _Turn, known: dict[str, Any]) -> TurnExtraction:
        return self.extractor.extract(turn.human, turn.ai, **known)

    async def _aextract(self, turn: _Turn, known: dict[str, Any]) -> TurnExtraction:
        return await self.extractor.aextract(turn.human, turn.ai, **known)

    def _apply(self, turn: _Turn, extraction: TurnExtraction) -> UpdateReport:
        if not isinstance(extraction, TurnExtraction):
            raise InvalidInputError(
                f"the extractor returned {type(extraction).__name__}, not TurnExtraction"
            )
        long_term = entities = None
        if self.long_term is not None:
            long_term = self.long_term._apply(turn, extraction.long_term)
        if self.entities is not None:
            try:
                entities = self.entities._apply(extraction.entities)
            except BaseException as exc:
                if long_term is not None:
                    exc.add_note(
                        f"turn {turn.session_id}#{turn.seq}: the long-term memory WAS updated, "
                        "the entity memory was not (it is unchanged)"
                    )
                raise
        report = UpdateReport(entities, long_term, extraction.model_calls, extraction.rejected)
        self.last_report = report
        return report
