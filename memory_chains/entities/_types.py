"""Typed values of the entity memory: entities, relations, extractions, type presets.

* :class:`Entity`: one thing the conversation talks about (canonical name, aliases, type,
  attributes with their history, mention count, first and last seen).
* :class:`AttributeChange`: an attribute value that was replaced, kept as history.
* :class:`Relation`: a typed edge between two entities (``COMPARES_TO``, ``PREFERS``…).
* :class:`Mention`, :class:`RelationMention`, :class:`Extraction`: what an extractor found
  in one turn, and whether it failed.
* Type presets: :data:`DEFAULT_TYPES`, :data:`ECOMMERCE_TYPES`, :data:`SUPPORT_TYPES`,
  :data:`HR_TYPES`, :data:`TRAVEL_TYPES`, and :data:`PRESETS` by name.

All values are frozen; the memory builds new ones instead of mutating them.

Example:
    >>> e = Entity(id="e1", name="Dell XPS 15", type="PRODUCT")
    >>> e.with_attributes({"prix": "1599 €"}, at=10.0).attributes
    {'prix': '1599 €'}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

__all__ = [
    "BUILTIN_RELATIONS",
    "DEFAULT_TYPES",
    "ECOMMERCE_TYPES",
    "HR_TYPES",
    "PRESETS",
    "SUPPORT_TYPES",
    "TRAVEL_TYPES",
    "AttributeChange",
    "Entity",
    "Extraction",
    "Mention",
    "Relation",
    "RelationMention",
    "resolve_types",
]

DEFAULT_TYPES: tuple[str, ...] = (
    "PERSON",
    "PRODUCT",
    "ORGANIZATION",
    "LOCATION",
    "DATE",
    "MONEY",
    "CONCEPT",
)
ECOMMERCE_TYPES: tuple[str, ...] = (*DEFAULT_TYPES, "ORDER_ID", "EMAIL")
SUPPORT_TYPES: tuple[str, ...] = (*DEFAULT_TYPES, "TICKET_ID", "ORDER_ID", "EMAIL", "ISSUE")
HR_TYPES: tuple[str, ...] = (
    "PERSON",
    "ORGANIZATION",
    "LOCATION",
    "DATE",
    "MONEY",
    "POSITION",
    "SKILL",
    "EDUCATION",
)
TRAVEL_TYPES: tuple[str, ...] = (*DEFAULT_TYPES, "BOOKING_ID")
PRESETS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "default": DEFAULT_TYPES,
        "ecommerce": ECOMMERCE_TYPES,
        "support": SUPPORT_TYPES,
        "hr": HR_TYPES,
        "travel": TRAVEL_TYPES,
    }
)
BUILTIN_RELATIONS: tuple[str, ...] = (
    "WORKS_AT",
    "LOCATED_IN",
    "OWNS",
    "COMPARES_TO",
    "PART_OF",
    "PREFERS",
    "INTERESTED_IN",
    "MADE_BY",
)


def resolve_types(types: str | tuple[str, ...] | list[str] | None) -> tuple[str, ...]:
    """Turn a preset name or a list of type names into a clean tuple of upper-case types.

    Raises:
        InvalidInputError: unknown preset, empty list or a malformed type name.

    Example:
        >>> resolve_types("hr")[-2:], resolve_types(["product", "Person"])
        (('SKILL', 'EDUCATION'), ('PRODUCT', 'PERSON'))
    """
    from memory_chains.errors import InvalidInputError

    if types is None:
        return DEFAULT_TYPES
    if isinstance(types, str):
        try:
            return PRESETS[types.strip().lower()]
        except KeyError:
            raise InvalidInputError(
                f"unknown entity type preset {types!r}; use one of {', '.join(PRESETS)} "
                "or pass a list of type names"
            ) from None
    out: list[str] = []
    for t in types:
        name = str(t).strip().upper()
        if not name or not name.replace("_", "").isalnum():
            raise InvalidInputError(f"invalid entity type {t!r}: use letters, digits and _")
        if name not in out:
            out.append(name)
    if not out:
        raise InvalidInputError("entity types must not be empty")
    return tuple(out)


@dataclass(frozen=True)
class AttributeChange:
    """A value an attribute held until it was replaced.

    Attributes:
        name: the attribute ("prix").
        value: the old value ("1699 €").
        since: when the old value was first recorded (epoch seconds).
        until: when it was replaced (epoch seconds).
    """

    name: str
    value: str
    since: float
    until: float


@dataclass(frozen=True)
class Relation:
    """A directed, typed relation between two entities, by entity id.

    Example:
        >>> Relation("e1", "COMPARES_TO", "e2").kind
        'COMPARES_TO'
    """

    source: str
    kind: str
    target: str
    first_seen: float = 0.0
    last_seen: float = 0.0
    mentions: int = 1


@dataclass(frozen=True)
class Entity:
    """One entity of the conversation.

    Attributes:
        id: stable identifier inside one user's memory.
        name: canonical name (the most complete form seen).
        type: one of the configured types.
        aliases: other surface forms seen ("XPS 15", "le XPS"), original spelling.
        attributes: current value of each attribute.
        attribute_since: when each current value was recorded (epoch seconds).
        history: replaced values, oldest first.
        mentions: how many turns mentioned it.
        first_seen: epoch seconds of the first mention.
        last_seen: epoch seconds of the latest mention.
        first_turn: turn number of the first mention (1-based).
        last_turn: turn number of the latest mention.

    Example:
        >>> e = Entity(id="e1", name="Lenovo ThinkPad X1", type="PRODUCT")
        >>> e2 = e.with_attributes({"prix": "1799 €"}, at=1.0)
        >>> e3 = e2.with_attributes({"prix": "1699 €"}, at=2.0)
        >>> e3.attributes["prix"], e3.history[0].value, e.attributes
        ('1699 €', '1799 €', {})
    """

    id: str
    name: str
    type: str
    aliases: tuple[str, ...] = ()
    attributes: Mapping[str, str] = field(default_factory=dict)
    attribute_since: Mapping[str, float] = field(default_factory=dict)
    history: tuple[AttributeChange, ...] = ()
    mentions: int = 1
    first_seen: float = 0.0
    last_seen: float = 0.0
    first_turn: int = 0
    last_turn: int = 0

    @property
    def names(self) -> tuple[str, ...]:
        """The canonical name followed by every alias."""
        return (self.name, *self.aliases)

    def with_attributes(self, new: Mapping[str, str], *, at: float) -> Entity:
        """A copy with ``new`` attribute values; replaced values move to :attr:`history`."""
        attrs = dict(self.attributes)
        since = dict(self.attribute_since)
        history = list(self.history)
        for key, value in new.items():
            key, value = str(key).strip(), str(value).strip()
            if not key or not value:
                continue
            old = attrs.get(key)
            if old == value:
                continue
            if old is not None:
                history.append(AttributeChange(key, old, since.get(key, at), at))
            attrs[key] = value
            since[key] = at
        return replace(self, attributes=attrs, attribute_since=since, history=tuple(history))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary (see :meth:`from_dict`)."""
        return {
            "id": self.id,
            "name": self.name,
            "type": self.type,
            "aliases": list(self.aliases),
            "attributes": dict(self.attributes),
            "attribute_since": dict(self.attribute_since),
            "history": [
                {"name": h.name, "value": h.value, "since": h.since, "until": h.until}
                for h in self.history
            ],
            "mentions": self.mentions,
            "first_seen": self.first_seen,
            "last_seen": self.last_seen,
            "first_turn": self.first_turn,
            "last_turn": self.last_turn,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Entity:
        """Rebuild an entity written by :meth:`to_dict`."""
        return cls(
            id=str(data["id"]),
            name=str(data["name"]),
            type=str(data["type"]),
            aliases=tuple(str(a) for a in data.get("aliases", ())),
            attributes={str(k): str(v) for k, v in dict(data.get("attributes", {})).items()},
            attribute_since={
                str(k): float(v) for k, v in dict(data.get("attribute_since", {})).items()
            },
            history=tuple(
                AttributeChange(
                    str(h["name"]), str(h["value"]), float(h["since"]), float(h["until"])
                )
                for h in data.get("history", ())
            ),
            mentions=int(data.get("mentions", 1)),
            first_seen=float(data.get("first_seen", 0.0)),
            last_seen=float(data.get("last_seen", 0.0)),
            first_turn=int(data.get("first_turn", 0)),
            last_turn=int(data.get("last_turn", 0)),
        )


@dataclass(frozen=True)
class Mention:
    """An entity as an extractor found it in one turn (before merging).

    Example:
        >>> Mention("XPS 15", "PRODUCT", {"garantie": "2 ans"}).attributes["garantie"]
        '2 ans'
    """

    name: str
    type: str
    attributes: Mapping[str, str] = field(default_factory=dict)
    confidence: float = 1.0  # how sure the extractor is of the type (the model says)


@dataclass(frozen=True)
class RelationMention:
    """A relation as an extractor found it, between two mention names."""

    source: str
    kind: str
    target: str


@dataclass(frozen=True)
class Extraction:
    """What an extractor returned for one turn.

    Attributes:
        mentions: entities found, in order of appearance.
        relations: relations found.
        model_calls: how many model calls this extraction made (0 for rules).
        error: empty on success; otherwise why extraction failed (the turn itself is kept).
        raw: the model's raw answer when extraction failed, for diagnosis.
        house: the organization the assistant speaks for in this turn ("" when unknown).
        house_stated: True when the turn says so ("Chez X, nous…"), False when ``house`` is
            only the one organization the assistant names.
    """

    mentions: tuple[Mention, ...] = ()
    relations: tuple[RelationMention, ...] = ()
    model_calls: int = 0
    error: str = ""
    raw: str = ""
    house: str = ""
    house_stated: bool = False

    @property
    def ok(self) -> bool:
        """True when the extraction succeeded."""
        return not self.error
