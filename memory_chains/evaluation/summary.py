"""How faithful a running summary is: facts kept and numbers given to the wrong thing.

Each case of the data set (``memory_chains/evaluation/data/summary_dev.jsonl``, scripted
French and English shop, gym, travel and support conversations) lists its turns and its
gold facts, each an optional ``entity`` ("Acer", "Pilates") with a ``value`` ("899",
"Inès") and the turn that states it. :func:`evaluate_summary` feeds the turns to a fresh
short-term memory, then reads what the next prompt would get (summary items and verbatim
turns) and reports:

* ``fact_recall``: gold facts some context item states (entity and value together);
* ``summary_recall``: the same for the facts of the turns folded into the summary, counted
  in the summary alone (what the summary had to keep);
* ``misattributed_items``: summary items that name a case entity together with a number
  that the gold facts give only to other entities ("the ASUS is guaranteed 3 years" when
  the 3 years were the Lenovo's): the error a small model makes when it continues the
  pattern of similar exchanges;
* context tokens, compactions, failed compactions and seconds.

Numbers are compared as numbers ("1 199 €" states "1 199" and "1199"), other values as
accent-folded words.

Example:
    >>> from memory_chains.memory import WindowCore
    >>> case = SummaryCase("c", "en", (("I'm Sam.", "Hi Sam!"), ("Price?", "$149.")),
    ...                    (SummaryFact(None, "Sam", 1), SummaryFact(None, "149", 2)))
    >>> report = evaluate_summary([case], lambda: WindowCore(k=1))
    >>> report["fact_recall"], report["summary_recall"]
    (0.5, 0.0)
"""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory_chains._folding import fold, has_word
from memory_chains._jsonl import read_jsonl
from memory_chains.memory import ShortTermMemory, SummaryCore, SummaryData

__all__ = [
    "SummaryCase",
    "SummaryFact",
    "evaluate_summary",
    "load_summary_cases",
    "misattributed_numbers",
    "numbers",
    "states",
]

_GROUPED_RE = re.compile(r"(?<=\d)[ \u00a0\u202f](?=\d{3}\b)")
_NUMBER_RE = re.compile(r"\d+(?:[.,]\d+)?")


@dataclass(frozen=True)
class SummaryFact:
    """One gold fact: ``value`` said of ``entity`` (None: of nobody in particular) in
    turn ``turn`` (1-based).

    Example:
        >>> SummaryFact("Acer", "899", 6).entity
        'Acer'
    """

    entity: str | None
    value: str
    turn: int


@dataclass(frozen=True)
class SummaryCase:
    """A scripted conversation and its gold facts.

    Example:
        >>> SummaryCase("c", "fr", (("Bonjour", "Bonjour !"),), ()).turns[0][1]
        'Bonjour !'
    """

    id: str
    language: str
    turns: tuple[tuple[str, str], ...]
    facts: tuple[SummaryFact, ...]


def _case(row: Any) -> SummaryCase:
    turns = tuple((str(h), str(a)) for h, a in row["turns"])
    facts = tuple(
        SummaryFact(
            None if f.get("entity") is None else str(f["entity"]), str(f["value"]), int(f["turn"])
        )
        for f in row["facts"]
    )
    if any(not 1 <= f.turn <= len(turns) for f in facts):
        raise ValueError("a fact's turn is outside the conversation")
    return SummaryCase(str(row["id"]), str(row.get("language", "")), turns, facts)


def load_summary_cases(path: str | Path) -> list[SummaryCase]:
    """Read a JSONL file of cases.

    Raises:
        InvalidInputError: a line is not a case (the message gives its number).
    """
    return read_jsonl(
        path,
        _case,
        "{'id': …, 'turns': [[human, ai], …], 'facts': [{'entity': … or null, "
        "'value': …, 'turn': n}, …]}",
    )


def numbers(text: str) -> set[str]:
    """The numbers of ``text``, digit groups joined ("1 199 €" → "1199").

    Example:
        >>> sorted(numbers("1 199 €, 1,4 kg, 2 ans"))
        ['1,4', '1199', '2']
    """
    return set(_NUMBER_RE.findall(_GROUPED_RE.sub("", text)))


def _word_in(word: str, text: str) -> bool:
    return has_word(fold(text), fold(word))


def states(text: str, fact: SummaryFact) -> bool:
    """True when ``text`` names the fact's entity (if any) and gives its value.

    Example:
        >>> states("L'Acer Swift coûte 899 €.", SummaryFact("Acer", "899", 6))
        True
        >>> states("Le HP coûte 899 €.", SummaryFact("Acer", "899", 6))
        False
    """
    if fact.entity is not None and not _word_in(fact.entity, text):
        return False
    if any(ch.isdigit() for ch in fact.value):
        return bool(numbers(fact.value) <= numbers(text))
    return _word_in(fact.value, text)


