"""Reference resolution: "sa", "celui de Lenovo", "le second", "it", "this one" → an entity.

:func:`resolve` is pure: it reads an :class:`~memory_chains.entities.EntityState` and
decides from recency, the order in which entities were listed, type agreement (nouns such
as "ce produit", "this order", pronouns such as "he") and, in French, the gender the user
used for the entity ("la Clio" / "celle-ci").

Example:
    >>> from memory_chains.entities._state import EntityState
    >>> from memory_chains.entities._types import Extraction, Mention
    >>> s = EntityState().merge(Extraction((Mention("Dell XPS 15", "PRODUCT"),
    ...     Mention("Lenovo ThinkPad X1", "PRODUCT"))), now=1)
    >>> resolve(s, "le second").name, resolve(s, "celui de Dell").name
    ('Lenovo ThinkPad X1', 'Dell XPS 15')
"""

from __future__ import annotations

import re

from memory_chains._folding import fold as fold_text
from memory_chains.entities._fold import fold, tokens
from memory_chains.entities._state import EntityState
from memory_chains.entities._types import Entity

__all__ = ["resolve", "type_hint"]

_NOUN_TYPES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "PRODUCT",
        (
            "produit",
            "product",
            "modele",
            "model",
            "ordinateur",
            "ordi",
            "laptop",
            "portable",
            "pc",
            "telephone",
            "phone",
            "smartphone",
            "appareil",
            "device",
            "article",
            "item",
            "machine",
            "tv",
            "tele",
            "ecran",
            "casque",
            "montre",
            "tablette",
            "tablet",
            "voiture",
            "car",
            "version",
        ),
    ),
    ("ORDER_ID", ("commande", "order", "colis", "parcel", "package", "facture", "invoice")),
    ("TICKET_ID", ("ticket", "case", "dossier", "demande", "request", "incident")),
    ("BOOKING_ID", ("reservation", "booking")),
    (
        "PERSON",
        (
            "personne",
            "person",
            "candidat",
            "candidate",
            "candidate's",
            "client",
            "customer",
            "conseiller",
            "agent",
            "collegue",
            "colleague",
            "guy",
            "woman",
            "man",
            "homme",
            "femme",
            "monsieur",
            "madame",
        ),
    ),
    (
        "ORGANIZATION",
        (
            "entreprise",
            "societe",
            "company",
            "boutique",
            "magasin",
            "store",
            "shop",
            "marque",
            "brand",
            "vendeur",
            "seller",
            "compagnie",
            "airline",
            "firm",
            "employeur",
            "employer",
        ),
    ),
    (
        "LOCATION",
        (
            "ville",
            "city",
            "endroit",
            "place",
            "pays",
            "country",
            "destination",
            "la-bas",
            "there",
            "region",
            "lieu",
        ),
    ),
    ("POSITION", ("poste", "job", "position", "role", "offre")),
    ("SKILL", ("competence", "skill", "langage", "language", "technologie", "technology")),
    ("DATE", ("date", "jour", "day")),
    ("MONEY", ("montant", "amount", "somme", "sum")),
)
_ORDINALS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (0, ("premier", "premiere", "1er", "1ere", "first", "former")),
    (1, ("second", "seconde", "deuxieme", "2e", "2eme", "2nd")),
    (2, ("troisieme", "3e", "3eme", "third", "3rd")),
    (-1, ("dernier", "derniere", "last", "latter")),
)
_PERSON_PRONOUNS = frozenset(["he", "him", "his", "she", "her", "hers", "himself", "herself"])
_THING_PRONOUNS = frozenset(["it", "its", "this", "that", "one", "ceci", "cela", "ca"])
_FEMININE = frozenset(["elle", "celle", "cette", "celle-ci", "celle-la", "la"])
_MASCULINE = frozenset(["il", "celui", "cet", "ce", "celui-ci", "celui-la", "le"])
# Types a pronoun rarely designates.
_BACKGROUND_TYPES = frozenset({"DATE", "MONEY", "EMAIL"})
# Within one turn, which type a bare pronoun most likely designates.
_TYPE_PREFERENCE = (
    "PRODUCT",
    "ORDER_ID",
    "TICKET_ID",
    "BOOKING_ID",
    "PERSON",
    "POSITION",
    "CONCEPT",
    "ORGANIZATION",
    "LOCATION",
    "SKILL",
)
_OF = re.compile(
    r"^(?:celui|celle|ceux|celles|le modele|la version|the one|the model|"
    r"l'offre|le|la)\s+(?:de|d'|du|des|from|by|of|chez)\s*(?P<x>.+)$"
)
_THE_X_ONE = re.compile(r"^(?:the|that|this)\s+(?P<x>.+?)\s+one$")


def _plain(text: str) -> str:
    return fold_text(text.replace("’", "'"))


def type_hint(phrase: str) -> str:
    """The entity type a phrase's noun asks for ("ce produit" → PRODUCT), or "".

    Example:
        >>> type_hint("cette commande"), type_hint("he"), type_hint("sa")
        ('ORDER_ID', 'PERSON', '')
    """
    words = re.findall(r"[\w'-]+", _plain(phrase))
    for w in words:
        for etype, nouns in _NOUN_TYPES:
            if w in nouns or (w.endswith("s") and w[:-1] in nouns):
                return etype
    if any(w in _PERSON_PRONOUNS for w in words):
        return "PERSON"
    return ""


