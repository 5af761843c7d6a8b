"""The structured running summary and the pure functions that keep it from drifting.

:class:`SummaryData` (four sections of short items), :class:`SummaryUpdate` (the change set
a model returns), and pure helpers: :func:`parse_update`, :func:`apply_update`,
:func:`carry_forward`, :func:`keep_turn_details`, :func:`fit_budget`, :func:`anchors`.
Nothing here does I/O or calls a model.

Example:
    >>> prev = SummaryData(key_facts=("Order 4821 ships to Lyon.",))
    >>> new = apply_update(prev, parse_update('{"add_facts": ["Paid by card."]}'))
    >>> print(new.render())
    Key facts: Order 4821 ships to Lyon. Paid by card.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from memory_chains._folding import has_word
from memory_chains._json import parse_json_object
from memory_chains._language import detect_language
from memory_chains._terms import terms
from memory_chains.errors import MalformedOutputError
from memory_chains.memory._text import TokenCounter
from memory_chains.stores import Turn

__all__ = [
    "SECTIONS",
    "SummaryData",
    "SummaryUpdate",
    "anchors",
    "apply_update",
    "carry_forward",
    "drop_unsupported",
    "fit_budget",
    "keep_turn_details",
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
# Sections whose items must survive re-summarisation (open questions may be resolved).
_KEPT = ("key_facts", "decisions", "preferences")
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


_NUMBER_RE = re.compile(r"\d+(?:[.,:/h-]\d+)*")
_PLACEHOLDER_RE = re.compile(r"\[[A-Z_]+\]")
_WORD_RE = re.compile(r"[^\W\d_][\w'’-]*")


@functools.lru_cache(maxsize=8192)
def anchors(item: str) -> frozenset[str]:
    """The tokens of an item that must not drift: numbers, dates, ids, placeholders, and
    capitalised words other than the first one (names, products, places), casefolded.

    Example:
        >>> sorted(anchors("Alice ordered the Dell XPS 15 on 12/03 for 1299 €"))
        ['12/03', '1299', '15', 'dell', 'xps']
    """
    found = {m.group() for m in _NUMBER_RE.finditer(item)}
    found |= {m.group().casefold() for m in _PLACEHOLDER_RE.finditer(item)}
    words = _WORD_RE.findall(item)
    for w in words[1:]:
        if w[0].isupper() or any(c.isupper() for c in w[1:]):
            found.add(w.casefold())
    return frozenset(a.casefold() for a in found)


@functools.lru_cache(maxsize=8192)
def _item_words(item: str) -> frozenset[str]:
    return frozenset(_content_words(item))


def _content_words(item: str) -> set[str]:
    return {w.casefold() for w in _WORD_RE.findall(item) if len(w) >= 4}


def carry_forward(previous: SummaryData, new: SummaryData) -> tuple[SummaryData, int]:
    """Re-append every previous fact, decision and preference that ``new`` lost.

    An item is lost when one of its :func:`anchors` no longer appears anywhere in the new
    summary, or, for items without anchors, when fewer than half of its content words do.

    Returns:
        The repaired summary and the number of items restored.

    Example:
        >>> prev = SummaryData(key_facts=("Order 4821 ships to Lyon.",))
        >>> repaired, restored = carry_forward(prev, SummaryData(key_facts=("Order soon.",)))
        >>> repaired.key_facts, restored
        (('Order soon.', 'Order 4821 ships to Lyon.'), 1)
    """
    haystack = new.render().casefold()
    hay_words = _content_words(haystack)
    restored = 0
    sections = {s: list(new.section(s)) for s in SECTIONS}
    for s in _KEPT:
        for item in previous.section(s):
            marks = anchors(item)
            if marks:
                lost = any(m not in haystack for m in marks)
            else:
                words = _item_words(item)
                lost = bool(words) and len(words & hay_words) * 2 < len(words)
            if lost and item not in sections[s]:
                sections[s].append(item)
                restored += 1
    return SummaryData(**{s: tuple(v) for s, v in sections.items()}), restored


_SUPPORT_WINDOW = 3  # consecutive turns a new item may draw its anchors from
_DIGITS_RE = re.compile(r"\d+")
_SENTENCE_RE = re.compile(r"(?<=[.!?…])\s+|\n+")


def _support(text: str) -> frozenset[str]:
    """Index terms of ``text`` plus its digit runs ("G15" also counts as "15")."""
    return frozenset(terms(text)).union(_DIGITS_RE.findall(text))


def _split_anchors(marks: frozenset[str]) -> tuple[frozenset[str], frozenset[str]]:
    """Anchors as (digit runs of the numbers, index terms of the names)."""
    digits: set[str] = set()
    names: set[str] = set()
    for mark in marks:
        if mark[:1].isdigit():
            digits.update(_DIGITS_RE.findall(mark))
        else:
            names.update(terms(mark))
    return frozenset(digits), frozenset(names)


def _needed(item: str) -> tuple[frozenset[str], frozenset[str]]:
    """What :func:`drop_unsupported` looks for: an item's numbers and names."""
    return _split_anchors(anchors(item))


