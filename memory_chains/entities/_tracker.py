"""The entity memory engine: extract each turn, merge, expire, persist, answer queries.

:class:`EntityTracker` owns one user's :class:`~memory_chains.entities.EntityState`, an
extractor (:class:`LLMEntityExtractor`, one model call per turn, or
:class:`RuleEntityExtractor`, none) and optionally a store. It is the framework-free core
that :class:`~memory_chains.entities.EntityMemory` (LangChain) wraps. Sync and async
methods share everything but the extractor call and the store write.

Example:
    >>> from memory_chains.entities import RuleEntityExtractor
    >>> t = EntityTracker(RuleEntityExtractor(use_spacy=False), types="ecommerce")
    >>> _ = t.observe("Je compare le Dell XPS 15 et le Lenovo ThinkPad X1.", "Bon choix.")
    >>> t.resolve("celui de Lenovo").name, t.resolve("le premier").name
    ('Lenovo ThinkPad X1', 'Dell XPS 15')
    >>> [name for name, kind, direction in t.related("Dell XPS 15")]
    ['Lenovo ThinkPad X1']
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from memory_chains.entities._context import (
    PriorityWeights,
    TokenCounter,
    approx_tokens,
    rank,
    render_context,
)
from memory_chains.entities._relrules import implied_relations
from memory_chains.entities._resolve import resolve as _resolve
from memory_chains.entities._state import USER_ID, EntityState
from memory_chains.entities._types import Entity, Extraction, resolve_types
from memory_chains.errors import InvalidInputError
from memory_chains.privacy import PIIOption, resolve_masker
from memory_chains.protocol import MemoryBase, MemoryBlock, block_name, check_budget

__all__ = ["EntityExtractor", "EntityTracker", "TurnReport", "turn_text"]

log = logging.getLogger("memory_chains.entities")

_MAX_CHARS_PER_SIDE = 1500  # long RAG answers: the head carries the entities


class EntityExtractor(Protocol):
    """What the memory needs from an extractor (both built-ins implement it)."""

    def extract(self, text: str, types: Sequence[str], known: Sequence[str] = ()) -> Extraction: ...


@dataclass(frozen=True)
class TurnReport:
    """What one observed turn did to the memory.

    Attributes:
        turn: the turn number (1-based).
        mentioned: canonical names of the entities the turn mentioned, in order.
        created: names of the entities it created.
        model_calls: model calls spent on the turn.
        error: empty on success; otherwise why extraction failed (the turn is still kept
            by the short-term memory, and counted in ``EntityTracker.failed_turns``).
        raw: the model's raw answer when extraction failed.
    """

    turn: int
    mentioned: tuple[str, ...] = ()
    created: tuple[str, ...] = ()
    model_calls: int = 0
    error: str = ""
    raw: str = ""


class EntityTracker(MemoryBase):
    """One user's entity memory, independent of any framework.

    Args:
        extractor: an :class:`LLMEntityExtractor` or :class:`RuleEntityExtractor` (or
            anything with the same ``extract`` method).
        types: a preset name (``"default"``, ``"ecommerce"``, ``"support"``, ``"hr"``,
            ``"travel"``) or a list of type names.
        user_id: whose entities these are; the store namespace is ``("entities", user_id)``.
        store: a :class:`~memory_chains.stores.BaseStore` to persist to after each turn
            (None keeps everything in memory).
        ttl: forget entities not mentioned for this many seconds (None: never).
        token_counter: counts tokens for :meth:`context` budgets.
        weights: priority weights.
        clock: returns the current time in epoch seconds (for tests).
        pii: ``True`` (default) masks e-mails, IBANs, card and phone numbers in each turn
            *before* extraction, so no fragment of them becomes an entity or attribute;
            a masker or any ``str -> str`` to customise; ``False``/``None`` to disable.

    Example:
        >>> from memory_chains.entities import RuleEntityExtractor
        >>> from memory_chains.stores import InMemoryStore
        >>> store = InMemoryStore()
        >>> t = EntityTracker(RuleEntityExtractor(use_spacy=False), user_id="alice", store=store)
        >>> _ = t.observe("Le Dell XPS 15 est à 1599 €.")
        >>> EntityTracker(RuleEntityExtractor(use_spacy=False), user_id="alice",
        ...     store=store).get("XPS 15").attributes["price"]
        '1599 €'
    """

    def __init__(
        self,
        extractor: EntityExtractor,
        *,
        types: str | Sequence[str] | None = None,
        user_id: str = "default",
        store: Any = None,
        ttl: float | None = None,
        token_counter: TokenCounter | None = None,
        weights: PriorityWeights | None = None,
        clock: Callable[[], float] = time.time,
        pii: PIIOption = True,
    ) -> None:
        if ttl is not None and ttl <= 0:
            raise InvalidInputError(f"ttl must be a positive number of seconds, got {ttl!r}")
        if store is not None:
            from memory_chains.stores import validate_id

            validate_id(user_id, "user_id")
        self.extractor = extractor
        self.types = resolve_types(
            types if not isinstance(types, Sequence) or isinstance(types, str) else list(types)
        )
        self.user_id = user_id
        self.store = store
        self.ttl = ttl
        self.token_counter = token_counter or approx_tokens
        self.weights = weights or PriorityWeights()
        self.clock = clock
        self.masker = resolve_masker(pii)
        self.model_calls = 0
        self.failed_turns: list[TurnReport] = []
        self._state: EntityState | None = None
        self._lock = threading.RLock()  # state, _apply, forget… call one another

    # -- state and persistence ------------------------------------------------------------
    @property
    def namespace(self) -> tuple[str, str]:
        """The store namespace of this user's entities."""
        return ("entities", self.user_id)

    @property
    def state(self) -> EntityState:
        """The current state, loaded from the store on first use and with TTL applied.

        Under the tracker's lock: a reader that loads or expires the state never writes an
        older copy back over a turn another thread has just merged.
        """
        with self._lock:
            if self._state is None:
                self._state = self._load()
            expired = self._state.expire(now=self.clock(), ttl=self.ttl)
            if expired is not self._state:
                self._state = expired
                self._save()
            return self._state

    def _load(self) -> EntityState:
        if self.store is None:
            return EntityState()
        doc = self.store.get(self.namespace, "state")
        return EntityState.from_dict(doc.value) if doc is not None else EntityState()

    def _save(self) -> None:
        if self.store is not None and self._state is not None:
            self.store.put(self.namespace, "state", self._state.to_dict())

    # -- observing turns ------------------------------------------------------------------
    def observe(self, human: str, ai: str = "") -> TurnReport:
        """Extract the entities of one exchange and merge them (one model call at most)."""
        text = self._turn_text(human, ai)
        known = self._known()
        extraction = self.extractor.extract(text, self.types, known)
        return self._apply(extraction)

    async def aobserve(self, human: str, ai: str = "") -> TurnReport:
        """Async :meth:`observe`."""
        import asyncio

        text = self._turn_text(human, ai)
        known = await asyncio.to_thread(self._known)
        aextract = getattr(self.extractor, "aextract", None)
        if aextract is not None:
            extraction = await aextract(text, self.types, known)
        else:
            extraction = await asyncio.to_thread(self.extractor.extract, text, self.types, known)
        return await asyncio.to_thread(self._apply, extraction)

    def _turn_text(self, human: str, ai: str) -> str:
        text = turn_text(human, ai)
        return self.masker(text) if self.masker is not None else text

    def _known(self) -> list[str]:
        return [e.name for e in rank(self.state, "", self.weights)[:10]]

    def _apply(self, extraction: Extraction) -> TurnReport:
        with self._lock:
            before = self.state
            now = self.clock()
            after = before.merge(extraction, now=now, types=self.types)
            after = after.with_relations(implied_relations(after.entities), now=now)
            self._state = after
            try:
                self._save()
            except BaseException:
                self._state = before  # the store did not take it: memory stays as it was
                raise
        old_ids = {e.id for e in before.entities}
        mentioned = (
            tuple(e.name for e in (after.get(i) for i in after.turns[-1]) if e is not None)
            if after.turns
            else ()
        )
        report = TurnReport(
            turn=after.turn,
            mentioned=mentioned,
            created=tuple(e.name for e in after.entities if e.id not in old_ids),
            model_calls=extraction.model_calls,
            error=extraction.error,
            raw=extraction.raw,
        )
        self.model_calls += extraction.model_calls
        if extraction.error:
            self.failed_turns.append(report)
            log.warning("turn %d kept without entities: %s", report.turn, extraction.error)
        return report

    # -- queries --------------------------------------------------------------------------
    def entities(self) -> list[Entity]:
        """Every live entity, in order of creation."""
        return list(self.state.entities)

    def get(self, name: str) -> Entity | None:
        """The entity a name or alias designates, or None."""
        return self.state.find(name)

    def prioritized(self, question: str = "", k: int = 5) -> list[Entity]:
        """The ``k`` entities with the highest prompt priority for ``question``."""
        return rank(self.state, question, self.weights)[: max(0, k)]

    def salient(self, question: str = "", k: int = 5) -> list[str]:
        """Names of the ``k`` most relevant entities, most recently mentioned first.

        This is what a query rewriter needs to turn a follow-up into a standalone question.
        """
        top = self.prioritized(question, k)
        return [e.name for e in sorted(top, key=lambda e: (-e.last_turn, -e.last_seen))]

    def resolve(self, phrase: str, *, question: str = "") -> Entity | None:
        """The entity a reference designates ("sa", "celui de Lenovo", "le second", "it")."""
        return _resolve(self.state, phrase, question=question)

    def related(self, name: str) -> list[tuple[str, str, str]]:
        """``(other entity name, relation kind, direction)`` for each relation of ``name``.

        Raises:
            InvalidInputError: no entity is called ``name``.
        """
        state = self.state
        entity = state.find(name)
        if entity is None:
            raise InvalidInputError(f"no entity named {name!r}")
        out = []
        for direction, r in state.related(entity.id):
            other_id = r.target if direction == "out" else r.source
            other = state.get(other_id)
            if other is not None:
                out.append((other.name, r.kind, direction))
            elif other_id == USER_ID:
                out.append(("USER", r.kind, direction))
        return out

    def user_relations(self) -> list[tuple[str, str]]:
        """``(relation kind, entity name)`` for what the user is said to own, prefer,
        be interested in or be located in ("USER OWNS Aurelle Platine").

        Example:
            >>> from memory_chains.entities import RuleEntityExtractor
            >>> t = EntityTracker(RuleEntityExtractor(use_spacy=False))
            >>> _ = t.observe("J'habite à Quimper.")
            >>> t.user_relations()
            [('LOCATED_IN', 'Quimper')]
        """
        state = self.state
        out = []
        for r in state.relations:
            target = state.get(r.target)
            if r.source == USER_ID and target is not None:
                out.append((r.kind, target.name))
        return out

    def context(self, question: str = "", *, max_tokens: int = 256, limit: int = 12) -> str:
        """The context block of the most relevant entities under ``max_tokens``."""
        if max_tokens < 0:
            raise InvalidInputError("max_tokens must be >= 0")
        return render_context(
            self.state,
            question=question,
            max_tokens=max_tokens,
            token_counter=self.token_counter,
            limit=limit,
            weights=self.weights,
        )

    # -- the memory protocol (memory_chains.protocol) -------------------------------------
    block_names = ("entities",)
    context_limit = 12
    """At most this many entities in :meth:`context_block`."""

    def record(self, human: str, ai: str) -> None:
        """:meth:`observe` (the protocol's name for it)."""
        self.observe(human, ai)

    async def arecord(self, human: str, ai: str) -> None:
        """Async :meth:`record` (the extractor's native async call when it has one)."""
        await self.aobserve(human, ai)

    def context_block(self, question: str, max_tokens: int, name: str | None = None) -> MemoryBlock:
        """The entities most relevant to ``question`` under ``max_tokens``, one item each
        (its attributes, then its relations on a second line), most relevant first.

        Example:
            >>> from memory_chains.entities import RuleEntityExtractor
            >>> t = EntityTracker(RuleEntityExtractor(use_spacy=False))
            >>> _ = t.observe("Je cherche le Dell XPS 15", "Il coûte 1599 €.")
            >>> print(t.context_block("Sa garantie ?", 100).items[0])
            - Dell XPS 15 [PRODUCT]; price: 1599 €
              relations: the user INTERESTED_IN it
        """
        check_budget(max_tokens)
        block_name(self, name)
        lines = [
            line
            for line in self.context(question, max_tokens=max_tokens, limit=self.context_limit)
            .strip()
            .splitlines()
            if line.strip()
        ]
        if lines and not lines[0].startswith("- "):
            lines = lines[1:]  # the rendering's own header: a block has a title
        items: list[str] = []
        for line in lines:
            if line.startswith("- ") or not items:
                items.append(line)
            else:
                items[-1] += "\n" + line  # an entity's relations line
        return MemoryBlock("entities", tuple(items), title="Known entities (most relevant first)")

    # -- maintenance ----------------------------------------------------------------------
    def forget(self, name: str) -> None:
        """Forget one entity and its relations (raises InvalidInputError if unknown)."""
        with self._lock:
            self._state = self.state.forget(name)
            self._save()

    def clear(self) -> None:
        """Forget every entity of this user (the store document is deleted)."""
        with self._lock:
            self._state = EntityState()
            if self.store is not None:
                self.store.delete(self.namespace, "state")

    def export_json(self, *, indent: int | None = 2) -> str:
        """This user's entities and relations as a JSON document (see ``import_json``)."""
        payload = {"user_id": self.user_id, "types": list(self.types), **self.state.to_dict()}
        return json.dumps(payload, ensure_ascii=False, indent=indent)

    def import_json(self, text: str) -> None:
        """Replace this user's entities with a document written by :meth:`export_json`.

        Raises:
            InvalidInputError: not JSON, or not an entity export.
        """
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidInputError(f"entity export is not JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise InvalidInputError("entity export must be a JSON object")
        with self._lock:
            self._state = EntityState.from_dict(data)
            self._save()


def turn_text(human: str, ai: str) -> str:
    """One exchange as the text an extractor reads (each side cut to a bounded length).

    Raises:
        InvalidInputError: either message is not a string.

    Example:
        >>> print(turn_text("Je cherche le Dell XPS 15", "Il est en stock."))
        User: Je cherche le Dell XPS 15
        Assistant: Il est en stock.
    """
    if not isinstance(human, str) or not isinstance(ai, str):
        raise InvalidInputError("human and ai messages must be strings")
    text = f"User: {human.strip()[:_MAX_CHARS_PER_SIDE]}"
    if ai.strip():
        text += f"\nAssistant: {ai.strip()[:_MAX_CHARS_PER_SIDE]}"
    return text
