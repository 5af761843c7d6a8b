"""Scoring entity memory against a gold dataset (used by ``memory-chains eval entities``).

Dataset lines: ``{"id", "turns": [[role, text], ...], "entities": [{"name", "type",
"aliases": [...]}, ...], "relations": [[head, KIND, tail], ...]}``; ``aliases`` and
``relations`` are optional, a relation's head or tail is an entity name or ``USER``.

A predicted entity matches a gold one when one of its names folds to one of the gold
entity's names, or one is an alias of the other (:func:`~memory_chains.entities.is_alias`);
matching is one-to-one, exact matches first. A predicted relation matches a gold one when
both ends are the entities matched to the gold ends (``COMPARES_TO`` in either direction).
Metrics are micro-averaged. Aliases: a gold alias is *resolved* when the entity matched to
its gold entity carries it (a second entity created for it counts as a false positive).

Example:
    >>> from memory_chains.entities import Entity
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
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from memory_chains.entities import USER_ID, Entity, EntityState, EntityTracker, fold, is_alias
from memory_chains.errors import InvalidInputError

__all__ = [
    "Dialogue",
    "EvalReport",
    "GoldEntity",
    "Score",
    "evaluate",
    "exchanges",
    "load_dataset",
    "score_dialogue",
    "score_entities",
]

USER = "USER"
_SYMMETRIC = frozenset({"COMPARES_TO"})


@dataclass(frozen=True)
class GoldEntity:
    """One expected entity: its fullest name, type and the other names the text uses."""

    name: str
    type: str
    aliases: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)


@dataclass(frozen=True)
class Dialogue:
    """One dataset line."""

    id: str
    turns: tuple[tuple[str, str], ...]
    entities: tuple[GoldEntity, ...]
    relations: tuple[tuple[str, str, str], ...] | None = None  # None: not annotated


@dataclass(frozen=True)
class Score:
    """Counts for one dialogue (or a sum of dialogues)."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    type_ok: int = 0
    aliases: int = 0
    aliases_resolved: int = 0
    rel_tp: int = 0
    rel_fp: int = 0
    rel_fn: int = 0
    missed: tuple[str, ...] = ()
    spurious: tuple[str, ...] = ()
    mistyped: tuple[str, ...] = ()
    rel_missed: tuple[str, ...] = ()
    rel_spurious: tuple[str, ...] = ()

    def __add__(self, other: Score) -> Score:
        return Score(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))


def _ratio(a: int, b: int) -> float:
    return a / b if b else 0.0


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


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
    relations_scored: bool = False

    @property
    def precision(self) -> float:
        return _ratio(self.score.tp, self.score.tp + self.score.fp)

    @property
    def recall(self) -> float:
        return _ratio(self.score.tp, self.score.tp + self.score.fn)

    @property
    def f1(self) -> float:
        return _f1(self.precision, self.recall)

    @property
    def type_accuracy(self) -> float:
        return _ratio(self.score.type_ok, self.score.tp)

    @property
    def alias_recall(self) -> float:
        return _ratio(self.score.aliases_resolved, self.score.aliases)

    @property
    def relation_precision(self) -> float:
        return _ratio(self.score.rel_tp, self.score.rel_tp + self.score.rel_fp)

    @property
    def relation_recall(self) -> float:
        return _ratio(self.score.rel_tp, self.score.rel_tp + self.score.rel_fn)

    @property
    def relation_f1(self) -> float:
        return _f1(self.relation_precision, self.relation_recall)

    def to_dict(self) -> dict[str, Any]:
        """The JSON summary printed by ``--json``."""
        n = max(1, self.exchanges)
        out: dict[str, Any] = {
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "f1": round(self.f1, 4),
            "type_accuracy": round(self.type_accuracy, 4),
        }
        if self.score.aliases:
            out["alias_recall"] = round(self.alias_recall, 4)
        if self.relations_scored:
            out.update(
                relation_precision=round(self.relation_precision, 4),
                relation_recall=round(self.relation_recall, 4),
                relation_f1=round(self.relation_f1, 4),
            )
        out.update(
            llm_calls_per_turn=round(self.model_calls / n, 4),
            llm_calls_per_message=round(self.model_calls / max(1, self.messages), 4),
            secs_per_turn=round(self.seconds / n, 3),
            dialogues=self.dialogues,
            turns=self.exchanges,
            messages=self.messages,
            tp=self.score.tp,
            fp=self.score.fp,
            fn=self.score.fn,
            extraction_failures=self.failures,
        )
        if self.relations_scored:
            out.update(rel_tp=self.score.rel_tp, rel_fp=self.score.rel_fp, rel_fn=self.score.rel_fn)
        return out


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
            out.append(_dialogue(json.loads(line), number))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise InvalidInputError(f"{p}:{number}: not a valid dataset line ({exc!r})") from exc
    if not out:
        raise InvalidInputError(f"dataset {p} is empty")
    return out


