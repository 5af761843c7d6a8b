"""Rewrites scored against human rewrites, without a corpus (CANARD, TREC CAsT).

:func:`evaluate_references` rewrites each follow-up and reports ROUGE-1 recall and F1 and
BLEU-4 against the human rewrite, the question copied unchanged as the baseline, and the
share of rewrites that append something a person would not write
(:func:`~memory_chains.evaluation.rewrite.appended`). :func:`canard_rows` and
:func:`cast_rows` read the public files.

Example:
    >>> canard_history(["Frank Zappa", "Disbandment", "Who left?", "Ray Collins"])[0]
    ('user', 'Frank Zappa: Disbandment')
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memory_chains.errors import InvalidInputError
from memory_chains.evaluation.rewrite import (
    Progress,
    Rewriter,
    _item,
    _report,
    _require,
    _text_scores,
    read_jsonl,
)

__all__ = [
    "Row",
    "canard_history",
    "canard_rows",
    "cast_rows",
    "evaluate_canard",
    "evaluate_references",
]


Row = tuple[str, list[tuple[str, str]], str, str]
"""One scored follow-up: ``(id, history, question, human rewrite)``."""


def evaluate_references(
    rows: Sequence[Row],
    rewriter: Rewriter,
    *,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Rewrite every follow-up of ``rows`` and score it against its human rewrite.

    Returns:
        The text metrics of :func:`summarise` (ROUGE-1 recall and F1, BLEU-4, the question
        copied as the baseline, ``appended_rate``, times and methods), ``by_language``,
        ``wall_secs`` and ``items``.
    """
    items: list[dict[str, Any]] = []
    started = time.perf_counter()
    for index, (item_id, history, question, reference) in enumerate(rows):
        result = rewriter.rewrite(question, history)
        item = _item({"id": item_id}, index, question, history, result)
        _text_scores(item, result.standalone, question, reference)
        items.append(item)
        if progress is not None:
            progress(index + 1, len(rows))
    report = _report(items, 1)
    report["wall_secs"] = round(time.perf_counter() - started, 2)
    return report


def _sample(rows: list[Row], limit: int | None, seed: int) -> list[Row]:
    if limit is not None and limit < 1:
        raise InvalidInputError(f"limit must be >= 1, got {limit}")
    if limit is not None and limit < len(rows):
        return random.Random(seed).sample(rows, limit)
    return rows


def canard_history(turns: Sequence[str]) -> list[tuple[str, str]]:
    """CANARD's ``History`` (title, section, then Q/A alternating) as chat turns.

    The article's title and section are one opening user turn, ``"Title: Section"``: what
    the user said the conversation is about; then questions are user turns and answers
    assistant turns.

    Example:
        >>> canard_history(["Frank Zappa", "Disbandment", "Who left?", "Ray Collins"])
        [('user', 'Frank Zappa: Disbandment'), ('user', 'Who left?'), ('assistant', 'Ray Collins')]
    """
    if len(turns) < 2:
        return [("user", text) for text in turns]
    out: list[tuple[str, str]] = [("user", f"{turns[0]}: {turns[1]}")]
    for index, text in enumerate(turns[2:]):
        out.append(("user" if index % 2 == 0 else "assistant", text))
    return out


def canard_rows(path: str | Path, limit: int | None = None, seed: int = 0) -> list[Row]:
    """CANARD's questions after the first turn (``canard_dev.json``), optionally a random
    sample of ``limit`` of them (``random.Random(seed)``).

    Raises:
        InvalidInputError: the file is missing or not CANARD-shaped, or ``limit < 1``.
    """
    path = Path(path)
    if not path.is_file():
        raise InvalidInputError(f"no such file: {path}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        rows: list[Row] = [
            (
                f"canard-{index}",
                canard_history(list(r["History"])),
                str(r["Question"]),
                str(r["Rewrite"]),
            )
            for index, r in enumerate(data)
            if len(r["History"]) > 2
        ]
    except (json.JSONDecodeError, TypeError, KeyError) as exc:
        raise InvalidInputError(f"{path} is not a CANARD file: {exc}") from exc
    return _sample(rows, limit, seed)


def cast_rows(path: str | Path, limit: int | None = None, seed: int = 0) -> list[Row]:
    """TREC CAsT follow-ups (JSON lines of ``id``, ``history``, ``question``, ``rewrite``,
    as in ``cast2019_eval.jsonl``), optionally a random sample of ``limit``.

    Raises:
        InvalidInputError: the file is missing or a line lacks a field, or ``limit < 1``.
    """
    rows: list[Row] = []
    for row in read_jsonl(path):
        where = f"{path}:{row.get('id')}"
        history = [(str(r), str(t)) for r, t in _require(row, "history", list, where)]
        rows.append(
            (
                str(row.get("id", len(rows))),
                history,
                str(_require(row, "question", str, where)).strip(),
                str(_require(row, "rewrite", str, where)).strip(),
            )
        )
    return _sample(rows, limit, seed)


def evaluate_canard(
    path: str | Path,
    rewriter: Rewriter,
    limit: int | None = None,
    seed: int = 0,
    *,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """:func:`evaluate_references` on CANARD's questions after the first turn.

    Raises:
        InvalidInputError: the file is missing or not CANARD-shaped, or ``limit < 1``.
    """
    return evaluate_references(canard_rows(path, limit, seed), rewriter, progress=progress)
