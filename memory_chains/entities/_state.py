"""The pure core: an immutable snapshot of one user's entities and how turns update it.

:class:`EntityState` holds entities, relations and the order of recent mentions. Every
operation (:meth:`~EntityState.merge`, :meth:`~EntityState.expire`,
:meth:`~EntityState.forget`) returns a new state; nothing here does I/O or calls a model.

Example:
    >>> from memory_chains.entities._types import Extraction, Mention
    >>> s = EntityState().merge(Extraction((Mention("Dell XPS 15", "PRODUCT"),)), now=1.0)
    >>> s = s.merge(Extraction((Mention("le XPS 15", "PRODUCT", {"garantie": "2 ans"}),)), now=2.0)
    >>> [(e.name, e.aliases, e.mentions, dict(e.attributes)) for e in s.entities]
    [('Dell XPS 15', ('le XPS 15',), 2, {'garantie': '2 ans'})]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from memory_chains.entities._fold import _words, fold, is_alias, tokens
from memory_chains.entities._relrules import HOUSE
from memory_chains.entities._types import Entity, Extraction, Mention, Relation
from memory_chains.errors import InvalidInputError

__all__ = ["USER_ID", "EntityState"]

SCHEMA_VERSION = 1
_MAX_TURNS_KEPT = 50
_MAX_ALIASES = 12

# Mentions that are references, not names: an extractor returning them is ignored.
_NOT_NAMES = frozenset(
    _words(
        "il elle ils elles lui leur le la les sa son ses celui celle ceux celles ceci cela ca it "
        "its he she him her they them this that these those one user utilisateur assistant je tu "
        "nous vous i you we me moi toi"
    )
)
# The person chatting: relations may start from them ("USER OWNS ..."); never an entity.
USER_ID = "user"
_USER_WORDS = frozenset(
    _words("user utilisateur utilisatrice je j moi me i myself client cliente customer")
)
# Weak types: a more specific type seen later replaces them.
_WEAK_TYPES = frozenset({"CONCEPT", "UNKNOWN", ""})


@dataclass(frozen=True)
class EntityState:
    """A user's entities and relations at one point in time (immutable).

    Attributes:
        entities: every known entity, in order of creation.
        relations: every known relation.
        turns: entity ids mentioned by each recent turn, in mention order (oldest first).
        turn: number of turns merged so far.
        next_id: counter for new entity ids.
        house: id of the organization the assistant speaks for ("" when unknown), so that
            "Karim, notre technicien" works at the "X" of an earlier "Chez X, nous…".
        house_stated: True when a turn said so (a guess never replaces a stated house).
    """

    entities: tuple[Entity, ...] = ()
    relations: tuple[Relation, ...] = ()
    turns: tuple[tuple[str, ...], ...] = ()
    turn: int = 0
    next_id: int = 1
    house: str = ""
    house_stated: bool = False

    # -- lookup ---------------------------------------------------------------------------
    def get(self, entity_id: str) -> Entity | None:
        """The entity with this id, or None."""
        for e in self.entities:
            if e.id == entity_id:
                return e
        return None

    def find(self, name: str, entity_type: str = "") -> Entity | None:
        """The entity that ``name`` designates (folded equality first, then alias rule).

        Among several candidates the same type wins, then the most recently mentioned.

        Example:
            >>> from memory_chains.entities._types import Extraction, Mention
            >>> s = EntityState().merge(Extraction((Mention("Marie Dupont", "PERSON"),)), now=0)
            >>> s.find("marie").name
            'Marie Dupont'
        """
        key = fold(name)
        if not key:
            return None
        wanted = entity_type.upper()

        def rank(e: Entity) -> tuple[bool, int, float]:
            return (bool(wanted) and e.type == wanted, e.last_turn, e.last_seen)

        exact = [e for e in self.entities if any(fold(n) == key for n in e.names)]
        if exact:
            return max(exact, key=rank)
        loose = [
            e
            for e in self.entities
            if (not wanted or e.type == wanted or e.type in _WEAK_TYPES or wanted in _WEAK_TYPES)
            and any(is_alias(name, n, e.type) for n in e.names)
        ]
        return max(loose, key=rank) if loose else None

    def related(self, entity_id: str) -> list[tuple[str, Relation]]:
        """Relations touching an entity, as ``(direction, relation)`` pairs.

        ``direction`` is ``"out"`` when the entity is the source, ``"in"`` otherwise.
        """
        out: list[tuple[str, Relation]] = []
        for r in self.relations:
            if r.source == entity_id:
                out.append(("out", r))
            elif r.target == entity_id:
                out.append(("in", r))
        return out

    # -- updates --------------------------------------------------------------------------
    def merge(
        self,
        extraction: Extraction,
        *,
        now: float,
        types: Iterable[str] | None = None,
    ) -> EntityState:
        """A new state with one more turn: mentions merged into entities, relations added.

        Args:
            extraction: what the extractor found in the turn (a failed extraction still
                counts as a turn, with no mentions).
            now: the turn's time in epoch seconds.
            types: the allowed types; mentions of another type are dropped.
        """
        allowed = {t.upper() for t in types} if types is not None else None
        turn = self.turn + 1
        entities = list(self.entities)
        next_id = self.next_id
        seen_now: list[str] = []  # ids mentioned this turn, in order
        by_mention: dict[str, str] = {}  # folded mention name -> entity id

        for m in extraction.mentions:
            name = " ".join(str(m.name).split())
            etype = str(m.type).strip().upper()
            key = fold(name)
            if not key or key in _NOT_NAMES:
                continue
            if etype and allowed is not None and etype not in allowed:
                continue
            view = replace(self, entities=tuple(entities))
            found = view.find(name, etype)
            if found is None and not etype:
                continue  # an untyped mention only counts for an entity already known
            if found is None:
                entity = Entity(
                    id=f"e{next_id}",
                    name=name,
                    type=etype,
                    mentions=1,
                    first_seen=now,
                    last_seen=now,
                    first_turn=turn,
                    last_turn=turn,
                ).with_attributes(m.attributes, at=now)
                next_id += 1
                entities.append(entity)
            else:
                entity = _absorb(found, m, name, etype, now=now, turn=turn)
                entities[entities.index(found)] = entity
            by_mention[key] = entity.id
            if entity.id not in seen_now:
                seen_now.append(entity.id)

        state = replace(self, entities=tuple(entities))
        house, house_stated = self.house, self.house_stated
        if extraction.house and extraction.house_stated:
            found_house = _pick(state, by_mention, extraction.house)
            if found_house and found_house != USER_ID:
                house, house_stated = found_house, extraction.house_stated
        relations = list(self.relations)
        for rm in extraction.relations:
            kind = "_".join(str(rm.kind).strip().upper().split())
            src = _pick(state, by_mention, rm.source)
            dst = house or None if rm.target == HOUSE else _pick(state, by_mention, rm.target)
            if not kind or src is None or dst is None or src == dst:
                continue
            for i, r in enumerate(relations):
                if (r.source, r.kind, r.target) == (src, kind, dst):
                    relations[i] = replace(r, last_seen=now, mentions=r.mentions + 1)
                    break
            else:
                relations.append(Relation(src, kind, dst, first_seen=now, last_seen=now))

        turns = (*self.turns, tuple(seen_now))[-_MAX_TURNS_KEPT:]
        return EntityState(
            tuple(entities), tuple(relations), turns, turn, next_id, house, house_stated
        )

    def with_relations(
        self, relations: Iterable[tuple[str, str, str]], *, now: float
    ) -> EntityState:
        """A new state with these ``(source id, kind, target id)`` relations added when new
        (no turn is counted; relations already known are left as they are).

        Example:
            >>> from memory_chains.entities._types import Extraction, Mention
            >>> s = EntityState().merge(Extraction((Mention("A", "PRODUCT"),
            ...     Mention("B", "ORGANIZATION"))), now=0)
            >>> [r.kind for r in s.with_relations([("e1", "MADE_BY", "e2")], now=0).relations]
            ['MADE_BY']
        """
        known = {(r.source, r.kind, r.target) for r in self.relations}
        ids = {e.id for e in self.entities} | {USER_ID}
        added = [
            Relation(src, kind, dst, first_seen=now, last_seen=now)
            for src, kind, dst in dict.fromkeys(relations)
            if (src, kind, dst) not in known and src in ids and dst in ids and src != dst
        ]
        return replace(self, relations=(*self.relations, *added)) if added else self

    def expire(self, *, now: float, ttl: float | None) -> EntityState:
        """A new state without the entities not mentioned for more than ``ttl`` seconds."""
        if ttl is None:
            return self
        keep = tuple(e for e in self.entities if now - e.last_seen <= ttl)
        if len(keep) == len(self.entities):
            return self
        return self._keep(keep)

    def forget(self, name: str) -> EntityState:
        """A new state without the entity ``name`` designates (and its relations).

        Raises:
            InvalidInputError: no entity matches ``name``.
        """
        target = self.find(name)
        if target is None:
            raise InvalidInputError(f"no entity named {name!r} to forget")
        return self._keep(tuple(e for e in self.entities if e.id != target.id))

    def _keep(self, keep: tuple[Entity, ...]) -> EntityState:
        ids = {e.id for e in keep}
        return replace(
            self,
            entities=keep,
            relations=tuple(
                r
                for r in self.relations
                if r.source in (ids | {USER_ID}) and r.target in (ids | {USER_ID})
            ),
            turns=tuple(tuple(i for i in t if i in ids) for t in self.turns),
            house=self.house if self.house in ids else "",
            house_stated=self.house_stated and self.house in ids,
        )

    # -- serialisation --------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary (see :meth:`from_dict`)."""
        return {
            "version": SCHEMA_VERSION,
            "turn": self.turn,
            "next_id": self.next_id,
            "entities": [e.to_dict() for e in self.entities],
            "relations": [
                {
                    "source": r.source,
                    "kind": r.kind,
                    "target": r.target,
                    "first_seen": r.first_seen,
                    "last_seen": r.last_seen,
                    "mentions": r.mentions,
                }
                for r in self.relations
            ],
            "turns": [list(t) for t in self.turns],
            "house": self.house,
            "house_stated": self.house_stated,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EntityState:
        """Rebuild a state written by :meth:`to_dict`.

        Raises:
            InvalidInputError: the document is not an entity state this version can read.
        """
        try:
            version = int(data.get("version", 0))
            if version != SCHEMA_VERSION:
                raise InvalidInputError(
                    f"entity state version {version} is not supported (expected "
                    f"{SCHEMA_VERSION}); upgrade memory_chains"
                )
            return cls(
                entities=tuple(Entity.from_dict(e) for e in data.get("entities", ())),
                relations=tuple(
                    Relation(
                        str(r["source"]),
                        str(r["kind"]),
                        str(r["target"]),
                        float(r.get("first_seen", 0.0)),
                        float(r.get("last_seen", 0.0)),
                        int(r.get("mentions", 1)),
                    )
                    for r in data.get("relations", ())
                ),
                turns=tuple(tuple(str(i) for i in t) for t in data.get("turns", ())),
                turn=int(data.get("turn", 0)),
                next_id=int(data.get("next_id", 1)),
                house=str(data.get("house", "")),
                house_stated=bool(data.get("house_stated", False)),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            if isinstance(exc, InvalidInputError):
                raise
            raise InvalidInputError(f"malformed entity state document: {exc!r}") from exc


def _absorb(e: Entity, m: Mention, name: str, etype: str, *, now: float, turn: int) -> Entity:
    """Fold one more mention into an existing entity."""
    canonical, aliases = e.name, list(e.aliases)
    if fold(name) not in {fold(n) for n in e.names} and set(tokens(canonical)) < set(tokens(name)):
        # A more complete form ("Dell XPS 15" after "XPS 15") becomes the canonical name.
        aliases.insert(0, canonical)
        canonical = name
    elif canonical.islower() and not name.islower() and fold(name) == fold(canonical):
        # "banque torvel" typed by the user, then "Banque Torvel": the written name wins.
        aliases.insert(0, canonical)
        canonical = name
    elif _surface(name) not in {_surface(n) for n in e.names} and len(aliases) < _MAX_ALIASES:
        # Surface forms are kept even when they fold alike ("la Clio"): they carry the
        # determiner, hence the French gender the user gives the entity.
        aliases.append(name)
    new_type = etype if e.type in _WEAK_TYPES and etype not in _WEAK_TYPES else e.type
    counted = e.last_turn == turn  # several mentions in one turn count once
    updated = replace(
        e,
        name=canonical,
        type=new_type,
        aliases=tuple(aliases),
        mentions=e.mentions if counted else e.mentions + 1,
        last_seen=now,
        last_turn=turn,
    )
    return updated.with_attributes(m.attributes, at=now)


def _surface(name: str) -> str:
    return " ".join(name.casefold().split())


def _pick(state: EntityState, by_mention: Mapping[str, str], name: str) -> str | None:
    key = fold(name)
    if key in _USER_WORDS:
        return USER_ID
    if key in by_mention:
        return by_mention[key]
    found = state.find(name)
    return found.id if found else None
