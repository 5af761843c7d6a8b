"""Prompt priority of entities and the context block rendered under a token budget.

:func:`priority` scores an entity from recency (turns since its last mention), mention
count and how well it matches the current question. :func:`render_context` writes the most
relevant entities, with attributes and relations, and shrinks or drops the least relevant
ones first so that the block never exceeds ``max_tokens`` as counted by ``token_counter``.

Example:
    >>> from memory_chains.entities._state import USER_ID, EntityState
    >>> from memory_chains.entities._types import Extraction, Mention
    >>> s = EntityState().merge(Extraction((Mention("Dell XPS 15", "PRODUCT",
    ...     {"prix": "1599 €"}),)), now=1)
    >>> print(render_context(s, question="garantie du XPS ?", max_tokens=50,
    ...     token_counter=lambda t: len(t.split())))
    Known entities (most relevant first):
    - Dell XPS 15 [PRODUCT]; prix: 1599 €
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memory_chains.entities._fold import _singular, fold, is_alias
from memory_chains.entities._state import USER_ID, EntityState
from memory_chains.entities._types import Entity

__all__ = ["PriorityWeights", "approx_tokens", "priority", "rank", "render_context"]

TokenCounter = Callable[[str], int]
HEADER = "Known entities (most relevant first):"


def approx_tokens(text: str) -> int:
    """A rough offline token count (about 4 characters per token).

    Example:
        >>> approx_tokens("abcdefgh")
        2
    """
    return math.ceil(len(text) / 4)


@dataclass(frozen=True)
class PriorityWeights:
    """Weights of the three signals of :func:`priority`.

    Attributes:
        recency: weight of ``0.5 ** (turns since last mention / half_life)``.
        mentions: weight of ``log(1 + mentions) / log(1 + max mentions)``.
        match: weight of the match with the question (1 for a name, partial for words).
        half_life: turns after which the recency signal halves.
    """

    recency: float = 1.0
    mentions: float = 0.5
    match: float = 2.0
    half_life: float = 3.0


def match_score(entity: Entity, question: str) -> float:
    """1.0 when the question names the entity, else the share of its name's words it uses.

    Example:
        >>> from memory_chains.entities._types import Entity
        >>> match_score(Entity("e1", "Dell XPS 15", "PRODUCT"), "prix du xps 15 ?")
        1.0
    """
    q = fold(question)
    if not q:
        return 0.0
    q_words = q.split()
    q_singular = set(_singular(tuple(q_words)))
    padded = f" {q} "
    best = 0.0
    for n in entity.names:
        fn = fold(n)
        if fn and f" {fn} " in padded:
            return 1.0
        words = fn.split()
        # Any n-gram of the question that is an alias of the name counts fully (an alias
        # shares a word with the name: without one, no n-gram can be).
        shares = not q_singular.isdisjoint(_singular(tuple(words)))
        for size in range(len(words) if shares else 0, 0, -1):
            for i in range(len(q_words) - size + 1):
                if is_alias(" ".join(q_words[i : i + size]), n, entity.type):
                    return 1.0
        if words:
            best = max(best, 0.6 * sum(w in q_words for w in words if len(w) > 2) / len(words))
    return best


def priority(
    entity: Entity,
    state: EntityState,
    question: str = "",
    weights: PriorityWeights = PriorityWeights(),
) -> float:
    """Prompt priority of ``entity`` now: recency + mentions + match with the question."""
    age = max(0, state.turn - entity.last_turn)
    recency = 0.5 ** (age / weights.half_life) if weights.half_life > 0 else 0.0
    most = max((e.mentions for e in state.entities), default=1)
    mentions = math.log1p(entity.mentions) / math.log1p(most) if most else 0.0
    return (
        weights.recency * recency
        + weights.mentions * mentions
        + weights.match * match_score(entity, question)
    )


def rank(
    state: EntityState,
    question: str = "",
    weights: PriorityWeights = PriorityWeights(),
) -> list[Entity]:
    """Entities by decreasing priority (ties: most recent first)."""
    return sorted(
        state.entities,
        key=lambda e: (-priority(e, state, question, weights), -e.last_turn, -e.last_seen),
    )


def _line(entity: Entity, state: EntityState, *, full: bool) -> str:
    parts = [f"- {entity.name} [{entity.type}]"]
    if not full:
        return parts[0]
    if entity.aliases:
        parts.append("aka " + ", ".join(dict.fromkeys(entity.aliases[:3])))
    for key, value in entity.attributes.items():
        older = [h.value for h in entity.history if h.name == key]
        parts.append(f"{key}: {value}" + (f" (before: {older[-1]})" if older else ""))
    line = "; ".join(parts)
    rels = []
    for direction, r in state.related(entity.id):
        other_id = r.target if direction == "out" else r.source
        other = state.get(other_id)
        name = other.name if other is not None else "the user" if other_id == USER_ID else ""
        if name:
            rels.append(f"{r.kind} {name}" if direction == "out" else f"{name} {r.kind} it")
    if rels:
        line += "\n  relations: " + "; ".join(rels[:4])
    return line


def render_context(
    state: EntityState,
    *,
    question: str = "",
    max_tokens: int = 256,
    token_counter: TokenCounter = approx_tokens,
    limit: int = 12,
    weights: PriorityWeights = PriorityWeights(),
    ranked: Sequence[Entity] | None = None,
) -> str:
    """The context block: most relevant entities first, never over ``max_tokens``.

    Each entity gets a full line (aliases, attributes with the previous value, relations)
    if it fits, else a short line (name and type), else it is left out; an empty string
    is returned when not even the header and one entity fit.
    """
    order = list(ranked) if ranked is not None else rank(state, question, weights)
    lines: list[str] = []
    for entity in order[:limit]:
        for full in (True, False):
            candidate = "\n".join([HEADER, *lines, _line(entity, state, full=full)])
            if token_counter(candidate) <= max_tokens:
                lines.append(_line(entity, state, full=full))
                break
    return "\n".join([HEADER, *lines]) if lines else ""
