"""How a candidate meets the stored facts: :func:`anchors`, :func:`restates` and the merge plan.

:func:`restates` decides whether a candidate says the same as a current fact (cosine,
the same anchors — numbers, names, days, times — and a shared value word);
:func:`_plan` is the pure step of :meth:`~memory_chains.longterm.FactMemory.add`: given
the stored facts, the candidates and their vectors, the facts to write to merge,
supersede or add each one (the rule and its measures are in
:mod:`memory_chains.longterm._facts`). No store, no model.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from memory_chains._calendar import CALENDAR_WORDS, PARTS_OF_DAY
from memory_chains._folding import fold
from memory_chains._terms import STOP_WORDS
from memory_chains.longterm._fact_types import Fact, FactCandidate, FactChanges
from memory_chains.longterm._vectors import cosine

__all__ = ["anchors", "restates"]

_MAX_SOURCES = 20
_TIME_WORDS = CALENDAR_WORDS | {fold(w) for w in PARTS_OF_DAY}
_NUMBER_WORDS = frozenset([
    "deux", "trois", "quatre", "cinq", "six", "sept", "huit", "neuf", "dix", "onze", "douze",
    "vingt", "trente", "cent", "mille", "two", "three", "four", "five", "seven", "eight",
    "nine", "ten", "eleven", "twelve", "twenty", "hundred", "thousand",
])  # fmt: skip
# words that never carry a fact's value (the last *other* word usually does)
_FUNCTION_WORDS = STOP_WORDS | {"utilisateur", "utilisatrice", "user", "jours"}
_TOKEN = re.compile(r"[\w-]+")


def anchors(text: str) -> frozenset[str]:
    """The words a restatement must keep: numbers, capitalised names, days and times.

    The first word is ignored (it is capitalised anyway).

    Example:
        >>> sorted(anchors("L'utilisateur préfère le Pilates le samedi à 10 h."))
        ['10', 'pilates', 'samedi']
    """
    found: set[str] = set()
    for i, match in enumerate(_TOKEN.finditer(text)):
        word = match.group()
        folded = fold(word)
        if (
            any(ch.isdigit() for ch in word)
            or folded in _TIME_WORDS
            or folded in _NUMBER_WORDS
            or (
                i > 0
                and word[:1].isupper()
                and match.start() > 0
                and text[match.start() - 1] != "'"
            )
        ):
            found.add(folded)
    return frozenset(found)


def _content_words(text: str) -> list[str]:
    words = []
    for word in _TOKEN.findall(fold(text)):
        if len(word) >= 3 and word not in _FUNCTION_WORDS:
            words.append(word[:-1] if len(word) > 4 and word.endswith("s") else word)
    return words


def restates(new_text: str, old_text: str, similarity: float, threshold: float) -> bool:
    """Whether ``new_text`` says the same as ``old_text``.

    True for the same text (case and accents aside), or when all three hold: cosine
    ``similarity >= threshold``, the same :func:`anchors` (numbers, names, days), and the
    last content word of one sentence — where French and English put the value ("joue de
    la *guitare*") — appears in the other. e5 alone scores a changed value as close as a
    paraphrase; the word checks keep a change from being merged away, at the cost of
    missing some paraphrases (a duplicate row is cheaper than a lost fact).

    Example:
        >>> restates("Il pratique la guitare.", "Il joue de la guitare.", 0.98, 0.95)
        True
        >>> restates("Il habite à Nantes.", "Il habite à Lyon.", 0.99, 0.95)
        False
        >>> restates("Il joue du piano.", "Il joue de la guitare.", 0.98, 0.95)
        False
    """
    if fold(new_text) == fold(old_text):
        return True
    if similarity < threshold or anchors(new_text) != anchors(old_text):
        return False
    new_words, old_words = _content_words(new_text), _content_words(old_text)
    if not new_words or not old_words:
        return False
    return new_words[-1] in old_words or old_words[-1] in new_words


def _plan(
    existing: Sequence[Fact],
    candidates: Sequence[FactCandidate],
    vectors: Sequence[Sequence[float]],
    *,
    source: tuple[str, int | None] | None,
    when: float,
    now: float,
    scope: str,
    merge_threshold: float,
    supersede_threshold: float,
    new_id: Callable[[], str],
) -> tuple[dict[str, Fact], FactChanges]:
    """Pure: the facts to write (by id) after adding ``candidates`` to ``existing``."""
    facts = {f.id: f for f in existing}
    writes: dict[str, Fact] = {}
    added: list[str] = []
    merged: list[str] = []
    superseded: list[str] = []
    for candidate, raw in zip(candidates, vectors, strict=True):
        vector = np.asarray(raw, dtype="<f4")
        current = [f for f in facts.values() if f.is_current]
        scored = [(cosine(vector, f.vector) if f.vector is not None else 0.0, f) for f in current]
        same = [(s, f) for s, f in scored if restates(candidate.text, f.text, s, merge_threshold)]
        if same:
            _, target = max(same, key=lambda sf: sf[0])
            sources = target.sources
            if source is not None and source not in sources:
                sources = (*sources, source)[-_MAX_SOURCES:]
            key = target.key or candidate.key
            if sources != target.sources or key != target.key:
                facts[target.id] = writes[target.id] = replace(target, sources=sources, key=key)
                if target.id not in added and target.id not in merged:
                    merged.append(target.id)
            continue
        fact_id = new_id()
        old: list[Fact] = []
        if candidate.key:
            old = [f for f in current if f.key == candidate.key]
        elif candidate.supersedes and scored:
            best_score, best = max(scored, key=lambda sf: sf[0])
            if best_score >= supersede_threshold:
                old = [best]
        for f in old:
            facts[f.id] = writes[f.id] = replace(f, valid_to=when, superseded_by=fact_id)
            superseded.append(f.id)
        fact = Fact(
            id=fact_id,
            text=candidate.text,
            key=candidate.key,
            scope=scope,
            sources=() if source is None else (source,),
            created_at=now,
            valid_from=when,
            vector=vector,
        )
        facts[fact_id] = writes[fact_id] = fact
        added.append(fact_id)
    return writes, FactChanges(tuple(added), tuple(merged), tuple(superseded))