def _dialogue(d: dict[str, Any], number: int) -> Dialogue:
    turns = tuple((str(r).lower(), str(t)) for r, t in d["turns"])
    gold = tuple(
        GoldEntity(
            str(e["name"]),
            str(e["type"]).upper(),
            tuple(str(a) for a in e.get("aliases", ()) if str(a).strip()),
        )
        for e in d["entities"]
    )
    relations = None
    if "relations" in d:
        relations = tuple(_gold_relation(r, gold) for r in d["relations"])
    return Dialogue(str(d.get("id", number)), turns, gold, relations)


def _gold_relation(r: Sequence[Any], gold: Sequence[GoldEntity]) -> tuple[str, str, str]:
    head, kind, tail = (str(x) for x in r)
    names = {g.name for g in gold} | {USER}
    for end in (head, tail):
        if end not in names:
            raise ValueError(f"relation end {end!r} is not an entity name of the line")
    return head, kind.upper(), tail


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


def _pairs(
    gold: Iterable[GoldEntity], predicted: Iterable[Entity]
) -> tuple[list[tuple[GoldEntity, Entity]], list[GoldEntity], list[Entity]]:
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
    return pairs, gold_left, pred_left


def score_entities(gold: Iterable[GoldEntity], predicted: Iterable[Entity]) -> Score:
    """One-to-one matching of predicted entities to gold ones (exact names, then aliases)."""
    pairs, gold_left, pred_left = _pairs(gold, predicted)
    return _entity_score(pairs, gold_left, pred_left)


def _entity_score(
    pairs: Sequence[tuple[GoldEntity, Entity]],
    gold_left: Sequence[GoldEntity],
    pred_left: Sequence[Entity],
) -> Score:
    aliases = sum(len(g.aliases) for g, _ in pairs) + sum(len(g.aliases) for g in gold_left)
    resolved = sum(
        any(_same_name(a, n, g.type) for n in p.names) for g, p in pairs for a in g.aliases
    )
    return Score(
        tp=len(pairs),
        fp=len(pred_left),
        fn=len(gold_left),
        type_ok=sum(g.type == p.type for g, p in pairs),
        aliases=aliases,
        aliases_resolved=resolved,
        missed=tuple(f"{g.name} [{g.type}]" for g in gold_left),
        spurious=tuple(f"{p.name} [{p.type}]" for p in pred_left),
        mistyped=tuple(f"{g.name} [{g.type}→{p.type}]" for g, p in pairs if g.type != p.type),
    )


def score_dialogue(dialogue: Dialogue, state: EntityState) -> Score:
    """Entities, aliases and (when the line has them) relations of one dialogue."""
    pairs, gold_left, pred_left = _pairs(dialogue.entities, state.entities)
    score = _entity_score(pairs, gold_left, pred_left)
    if dialogue.relations is None:
        return score
    gold_of = {p.id: g.name for g, p in pairs}
    gold_of[USER_ID] = USER
    names = {e.id: e.name for e in state.entities} | {USER_ID: USER}
    predicted: set[tuple[str, str, str]] = set()
    for r in state.relations:
        head = gold_of.get(r.source, f"~{names.get(r.source, r.source)}")
        tail = gold_of.get(r.target, f"~{names.get(r.target, r.target)}")
        predicted.add(_key(head, r.kind, tail))
    expected = {_key(*r) for r in dialogue.relations}
    return Score(
        **{f.name: getattr(score, f.name) for f in fields(score) if not f.name.startswith("rel")},
        rel_tp=len(predicted & expected),
        rel_fp=len(predicted - expected),
        rel_fn=len(expected - predicted),
        rel_missed=tuple(" ".join(r) for r in sorted(expected - predicted)),
        rel_spurious=tuple(" ".join(r) for r in sorted(predicted - expected)),
    )


def _key(head: str, kind: str, tail: str) -> tuple[str, str, str]:
    if kind in _SYMMETRIC and tail < head:
        head, tail = tail, head
    return head, kind, tail


def _same_name(a: str, b: str, etype: str) -> bool:
    return fold(a) == fold(b) or is_alias(a, b, etype)


def _matches(g: GoldEntity, p: Entity, *, loose: bool) -> bool:
    if not loose:
        keys = {fold(n) for n in g.names}
        return any(fold(n) in keys for n in p.names)
    return any(is_alias(gn, n, g.type) for gn in g.names for n in p.names)


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
        s = score_dialogue(d, tracker.state)
        total += s
        per.append((d.id, s))
        if on_dialogue is not None:
            on_dialogue(d, s, tracker)
    scored = any(d.relations is not None for d in dataset)
    return EvalReport(
        total, len(dataset), n_ex, n_msg, calls, failures, seconds, tuple(per), scored
    )