def resolve(state: EntityState, phrase: str, *, question: str = "") -> Entity | None:
    """The entity ``phrase`` refers to, or None when nothing fits.

    Args:
        state: the current entities.
        phrase: a name, a pronoun, an ordinal or a description ("celui de Lenovo").
        question: the full question, used for a type hint when ``phrase`` has none
            ("Quel est le prix du second modèle ?").
    """
    if not state.entities:
        return None
    p = _plain(phrase).strip(" ?!.,;:")
    if not p:
        return None
    words = p.replace("-", " ").split()
    own_hint = type_hint(p)
    # The question's nouns help for ordinals ("le prix du second modèle"), not for pronouns:
    # in "is it available in this store?" the store is not what "it" designates.
    hint = own_hint or (type_hint(question) if question else "")

    # 1. "celui de Lenovo", "the one from Dell", "the Lenovo one".
    m = _OF.match(p) or _THE_X_ONE.match(p)
    if m:
        owner = m.group("x")
        hit = _by_owner(state, owner, hint)
        if hit is not None:
            return hit

    # 2. Ordinals over the latest list of same-typed entities.
    for index, forms in _ORDINALS:
        if any(w in forms for w in words):
            return _ordinal(state, index, hint)

    # 3. A name or alias.
    direct = state.find(phrase)
    if direct is not None and fold(phrase) not in _THING_PRONOUNS and len(fold(phrase)) > 2:
        return direct

    # 4. Pronouns and demonstratives: most recent entity agreeing in type (and gender).
    gender = (
        "f"
        if any(w in _FEMININE for w in words)
        else "m"
        if any(w in _MASCULINE for w in words)
        else ""
    )
    exclude_person = any(w in _THING_PRONOUNS for w in words) and own_hint != "PERSON"
    return _most_recent(state, own_hint, gender=gender, exclude_person=exclude_person)


def _ranked(state: EntityState) -> list[Entity]:
    """Entities from most to least recently mentioned; within a turn, by type preference
    and then mention order."""
    order: dict[str, tuple[int, int, int]] = {}
    for age, ids in enumerate(reversed(state.turns)):
        for pos, eid in enumerate(ids):
            if eid in order:
                continue
            e = state.get(eid)
            pref = _TYPE_PREFERENCE.index(e.type) if e and e.type in _TYPE_PREFERENCE else 99
            order[eid] = (age, pref, pos)
    fallback = (len(state.turns) + 1, 99, 0)
    return sorted(
        state.entities,
        key=lambda e: (order.get(e.id, fallback), -e.last_turn, -e.last_seen),
    )


def _most_recent(
    state: EntityState, hint: str, *, gender: str = "", exclude_person: bool = False
) -> Entity | None:
    ranked = _ranked(state)
    if hint:
        typed = [e for e in ranked if e.type == hint]
        if typed:
            ranked = typed
    else:
        ranked = [e for e in ranked if e.type not in _BACKGROUND_TYPES] or ranked
        if exclude_person:
            ranked = [e for e in ranked if e.type != "PERSON"] or ranked
    if gender:
        agreeing = [e for e in ranked[:4] if _gender(e) in (gender, "")]
        if agreeing:
            return agreeing[0]
    return ranked[0] if ranked else None


def _gender(e: Entity) -> str:
    """The grammatical gender the user gave the entity in French, when an alias shows it."""
    for alias in e.aliases:
        first = _plain(alias).split(" ", 1)[0]
        if first in ("la", "une", "cette", "ma", "ta", "sa"):
            return "f"
        if first in ("le", "un", "ce", "cet", "mon", "ton", "son"):
            return "m"
    return ""


def _ordinal(state: EntityState, index: int, hint: str) -> Entity | None:
    for ids in reversed(state.turns):
        group = [e for e in (state.get(i) for i in ids) if e is not None]
        if hint:
            group = [e for e in group if e.type == hint]
        else:
            group = [e for e in group if e.type not in _BACKGROUND_TYPES]
            if group:
                # The list is made of the turn's most frequent type ("A et B" products).
                counts: dict[str, int] = {}
                for e in group:
                    counts[e.type] = counts.get(e.type, 0) + 1
                best = max(counts, key=lambda t: (counts[t], -_pref(t)))
                group = [e for e in group if e.type == best]
        if len(group) >= 2 and -len(group) <= index < len(group):
            return group[index]
    # No turn listed several of them: count in order of introduction instead.
    pool = [e for e in state.entities if e.type not in _BACKGROUND_TYPES]
    if hint:
        pool = [e for e in state.entities if e.type == hint]
    elif pool:
        best = min({e.type for e in pool}, key=_pref)
        pool = [e for e in pool if e.type == best]
    pool.sort(key=lambda e: (e.first_turn, _id_number(e.id)))
    if len(pool) >= 2 and -len(pool) <= index < len(pool):
        return pool[index]
    return None


def _id_number(entity_id: str) -> int:
    digits = "".join(c for c in entity_id if c.isdigit())
    return int(digits) if digits else 0


def _pref(etype: str) -> int:
    return _TYPE_PREFERENCE.index(etype) if etype in _TYPE_PREFERENCE else 99


def _by_owner(state: EntityState, owner: str, hint: str) -> Entity | None:
    owner_tokens = set(tokens(owner))
    if not owner_tokens:
        return None
    owner_entity = state.find(owner)
    candidates: list[Entity] = []
    for e in _ranked(state):
        if owner_entity is not None and e.id == owner_entity.id:
            continue
        if hint and e.type != hint:
            continue
        if (
            any(owner_tokens <= set(tokens(n)) for n in e.names)
            or (
                owner_entity is not None
                and any(
                    other == owner_entity.id
                    for _, r in state.related(e.id)
                    for other in (r.source, r.target)
                )
            )
            or any(owner_tokens & set(tokens(v)) for v in e.attributes.values())
        ):
            candidates.append(e)
    if candidates:
        return candidates[0]
    return None
