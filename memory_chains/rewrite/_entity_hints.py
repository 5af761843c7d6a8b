"""Entity memory → the rewriter's candidate names (``QueryRewriter.rewrite(entities=...)``).

An entity memory remembers every name of the conversation with its type, even those that
left the rewriter's history window. :func:`entity_hints` orders them for one question: the
entities of the type the question asks about first ("sa garantie" asks about a product, "là-bas"
about a place), most recently mentioned first, then the others; people come last unless the
question is about a person, and dates, amounts or e-mail addresses are left out.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from memory_chains._folding import fold
from memory_chains.errors import InvalidInputError

__all__ = ["entity_hints", "entity_source", "question_type"]

# Words of a question that say which kind of entity its reference designates (folded).
_PRODUCT = re.compile(
    r"\b(garantie|prix|coute|coutent|vaut|ram|memoire|processeur|carte graphique|autonomie|"
    r"batterie|ecran|poids|pese|stock|formats?|fichiers?|lit|livr\w*|modele|portable|"
    r"warranty|price|cost|costs|battery|screen|weight|read|reads|support|supports|"
    r"waterproof|library|loans|storage)\b"
)
_PLACE = re.compile(
    r"\b(la-bas|la bas|y aller|climat|quel temps|meteo|froid|chaud|deplacer|circuler|circule|"
    r"aeroport|ville|centre|visiter|there|weather|city|airport|get around|cold|hot|"
    r"travel)\b"
)
_PERSON = re.compile(r"\b(he|she|him|his|her|prof|coach|lui)\b")
_PLACE_TYPES = ("LOCATION", "ORGANIZATION")
_SECONDARY = frozenset({"PERSON", "DATE", "MONEY", "EMAIL", "PHONE"})


def question_type(question: str) -> str:
    """The entity type a follow-up asks about: ``PRODUCT``, ``LOCATION``, ``PERSON`` or "".

    Example:
        >>> question_type("Quelle est sa garantie ?"), question_type("Il fait froid là-bas ?")
        ('PRODUCT', 'LOCATION')
    """
    q = fold(question.replace("’", "'"))
    if _PERSON.search(q):
        return "PERSON"
    if _PLACE.search(q):
        return "LOCATION"
    if _PRODUCT.search(q):
        return "PRODUCT"
    return ""


def _tracker(memory: Any) -> Any:
    tracker = getattr(memory, "tracker", memory)  # EntityMemory wraps an EntityTracker
    if not callable(getattr(tracker, "entities", None)):
        raise InvalidInputError(
            "entity_hints needs an EntityTracker or an EntityMemory (an object with "
            f"entities()), got {type(memory).__name__}"
        )
    return tracker


def entity_hints(memory: Any, question: str, k: int = 5) -> list[str]:
    """Names from ``memory`` for :meth:`QueryRewriter.rewrite`'s ``entities``, best first.

    Args:
        memory: an :class:`~memory_chains.entities.EntityTracker` or an ``EntityMemory``.
        question: the follow-up question.
        k: how many names to return.

    Raises:
        InvalidInputError: ``memory`` is not an entity memory or ``k < 1``.

    Example:
        >>> from memory_chains.entities import EntityTracker, RuleEntityExtractor
        >>> t = EntityTracker(RuleEntityExtractor(use_spacy=False))
        >>> _ = t.observe("Je regarde le Dell XPS 15.", "Bon choix.")
        >>> _ = t.observe("Vous livrez à Marseille ?", "Oui, avec Chronopost.")
        >>> entity_hints(t, "Quelle est sa garantie ?")[0]
        'Dell XPS 15'
    """
    if k < 1:
        raise InvalidInputError(f"k must be >= 1, got {k}")
    entities = list(_tracker(memory).entities())
    wanted = question_type(question)
    accepted = _PLACE_TYPES if wanted == "LOCATION" else (wanted,)

    def key(entity: Any) -> tuple[int, int, int, int]:
        if wanted and entity.type in accepted:
            group = accepted.index(entity.type)
        elif entity.type == "PERSON":
            group = 6
        else:
            group = 5
        return (group, -entity.last_turn, -entity.mentions, entity.first_turn)

    # Dates, amounts, e-mails… are attributes, never what a follow-up's pronoun designates.
    usable = [e for e in entities if e.type not in _SECONDARY or e.type == wanted]
    return [e.name for e in sorted(usable, key=key)[:k]]


def entity_source(memory: Any, k: int = 5) -> Callable[[str], list[str]]:
    """A ``question -> names`` function over ``memory``, for ``build_chain(entity_source=)``.

    Example:
        >>> from memory_chains.entities import EntityTracker, RuleEntityExtractor
        >>> source = entity_source(EntityTracker(RuleEntityExtractor(use_spacy=False)))
        >>> source("Et sa garantie ?")
        []
    """
    _tracker(memory)

    def names(question: str) -> list[str]:
        return entity_hints(memory, question, k)

    return names