def _turn_names(turn: Turn) -> frozenset[str]:
    """The names a turn states (each sentence's first word excepted), as index terms."""
    marks: set[str] = set()
    for sentence in _SENTENCE_RE.split(f"{turn.human}\n{turn.ai}"):
        marks.update(anchors(sentence))
    return _split_anchors(frozenset(marks))[1]


def _supported(
    digits: frozenset[str],
    names: frozenset[str],
    stretch: Sequence[tuple[frozenset[str], frozenset[str]]],
    previous: Sequence[tuple[frozenset[str], frozenset[str]]],
) -> bool:
    """True when ``stretch`` and the ``previous`` items state every name and every number,
    each number in a turn or item that names one of ``names`` or names nothing at all."""
    parts = [*stretch, *previous]
    if not (digits | names) <= frozenset().union(*(support for support, _ in parts)):
        return False
    return all(
        any(
            digit in support and (not names or not stated or bool(names & stated))
            for support, stated in parts
        )
        for digit in digits
    )


def drop_unsupported(
    previous: SummaryData, new: SummaryData, turns: Sequence[Turn]
) -> tuple[SummaryData, int]:
    """Drop the new items whose anchors no stretch of the folded turns states together.

    A small model summarising a list of similar exchanges tends to continue the pattern
    ("the RTX 4060 is the Dell's graphics card" when only the ASUS was said to have it, or
    the Lenovo's "3 years" of warranty given to the ASUS named in the next turn). A new
    item is kept when all its :func:`anchors` (numbers, names; compared as index
    :func:`~memory_chains._terms.terms`, so "l'ASUS" meets "ASUS") appear within
    ``_SUPPORT_WINDOW`` consecutive folded turns, each of its numbers in a turn that names
    one of the item's names or no name at all ("Its warranty?" / "1 year." is about the
    product named just before; "3 years" said of the Lenovo is not about the ASUS). The
    previous summary's items count as part of every stretch, under the same rule; items
    without anchors, and items already in ``previous``, are kept.
    :func:`keep_turn_details`, which runs after, re-adds verbatim any turn sentence whose
    number or name is then missing.

    Returns:
        The summary without the unsupported items and how many were dropped.

    Example:
        >>> turns = [Turn(1, "Dell XPS 15?", "1 899 €."), Turn(2, "Its warranty?", "1 year."),
        ...          Turn(3, "And the ASUS?", "1 349 €."), Turn(4, "Its GPU?", "An RTX 4060."),
        ...          Turn(5, "Delivery?", "Free.")]
        >>> new = SummaryData(key_facts=("The Dell XPS 15 has a 1 year warranty.",
        ...                              "The Dell XPS 15 has an RTX 4060."))
        >>> drop_unsupported(SummaryData(), new, turns)
        (SummaryData(key_facts=('The Dell XPS 15 has a 1 year warranty.',), decisions=(), \
preferences=(), open_questions=()), 1)
    """
    old_items = [
        (_support(item), _needed(item)[1]) for s in SECTIONS for item in previous.section(s)
    ]
    per_turn = [(_support(f"{t.human}\n{t.ai}"), _turn_names(t)) for t in turns]
    span = max(1, min(_SUPPORT_WINDOW, len(per_turn)))
    stretches = [per_turn[i : i + span] for i in range(max(1, len(per_turn) - span + 1))]
    dropped = 0
    sections: dict[str, tuple[str, ...]] = {}
    for s in SECTIONS:
        kept = []
        for item in new.section(s):
            digits, names = _needed(item)
            if (
                item in previous.section(s)
                or not (digits or names)
                or any(_supported(digits, names, stretch, old_items) for stretch in stretches)
            ):
                kept.append(item)
            else:
                dropped += 1
        sections[s] = tuple(kept)
    return (SummaryData(**sections), dropped) if dropped else (new, 0)


