"""Evaluating topic-change detection on labelled pairs: :func:`evaluate_topics`.

A case is the conversation so far, a question and whether it opens a new subject (JSONL:
``{"turns": [[human, ai], …], "question": …, "changed": true}``). The report gives the
tracker's accuracy, precision and recall on "new subject", its errors, and, with
embeddings, the similarity of every question to its recent turns, so that the similarity
threshold can be read off real pairs (``memory-chains eval topics --embeddings``).

Example:
    >>> turns = (("Horaires du Pilates ?", "Mardi."),)
    >>> cases = [TopicCase(turns, "Et le samedi ?", False),
    ...          TopicCase(turns, "Livrez-vous en Belgique ?", True)]
    >>> evaluate_topics(cases, TopicTracker()).accuracy
    1.0
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from memory_chains._jsonl import read_jsonl
from memory_chains.context import TopicTracker, to_exchanges
from memory_chains.errors import InvalidInputError

__all__ = ["TopicCase", "TopicEvalReport", "best_threshold", "evaluate_topics", "load_topic_cases"]


@dataclass(frozen=True)
class TopicCase:
    """One labelled question: the turns before it, and whether it opens a new subject."""

    turns: tuple[tuple[str, str], ...]
    question: str
    changed: bool


@dataclass(frozen=True)
class TopicEvalReport:
    """Scores of a tracker on labelled cases.

    Attributes:
        cases: how many cases.
        accuracy: share of cases decided right.
        precision, recall: of the "new subject" decisions.
        errors: ``(question, expected, reasons)`` of the wrong decisions.
        similarities: with embeddings, ``(similarity, changed)`` for every case (highest
            similarity to the recent exchanges, whatever the decision path).
    """

    cases: int
    accuracy: float
    precision: float
    recall: float
    errors: tuple[tuple[str, bool, tuple[str, ...]], ...]
    similarities: tuple[tuple[float, bool], ...] = ()

    def as_dict(self) -> dict[str, object]:
        """A JSON-ready dict (similarity summary included when measured)."""
        out: dict[str, object] = {
            "cases": self.cases,
            "accuracy": round(self.accuracy, 3),
            "precision": round(self.precision, 3),
            "recall": round(self.recall, 3),
            "errors": len(self.errors),
        }
        if self.similarities:
            same = [s for s, changed in self.similarities if not changed]
            new = [s for s, changed in self.similarities if changed]
            threshold, accuracy = best_threshold(self.similarities)
            out.update(
                same_min=round(min(same), 3) if same else None,
                new_max=round(max(new), 3) if new else None,
                best_threshold=round(threshold, 3),
                similarity_only_accuracy=round(accuracy, 3),
            )
        return out


def load_topic_cases(path: str | Path) -> list[TopicCase]:
    """Read a JSONL file of cases.

    Raises:
        InvalidInputError: a line is not a case (the message gives its number).
    """
    return read_jsonl(
        path,
        lambda row: TopicCase(
            tuple((str(h), str(a)) for h, a in row["turns"]),
            str(row["question"]),
            bool(row["changed"]),
        ),
        "{'turns': [[human, ai], …], 'question': …, 'changed': true|false}",
    )


def best_threshold(similarities: Sequence[tuple[float, bool]]) -> tuple[float, float]:
    """The threshold (midpoint between two observed values) that best separates same-topic
    (above) from new-topic (below) cases by similarity alone, and its accuracy.

    Example:
        >>> best_threshold([(0.9, False), (0.8, True), (0.85, False)])
        (0.825, 1.0)
    """
    values = sorted({s for s, _ in similarities})
    candidates = [(a + b) / 2 for a, b in itertools.pairwise(values)] or values
    best = (0.0, -1.0)
    for t in candidates:
        right = sum((s < t) == changed for s, changed in similarities)
        accuracy = right / len(similarities)
        if accuracy > best[1]:
            best = (round(t, 6), accuracy)
    return best


def evaluate_topics(cases: Sequence[TopicCase], tracker: TopicTracker) -> TopicEvalReport:
    """Run ``tracker`` on every case and score its decisions."""
    if not cases:
        raise InvalidInputError("no cases to evaluate")
    right = tp = fp = fn = 0
    errors = []
    similarities = []
    for case in cases:
        change = tracker.detect(case.turns, case.question)
        right += change.changed == case.changed
        tp += change.changed and case.changed
        fp += change.changed and not case.changed
        fn += case.changed and not change.changed
        if change.changed != case.changed:
            errors.append((case.question, case.changed, change.reasons))
        if tracker.embeddings is not None:
            recent = to_exchanges(case.turns)[-tracker.window :]
            best = max(tracker.similarity(case.question, f"{h} {a}") for h, a in recent)
            similarities.append((best, case.changed))
    return TopicEvalReport(
        cases=len(cases),
        accuracy=right / len(cases),
        precision=tp / (tp + fp) if tp + fp else 1.0,
        recall=tp / (tp + fn) if tp + fn else 1.0,
        errors=tuple(errors),
        similarities=tuple(similarities),
    )
