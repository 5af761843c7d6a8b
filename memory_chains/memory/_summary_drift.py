"""The guards that keep a running summary from drifting: pure functions over summaries and turns.

After a model rewrites the summary, :func:`carry_forward` re-appends the previous facts,
decisions and preferences it lost, :func:`drop_unsupported` drops the new items whose
numbers and names the folded turns never stated together, and :func:`keep_turn_details`
adds verbatim the turn sentences whose numbers or names the summary misses; :func:`anchors`
is what they compare (numbers, dates, ids, placeholders, names). Nothing here does I/O or
calls a model.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import replace

from memory_chains._folding import has_word
from memory_chains._terms import terms
from memory_chains.memory._summary_data import SECTIONS, SummaryData, _cut
from memory_chains.stores import Turn

__all__ = ["anchors", "carry_forward", "drop_unsupported", "keep_turn_details"]

# Sections whose items must survive re-summarisation (open questions may be resolved).
_KEPT = ("key_facts", "decisions", "preferences")
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
