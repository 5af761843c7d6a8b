"""The structured running summary and the pure functions that keep it from drifting.

:class:`SummaryData` (four sections of short items), :class:`SummaryUpdate` (the change set
a model returns), and the pure helpers that read and apply it: :func:`parse_update`,
:func:`apply_update`, :func:`fit_budget`. The guards against drift (:func:`carry_forward`,
:func:`drop_unsupported`, :func:`keep_turn_details`) are in
:mod:`memory_chains.memory._summary_drift`. Nothing here does I/O or calls a model.

Example:
    >>> prev = SummaryData(key_facts=("Order 4821 ships to Lyon.",))
    >>> new = apply_update(prev, parse_update('{"add_facts": ["Paid by card."]}'))
    >>> print(new.render())
    Key facts: Order 4821 ships to Lyon. Paid by card.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from memory_chains._json import parse_json_object
from memory_chains._language import detect_language
from memory_chains.errors import MalformedOutputError
from memory_chains.memory._text import TokenCounter

__all__ = [
    "SECTIONS",
    "SummaryData",
    "SummaryUpdate",
    "apply_update",
    "fit_budget",
    "parse_update",
]

SECTIONS = ("key_facts", "decisions", "preferences", "open_questions")
# Section titles in the items' language (the prompt's numbered view stays in English).
_TITLES = {
    "en": {
        "key_facts": "Key facts",
        "decisions": "Decisions and commitments",
        "preferences": "User preferences",
        "open_questions": "Open questions",
    },
    "fr": {
        "key_facts": "Faits clés",
        "decisions": "Décisions et engagements",
        "preferences": "Préférences de l'utilisateur",
        "open_questions": "Questions ouvertes",
    },
}
_CODES = {"key_facts": "F", "decisions": "D", "preferences": "P", "open_questions": "Q"}
_ADD_FIELDS = {
    "add_facts": "key_facts",
    "add_decisions": "decisions",
    "add_preferences": "preferences",
    "add_questions": "open_questions",
}
_MAX_ITEM_CHARS = 400
_CLAUSE_RE = re.compile(r"\s*;\s+|(?<=[.!?])\s+(?=[A-ZÀ-Ý0-9])")


@dataclass(frozen=True)
class SummaryData:
    """A structured running summary: four sections of short items, oldest first.

    Example:
        >>> d = SummaryData(key_facts=("Alice lives in Lyon.",), open_questions=("Budget?",))
        >>> print(d.render())
        Key facts: Alice lives in Lyon.
        Open questions: Budget?
    """

    key_facts: tuple[str, ...] = ()
    decisions: tuple[str, ...] = ()
    preferences: tuple[str, ...] = ()
    open_questions: tuple[str, ...] = ()

    def section(self, name: str) -> tuple[str, ...]:
        """Items of one of :data:`SECTIONS`."""
        items: tuple[str, ...] = getattr(self, name)
        return items

    def all_items(self) -> tuple[str, ...]:
        """Every item, section by section in the order of :data:`SECTIONS`.

        Example:
            >>> SummaryData(key_facts=("a",), open_questions=("b",)).all_items()
            ('a', 'b')
        """
        return tuple(item for s in SECTIONS for item in self.section(s))

    def is_empty(self) -> bool:
        """True when every section is empty."""
        return not any(self.section(s) for s in SECTIONS)

    def render(self) -> str:
        """One line per non-empty section, items separated by spaces; the section titles are
        French when the items are (:func:`~memory_chains._language.detect_language`).

        Example:
            >>> print(SummaryData(key_facts=("Claire vit à Lyon.",)).render())
            Faits clés: Claire vit à Lyon.
        """
        items = " ".join(self.all_items())
        titles = _TITLES[detect_language(items)]
        return "\n".join(
            f"{titles[s]}: {' '.join(_sentence(i) for i in self.section(s))}"
            for s in SECTIONS
            if self.section(s)
        )

    def numbered(self) -> str:
        """Items with ids (``F1``, ``D2``…) for the summarisation prompt."""
        lines = []
        for s in SECTIONS:
            lines.append(f"{_TITLES['en'][s]}:")
            items = self.section(s)
            lines.extend(f"  {_CODES[s]}{i}. {item}" for i, item in enumerate(items, 1))
            if not items:
                lines.append("  (none)")
        return "\n".join(lines)

    def to_json(self) -> dict[str, list[str]]:
        """Plain JSON form (stored in ``SummaryState.data``)."""
        return {s: list(self.section(s)) for s in SECTIONS}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> SummaryData:
        """Tolerant inverse of :meth:`to_json` (unknown keys and non-strings are dropped)."""
        data = data or {}
        return cls(**{s: _clean_items(data.get(s)) for s in SECTIONS})


def _sentence(item: str) -> str:
    return item if item[-1:] in ".!?…" else item + "."


_ID_ONLY_RE = re.compile(r"[FDPQ]\d+(?:\s*[;,.]?\s*[FDPQ]\d+)*\s*[.;]?", re.IGNORECASE)
# The prompt's own markers echoed back: "(none)" as an item, "Q1. " before one.
_EMPTY_RE = re.compile(r"\(?\s*(?:none|aucune?|rien|n/?a)\s*\)?\s*\.?", re.IGNORECASE)
_ID_PREFIX_RE = re.compile(r"^[FDPQ]\d+\.\s+")


def _clean_items(value: object) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)):
        return ()
    out: list[str] = []
    seen: set[str] = set()
    for v in value:
        if not isinstance(v, str):
            continue
        for text in _split_item(_ID_PREFIX_RE.sub("", " ".join(v.split()))):
            if _ID_ONLY_RE.fullmatch(text) or _EMPTY_RE.fullmatch(text):
                continue  # e.g. "Q1; Q2" or "(none)": the prompt's markers, not content
            if text and text.casefold() not in seen:
                seen.add(text.casefold())
                out.append(text)
    return tuple(out)


def _split_item(text: str, limit: int = _MAX_ITEM_CHARS) -> list[str]:
    """An item over ``limit`` characters (a list the model ran together) as several items,
    cut between its clauses ("; " or sentences), never inside a word.

    Example:
        >>> run_on = ("The Dell XPS 15 costs 1 899 €; its warranty is 1 year, extensible to "
        ...           "3 years; the Lenovo ThinkPad X1 Carbon is under warranty for 3 years. "
        ...           "Delivery is free from 50 €.")
        >>> for item in _split_item(run_on, limit=100):
        ...     print(item)
        The Dell XPS 15 costs 1 899 €; its warranty is 1 year, extensible to 3 years
        the Lenovo ThinkPad X1 Carbon is under warranty for 3 years. Delivery is free from 50 €.
    """
    if len(text) <= limit:
        return [text]
    items: list[str] = []
    for clause in (c.strip(" ;") for c in _CLAUSE_RE.split(text)):
        if not clause:
            continue
        joint = " " if items[-1:] and items[-1][-1] in ".!?" else "; "
        if items and len(items[-1]) + len(joint) + len(clause) <= limit:
            items[-1] += joint + clause
        else:
            items.append(_cut(clause, limit))
    return items


@dataclass(frozen=True)
class SummaryUpdate:
    """The change set a model returns: items to add per section, item ids to remove.

    Example:
        >>> parse_update('{"add_facts": ["X costs 12 €"], "remove": ["Q1"]}').remove
        ('Q1',)
    """

    add: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    remove: tuple[str, ...] = ()


def parse_update(raw: str) -> SummaryUpdate:
    """Parse a model's JSON change set, repairing code fences, surrounding prose and an
    answer cut at its token cap (its complete items are kept, the one cut mid-sentence is
    dropped; :func:`~memory_chains.entities.parse_json_object`).

    A full summary (keys ``key_facts``, ``decisions``…) is accepted too and read as items
    to add. Unknown keys are ignored.

    Raises:
        MalformedOutputError: no JSON object can be found (``raw`` is kept on the error).
    """
    try:
        obj = parse_json_object(raw, keep_cut_string=False)
    except MalformedOutputError as exc:
        raise MalformedOutputError(
            "the summary model did not answer with a JSON object", raw=raw
        ) from exc
    add: dict[str, tuple[str, ...]] = {}
    for key, section in (*_ADD_FIELDS.items(), *((s, s) for s in SECTIONS)):
        items = _clean_items(obj.get(key))
        if items:
            add[section] = (*add.get(section, ()), *items)
    remove = tuple(
        r.strip().upper() for r in obj.get("remove", []) or [] if isinstance(r, str) and r.strip()
    )
    return SummaryUpdate(add, remove)


def apply_update(previous: SummaryData, update: SummaryUpdate) -> SummaryData:
    """Previous items kept verbatim, minus the removed ids, plus the new items (deduplicated).

    Example:
        >>> prev = SummaryData(key_facts=("A",), open_questions=("Q?",))
        >>> apply_update(prev, SummaryUpdate({"key_facts": ("B",)}, ("Q1",)))
        SummaryData(key_facts=('A', 'B'), decisions=(), preferences=(), open_questions=())
    """
    removed = set(update.remove)
    sections: dict[str, tuple[str, ...]] = {}
    for s in SECTIONS:
        kept = [
            item
            for i, item in enumerate(previous.section(s), 1)
            if f"{_CODES[s]}{i}" not in removed
        ]
        for item in update.add.get(s, ()):
            _merge_item(kept, item)
        sections[s] = tuple(kept)
    return SummaryData(**sections)


def _merge_item(items: list[str], new: str) -> None:
    """Append ``new`` unless an item already says it; an item that ``new`` extends (it is
    contained in it) is replaced in place, so restated facts do not pile up."""
    key = new.casefold().rstrip(" .")
    for i, old in enumerate(items):
        old_key = old.casefold().rstrip(" .")
        if old_key in key:
            items[i] = new if len(key) > len(old_key) else old
            return
        if key in old_key:
            return
    items.append(new)


def fit_budget(data: SummaryData, max_tokens: int, count: TokenCounter) -> tuple[SummaryData, int]:
    """Drop the oldest items until the rendering fits ``max_tokens``.

    Open questions go first, then preferences, then key facts, then decisions.

    Returns:
        The summary that fits and the number of items dropped.
    """
    total = count(data.render())
    if total <= max_tokens:
        return data, 0
    dropped = 0
    sections = {s: list(data.section(s)) for s in SECTIONS}
    order = ("open_questions", "preferences", "key_facts", "decisions")
    # Estimate with per-item costs and confirm on the real rendering only near the budget:
    # one count per dropped item instead of one rendering per item.
    estimate = total
    while True:
        victim = next((s for s in order if sections[s]), None)
        if victim is None:
            break
        estimate -= count(sections[victim].pop(0))
        dropped += 1
        if estimate - 3 * dropped <= max_tokens:
            current = SummaryData(**{s: tuple(v) for s, v in sections.items()})
            estimate = count(current.render())
            if estimate <= max_tokens:
                break
    current = SummaryData(**{s: tuple(v) for s, v in sections.items()})
    return current, dropped


def _cut(text: str, limit: int) -> str:
    """``text`` cut at a word to at most ``limit`` characters, "…" marking the cut."""
    if len(text) <= limit:
        return text
    return text[: limit - 2].rsplit(" ", 1)[0].rstrip(" ,;:") + " …"
