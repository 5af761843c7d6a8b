"""Scoring entity extraction against a gold dataset (used by ``memory-chains eval entities``).

Dataset lines: ``{"id", "turns": [[role, text], ...], "entities": [{"name", "type"}, ...]}``.
A predicted entity matches a gold one when their folded names are equal or one is an
alias of the other (:func:`~memory_chains.entities.is_alias`, or any alias the memory
recorded); matching is one-to-one, exact matches first. Metrics are micro-averaged.

Example:
    >>> from memory_chains.entities._types import Entity
    >>> gold = [GoldEntity("Dell XPS 15", "PRODUCT"), GoldEntity("Dell", "ORGANIZATION")]
    >>> pred = [Entity("e1", "XPS 15", "PRODUCT"), Entity("e2", "garantie", "CONCEPT")]
    >>> s = score_entities(gold, pred)
    >>> s.tp, s.fp, s.fn, s.type_ok
    (1, 1, 1, 1)
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory_chains.entities._fold import fold, is_alias
from memory_chains.entities._tracker import EntityTracker
from memory_chains.entities._types import Entity
from memory_chains.errors import InvalidInputError

__all__ = [
    "Dialogue",
    "EvalReport",
    "GoldEntity",
    "Score",
    "evaluate",
    "exchanges",
    "load_dataset",
    "score_entities",
]


@dataclass(frozen=True)
class GoldEntity:
    """One expected entity."""

    name: str
    type: str


@dataclass(frozen=True)
class Dialogue:
    """One dataset line."""

    id: str
    turns: tuple[tuple[str, str], ...]
    entities: tuple[GoldEntity, ...]


@dataclass(frozen=True)
class Score:
    """Counts for one dialogue (or a sum of dialogues)."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    type_ok: int = 0
    missed: tuple[str, ...] = ()
    spurious: tuple[str, ...] = ()
    mistyped: tuple[str, ...] = ()

    def __add__(self, other: Score) -> Score:
        return Score(
            self.tp + other.tp,
            self.fp + other.fp,
            self.fn + other.fn,
            self.type_ok + other.type_ok,
            self.missed + other.missed,
            self.spurious + other.spurious,
            self.mistyped + other.mistyped,
        )


@dataclass(frozen=True)
class EvalReport:
    """Aggregated results of :func:`evaluate`."""

    score: Score
    dialogues: int
    exchanges: int
    messages: int
    model_calls: int
    failures: int
    seconds: float
    per_dialogue: tuple[tuple[str, Score], ...] = field(default=())

    @property
    def precision(self) -> float:
        s = self.score
        return s.tp / (s.tp + s.fp) if s.tp + s.fp else 0.0

    @property
    def recall(self) -> float:
        s = self.score
        return s.tp / (s.tp + s.fn) if s.tp + s.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def type_accuracy(self) -> float:
        return self.score.type_ok / self.score.tp if self.score.tp else 0.0

    def to_dict(self) -> dict[str, Any]:
        """The JSON summary printed by ``--json``."""
        n = max(1, self.exchanges)
        return {
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "f1": round(self.f1, 4),
            "type_accuracy": round(self.type_accuracy, 4),
            "llm_calls_per_turn": round(self.model_calls / n, 4),
            "llm_calls_per_message": round(self.model_calls / max(1, self.messages), 4),
            "secs_per_turn": round(self.seconds / n, 3),
            "dialogues": self.dialogues,
            "turns": self.exchanges,
            "messages": self.messages,
            "tp": self.score.tp,
            "fp": self.score.fp,
            "fn": self.score.fn,
            "extraction_failures": self.failures,
        }


def load_dataset(path: str | Path) -> list[Dialogue]:
    """Read and validate a JSONL dataset.

    Raises:
        InvalidInputError: unreadable file or a malformed line (the message gives the line).
    """
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InvalidInputError(f"cannot read dataset {p}: {exc}") from exc
    out: list[Dialogue] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            turns = tuple((str(r).lower(), str(t)) for r, t in d["turns"])
            gold = tuple(GoldEntity(str(e["name"]), str(e["type"]).upper()) for e in d["entities"])
            out.append(Dialogue(str(d.get("id", number)), turns, gold))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise InvalidInputError(f"{p}:{number}: not a valid dataset line ({exc!r})") from exc
    if not out:
        raise InvalidInputError(f"dataset {p} is empty")
    return out


def exchanges(turns: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """Group messages into (human, ai) exchanges, as a memory's ``save_context`` sees them."""
    out: list[tuple[str, str]] = []
    for role, text in turns:
        if role in ("user", "human") or not out or out[-1][1]:
            if role in ("user", "human"):
                out.append((text, ""))
            else:
                out.append(("", text))
        else:
            out[-1] = (out[-1][0], text)
    return out


def score_entities(gold: Iterable[GoldEntity], predicted: Iterable[Entity]) -> Score:
    """One-to-one matching of predicted entities to gold ones (exact names, then aliases)."""
    gold_left = list(gold)
    pred_left = list(predicted)
    pairs: list[tuple[GoldEntity, Entity]] = []
    for loose in (False, True):
        for g in list(gold_left):
            for p in pred_left:
                if _matches(g, p, loose=loose):
                    pairs.append((g, p))
                    gold_left.remove(g)
                    pred_left.remove(p)
                    break
    type_ok = sum(g.type == p.type for g, p in pairs)
    return Score(
        tp=len(pairs),
        fp=len(pred_left),
        fn=len(gold_left),
        type_ok=type_ok,
        missed=tuple(f"{g.name} [{g.type}]" for g in gold_left),
        spurious=tuple(f"{p.name} [{p.type}]" for p in pred_left),
        mistyped=tuple(f"{g.name} [{g.type}→{p.type}]" for g, p in pairs if g.type != p.type),
    )


def _matches(g: GoldEntity, p: Entity, *, loose: bool) -> bool:
    key = fold(g.name)
    if not loose:
        return any(fold(n) == key for n in p.names)
    return any(is_alias(g.name, n, g.type) for n in p.names)


def evaluate(
    dataset: Sequence[Dialogue],
    make_tracker: Callable[[Dialogue], EntityTracker],
    *,
    on_dialogue: Callable[[Dialogue, Score, EntityTracker], None] | None = None,
) -> EvalReport:
    """Run a fresh tracker over each dialogue and score its entities at the end."""
    total = Score()
    per: list[tuple[str, Score]] = []
    n_ex = n_msg = calls = failures = 0
    seconds = 0.0
    for d in dataset:
        tracker = make_tracker(d)
        for human, ai in exchanges(d.turns):
            start = time.perf_counter()
            report = tracker.observe(human, ai)
            seconds += time.perf_counter() - start
            calls += report.model_calls
            failures += bool(report.error)
            n_ex += 1
        n_msg += len(d.turns)
        s = score_entities(d.entities, tracker.entities())
        total += s
        per.append((d.id, s))
        if on_dialogue is not None:
            on_dialogue(d, s, tracker)
    return EvalReport(total, len(dataset), n_ex, n_msg, calls, failures, seconds, tuple(per))