_MAX_KEPT_SENTENCE = 240
_MAX_PREFIX = 100  # a user message up to this long introduces the answer sentence kept


# A lone digit is tracked with the word after it ("2 ans", "7 inch", "3 days"): alone it
# would be found in almost any summary.
_COUNT_RE = re.compile(r"(?<![\w.,])\d\s(?:[^\W\d_]{2,})")


def _numbers(text: str) -> set[str]:
    """Numbers of two or more digits, decimals, dates and ids; a lone digit with the word
    after it; masked placeholders.

    Example:
        >>> sorted(_numbers("Garanti 2 ans, livré en 48 h, 1 349 €."))
        ['2 ans', '349', '48']
    """
    found = {
        m.group() for m in _NUMBER_RE.finditer(text) if sum(c.isdigit() for c in m.group()) >= 2
    }
    found |= {m.group() for m in _COUNT_RE.finditer(text)}
    found |= {m.group().casefold() for m in _PLACEHOLDER_RE.finditer(text)}
    return found


def _marks(sentence: str) -> set[str]:
    """What a kept sentence must not lose: its :func:`_numbers` and its names (capitalised
    words other than the first: a person, a product, a place)."""
    names = {m for m in anchors(sentence) if not m[:1].isdigit() and len(m) > 2}
    return _numbers(sentence) | names


def _absent(mark: str, haystack: str) -> bool:
    """True when ``haystack`` (casefolded) lacks ``mark``: a name as a whole word ("Marc"
    is not in "marche"), a number or placeholder anywhere ("349" is in "1 349")."""
    mark = mark.casefold()
    if mark[:1].isdigit() or mark[:1] == "[":
        return mark not in haystack
    return not has_word(haystack, mark)


def keep_turn_details(summary: SummaryData, turns: Sequence[Turn]) -> tuple[SummaryData, int]:
    """Add, as key facts, the sentences of folded turns whose numbers or names the summary
    misses.

    Numbers, amounts, dates, ids and names are what small models drop most often when they
    summarise ("the Pilates class is on Tuesday at 6 pm" without "with Inès"); a sentence
    carrying one the new summary does not mention is kept verbatim.
    A sentence of the answer is preceded by the user's message when that message is short
    and added nothing itself ("Combien coûte la livraison ? — Elle est offerte dès 50 €"):
    the answer alone rarely says what it is about.

    Returns:
        The completed summary and the number of sentences added.

    Example:
        >>> turns = [Turn(3, "My client number is 48213. Thanks!", "Noted."),
        ...          Turn(4, "Delivery cost?", "It is free from 50 €."),
        ...          Turn(5, "Who teaches yoga?", "Yoga is taught by Marc.")]
        >>> for fact in keep_turn_details(SummaryData(key_facts=("Hi.",)), turns)[0].key_facts:
        ...     print(fact)
        Hi.
        My client number is 48213.
        Delivery cost? — It is free from 50 €.
        Who teaches yoga? — Yoga is taught by Marc.
    """
    haystack = summary.render().casefold()
    facts = list(summary.key_facts)
    added = 0
    for turn in turns:
        human_added = False
        for is_answer, text in ((False, turn.human), (True, turn.ai)):
            for sentence in _SENTENCE_RE.split(text):
                sentence = " ".join(sentence.split())
                if not sentence:
                    continue
                missing = [m for m in _marks(sentence) if _absent(m, haystack)]
                if not missing:
                    continue
                kept = _cut(sentence, _MAX_KEPT_SENTENCE)
                if is_answer and not human_added and len(turn.human) <= _MAX_PREFIX:
                    kept = f"{' '.join(turn.human.split())} — {kept}"
                human_added = True  # the user's message is in the summary now
                facts.append(kept)
                haystack += "\n" + kept.casefold()
                added += 1
    if not added:
        return summary, 0
    return replace(summary, key_facts=tuple(facts)), added


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