def misattributed_numbers(item: str, facts: Iterable[SummaryFact]) -> list[str]:
    """Numbers of ``item`` that the gold facts give only to entities the item does not
    name, while it names another one.

    Example:
        >>> facts = [SummaryFact("Lenovo", "3", 2), SummaryFact("ASUS", "1 349", 3)]
        >>> misattributed_numbers("L'ASUS est garanti 3 ans.", facts)
        ['3']
        >>> misattributed_numbers("L'ASUS coûte 1 349 €, le Lenovo 3 ans.", facts)
        []
    """
    facts = list(facts)
    entities = {f.entity for f in facts if f.entity is not None}
    named = {e for e in entities if _word_in(e, item)}
    if not named:
        return []
    owners: dict[str, set[str | None]] = {}
    for f in facts:
        for n in numbers(f.value):
            owners.setdefault(n, set()).add(f.entity)
    return sorted(
        n for n in numbers(item) if n in owners and None not in owners[n] and not owners[n] & named
    )


def _summary_items(memory: ShortTermMemory) -> list[str]:
    if not isinstance(memory, SummaryCore):
        return []
    data = SummaryData.from_json(memory.store.get_summary(memory.user_id, memory.session_id).data)
    return list(data.all_items())


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def evaluate_summary(
    cases: Sequence[SummaryCase],
    make_memory: Callable[[], ShortTermMemory],
    *,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Feed each case to a fresh memory and measure what its context keeps.

    Args:
        cases: from :func:`load_summary_cases`.
        make_memory: builds an empty short-term memory (called once per case).
        progress: called with ``(cases done, cases total)``.

    Returns:
        ``{"cases", "facts", "fact_recall", "folded_facts", "summary_recall",
        "summary_items", "misattributed_items", "misattribution_rate",
        "mean_context_tokens", "compactions", "compaction_failures", "seconds",
        "per_case": [{"id", "facts", "kept", "missed", "folded_facts", "kept_in_summary",
        "summary_items", "misattributed", "tokens", "compactions", "seconds"}]}``; a ratio
        is ``None`` when its denominator is 0. ``missed`` names the facts the context lost,
        ``misattributed`` lists the items and the numbers found wrong.
    """
    per_case: list[dict[str, Any]] = []
    for done, case in enumerate(cases, 1):
        memory = make_memory()
        started = time.perf_counter()
        for human, ai in case.turns:
            memory.add_exchange(human, ai)
        seconds = time.perf_counter() - started
        context = memory.context()
        items = _summary_items(memory)
        verbatim = [f"{t.human}\n{t.ai}" for t in context.turns]
        folded = len(case.turns) - len(context.turns)
        folded_facts = [f for f in case.facts if f.turn <= folded]
        wrong = [
            {"item": item, "numbers": bad}
            for item in items
            if (bad := misattributed_numbers(item, case.facts))
        ]
        missed = [f for f in case.facts if not any(states(t, f) for t in items + verbatim)]
        stats = memory.stats()
        per_case.append(
            {
                "id": case.id,
                "facts": len(case.facts),
                "kept": len(case.facts) - len(missed),
                "missed": [f"{f.entity or '-'}: {f.value} (turn {f.turn})" for f in missed],
                "folded_facts": len(folded_facts),
                "kept_in_summary": sum(any(states(t, f) for t in items) for f in folded_facts),
                "summary_items": len(items),
                "misattributed": wrong,
                "tokens": stats.tokens,
                "compactions": stats.compactions,
                "compaction_failures": stats.compaction_failures,
                "seconds": round(seconds, 2),
            }
        )
        if progress is not None:
            progress(done, len(cases))

    def total(key: str) -> int:
        return sum(int(row[key]) for row in per_case)

    n_wrong = sum(len(row["misattributed"]) for row in per_case)
    return {
        "cases": len(per_case),
        "facts": total("facts"),
        "fact_recall": _ratio(total("kept"), total("facts")),
        "folded_facts": total("folded_facts"),
        "summary_recall": _ratio(total("kept_in_summary"), total("folded_facts")),
        "summary_items": total("summary_items"),
        "misattributed_items": n_wrong,
        "misattribution_rate": _ratio(n_wrong, total("summary_items")),
        "mean_context_tokens": (
            statistics.fmean(row["tokens"] for row in per_case) if per_case else None
        ),
        "compactions": total("compactions"),
        "compaction_failures": total("compaction_failures"),
        "seconds": round(sum(row["seconds"] for row in per_case), 2),
        "per_case": per_case,
    }
