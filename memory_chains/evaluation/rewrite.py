"""Measuring a :class:`~memory_chains.rewrite.QueryRewriter`.

:func:`evaluate_rewrites` runs the rewriter on follow-ups over a small corpus and checks
that retrieval with the rewrite finds the gold passage (hit@1, hit@k, MRR) and that the
rewrite names the referent (``must_mention``). :func:`evaluate_canard` compares rewrites with
CANARD's human rewrites (ROUGE-1 recall, BLEU-4), next to the unchanged question.

File formats (JSON lines):

* corpus: ``{"id": str, "text": str}``
* dataset: ``{"id", "history": [[role, text], ...], "question", "gold_doc"?,
  "must_mention"?: [str, ...], "rewrite"?: str}``

With ``entity_memory`` (a factory of fresh entity trackers), each item's history is first
fed to a new tracker, one exchange at a time, and the rewriter gets
:func:`~memory_chains.rewrite.entity_hints` for the question: the with/without comparison
of issue #4 (:data:`FAR_DATASET` holds follow-ups whose referent is more than one
exchange back, behind other names).

Example:
    >>> from memory_chains.rewrite import QueryRewriter
    >>> from memory_chains.testing import HashEmbeddings
    >>> report = evaluate_rewrites(DEV_CORPUS, DEV_DATASET, QueryRewriter(use_model=False),
    ...                            HashEmbeddings(), k=3)
    >>> report["n"] >= 40 and 0.0 <= report["hit@1"] <= 1.0
    True
"""

from __future__ import annotations

import json
import random
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from memory_chains.errors import InvalidInputError
from memory_chains.evaluation.metrics import bleu4, fold, rouge1_recall
from memory_chains.rewrite import (
    QueryRewriter,
    RewriteResult,
    detect_language,
    entity_hints,
    fuse_rankings,
)

__all__ = [
    "DEV_CORPUS",
    "DEV_DATASET",
    "FAR_DATASET",
    "evaluate_canard",
    "evaluate_rewrites",
    "feed_history",
    "read_jsonl",
]

_DATA = Path(__file__).resolve().parent.parent / "data" / "eval"
DEV_CORPUS = _DATA / "rewrite_dev_corpus.jsonl"
"""The corpus shipped with the package (laptops, gym classes, shop policies, trips…)."""
DEV_DATASET = _DATA / "rewrite_dev.jsonl"
"""The follow-ups shipped with the package, over :data:`DEV_CORPUS`."""
FAR_DATASET = _DATA / "rewrite_far_referents.jsonl"
"""Follow-ups over :data:`DEV_CORPUS` whose referent was named more than one exchange back,
with other names in between (some beyond the rewriter's default 6-message window)."""

Progress = Callable[[int, int], None]


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Read a JSON-lines file (blank lines skipped).

    Raises:
        InvalidInputError: the file is missing or a line is not a JSON object.
    """
    path = Path(path)
    if not path.is_file():
        raise InvalidInputError(f"no such file: {path}")
    rows: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidInputError(f"{path}:{number}: not JSON ({exc.msg})") from exc
            if not isinstance(row, dict):
                raise InvalidInputError(f"{path}:{number}: expected a JSON object")
            rows.append(row)
    return rows


def _require(row: dict[str, Any], key: str, kind: type, where: str) -> Any:
    value = row.get(key)
    if not isinstance(value, kind):
        raise InvalidInputError(f"{where}: field {key!r} must be a {kind.__name__}")
    return value


def _rank(matrix: np.ndarray, ids: Sequence[str], vectors: list[list[float]]) -> list[list[str]]:
    rankings = []
    for vector in vectors:
        scores = matrix @ np.asarray(vector, dtype=np.float32)
        rankings.append([ids[i] for i in np.argsort(-scores, kind="stable")])
    return rankings


def _normalised(vectors: list[list[float]]) -> np.ndarray:
    matrix = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


def _retrieve(
    matrix: np.ndarray, ids: Sequence[str], emb: Embeddings, queries: Sequence[str]
) -> list[str]:
    vectors = _normalised([emb.embed_query(q) for q in queries]).tolist()
    rankings = _rank(matrix, ids, vectors)
    return rankings[0] if len(rankings) == 1 else fuse_rankings(rankings)


def feed_history(tracker: Any, history: Sequence[tuple[str, str]]) -> Any:
    """Observe ``history`` in ``tracker``, one (user, assistant) exchange at a time.

    A user turn without an answer is observed alone; an answer without a question too.

    Example:
        >>> from memory_chains.entities import EntityTracker, RuleEntityExtractor
        >>> t = feed_history(EntityTracker(RuleEntityExtractor(use_spacy=False)),
        ...                  [("user", "Le Dell XPS 15 ?"), ("assistant", "En stock.")])
        >>> [e.name for e in t.entities()]
        ['Dell XPS 15']
    """
    pending: str | None = None
    for role, text in history:
        if role in ("user", "human"):
            if pending is not None:
                tracker.observe(pending, "")
            pending = text
        else:
            tracker.observe(pending or "", text)
            pending = None
    if pending is not None:
        tracker.observe(pending, "")
    return tracker


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def evaluate_rewrites(
    corpus_path: str | Path,
    dataset_path: str | Path,
    rewriter: QueryRewriter,
    embeddings: Embeddings,
    k: int = 3,
    *,
    progress: Progress | None = None,
    entity_memory: Callable[[], Any] | None = None,
) -> dict[str, Any]:
    """Rewrite every follow-up of ``dataset_path`` and retrieve over ``corpus_path``.

    Retrieval is cosine similarity over the corpus embedded once (``embed_documents``);
    each query is embedded with ``embed_query``; several queries (``n_queries > 1``) are
    merged by reciprocal rank fusion. ``entity_memory`` returns a fresh entity tracker per
    item (see the module docstring).

    Returns:
        ``n``, ``hit@1``, ``hit@{k}``, ``mrr``, ``mention_rate``, ``raw_hit@1`` (the
        question as asked), ``gold_hit@1`` (human rewrites, when given), ``rouge1_recall``
        (against human rewrites, when given), ``secs_per_item``, ``median_secs``,
        ``model_calls_per_item``, ``output_tokens_per_item``, ``median_model_secs``
        (items that called the model), ``unchanged_rate``, ``template_rate``,
        ``fallback_rate``, ``by_language``
        (the same retrieval metrics per language) and ``items`` (one row per follow-up).

    Raises:
        InvalidInputError: a file is missing or malformed, ``k < 1``, or a ``gold_doc`` is
            not in the corpus.
    """
    if k < 1:
        raise InvalidInputError(f"k must be >= 1, got {k}")
    corpus = read_jsonl(corpus_path)
    ids = [str(_require(row, "id", str, f"{corpus_path}")) for row in corpus]
    texts = [_require(row, "text", str, f"{corpus_path}:{row.get('id')}") for row in corpus]
    if not ids:
        raise InvalidInputError(f"{corpus_path}: the corpus is empty")
    dataset = read_jsonl(dataset_path)
    known = set(ids)
    for row in dataset:
        gold = row.get("gold_doc")
        if gold is not None and gold not in known:
            raise InvalidInputError(f"{dataset_path}:{row.get('id')}: unknown gold_doc {gold!r}")
    matrix = _normalised(embeddings.embed_documents(texts))

    items: list[dict[str, Any]] = []
    for index, row in enumerate(dataset):
        where = f"{dataset_path}:{row.get('id', index)}"
        question = _require(row, "question", str, where)
        history = [tuple(turn) for turn in _require(row, "history", list, where)]
        hints: list[str] = []
        if entity_memory is not None:
            hints = entity_hints(feed_history(entity_memory(), history), question)
        result: RewriteResult = rewriter.rewrite(question, history, entities=hints)
        item: dict[str, Any] = {
            "id": row.get("id", str(index)),
            "language": detect_language(question),
            "question": question,
            "standalone": result.standalone,
            "method": result.method,
            "model_calls": result.model_calls,
            "output_tokens": result.output_tokens,
            "entities": hints,
            "secs": round(result.latency_s, 4),
            "error": result.error,
        }
        gold = row.get("gold_doc")
        if gold is not None:
            ranking = _retrieve(matrix, ids, embeddings, result.queries)
            rank = ranking.index(gold) + 1
            item.update(
                rank=rank,
                raw_rank=_retrieve(matrix, ids, embeddings, [question]).index(gold) + 1,
            )
            if isinstance(row.get("rewrite"), str):
                gold_ranking = _retrieve(matrix, ids, embeddings, [row["rewrite"]])
                item["gold_rank"] = gold_ranking.index(gold) + 1
        mentions = row.get("must_mention")
        if mentions:
            folded = fold(result.standalone)
            item["mentioned"] = all(fold(m) in folded for m in mentions)
        if isinstance(row.get("rewrite"), str):
            item["rouge1_recall"] = rouge1_recall(result.standalone, row["rewrite"])
        items.append(item)
        if progress is not None:
            progress(index + 1, len(dataset))

    report = _summary(items, k)
    languages = sorted({item["language"] for item in items})
    report["by_language"] = {
        lang: _summary([i for i in items if i["language"] == lang], k) for lang in languages
    }
    report["items"] = items
    return report


def _summary(items: list[dict[str, Any]], k: int) -> dict[str, Any]:
    ranked = [i for i in items if "rank" in i]
    secs = [i["secs"] for i in items]
    gold = [i for i in ranked if "gold_rank" in i]
    mention = [i["mentioned"] for i in items if "mentioned" in i]
    rouge = [i["rouge1_recall"] for i in items if "rouge1_recall" in i]
    model_secs = [i["secs"] for i in items if i["model_calls"]]
    return {
        "n": len(items),
        "hit@1": _mean([float(i["rank"] == 1) for i in ranked]),
        f"hit@{k}": _mean([float(i["rank"] <= k) for i in ranked]),
        "mrr": _mean([1.0 / i["rank"] for i in ranked]),
        "mention_rate": _mean([float(m) for m in mention]),
        "raw_hit@1": _mean([float(i["raw_rank"] == 1) for i in ranked]),
        "gold_hit@1": _mean([float(i["gold_rank"] == 1) for i in gold]),
        "rouge1_recall": _mean(rouge),
        "secs_per_item": _mean(secs),
        "median_secs": round(statistics.median(secs), 4) if secs else None,
        "median_model_secs": round(statistics.median(model_secs), 4) if model_secs else None,
        "model_calls_per_item": _mean([float(i["model_calls"]) for i in items]),
        "output_tokens_per_item": _mean([float(i.get("output_tokens", 0)) for i in items]),
        "unchanged_rate": _mean([float(i["method"] == "unchanged") for i in items]),
        "template_rate": _mean([float(i["method"] == "template") for i in items]),
        "fallback_rate": _mean([float(i["method"] == "fallback") for i in items]),
    }


def canard_history(turns: Sequence[str]) -> list[tuple[str, str]]:
    """CANARD's ``History`` (title, section, then Q/A alternating) as chat turns.

    The article's title and section are one opening user turn, ``"Title: Section"``: what
    the user said the conversation is about (the rewriter's conversation subject); then
    questions are user turns and answers assistant turns.

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


def evaluate_canard(
    path: str | Path,
    rewriter: QueryRewriter,
    limit: int | None = None,
    seed: int = 0,
    *,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Compare rewrites with CANARD's human rewrites on questions after the first turn.

    Args:
        path: ``canard_dev.json`` (a JSON list of ``History``/``Question``/``Rewrite``).
        rewriter: the rewriter to measure.
        limit: evaluate a random sample of this many questions (``random.Random(seed)``);
            ``None`` evaluates them all.
        seed: sampling seed.

    Returns:
        ``n``, ``rouge1_recall``, ``bleu4`` (ours), ``unchanged_rouge1_recall``,
        ``unchanged_bleu4`` (the question copied, same sample), ``secs_per_item``,
        ``median_secs``, ``model_calls_per_item``, ``fallback_rate``.

    Raises:
        InvalidInputError: the file is missing or not CANARD-shaped, or ``limit < 1``.
    """
    path = Path(path)
    if not path.is_file():
        raise InvalidInputError(f"no such file: {path}")
    if limit is not None and limit < 1:
        raise InvalidInputError(f"limit must be >= 1, got {limit}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        rows = [
            (list(r["History"]), str(r["Question"]), str(r["Rewrite"]))
            for r in data
            if len(r["History"]) > 2
        ]
    except (json.JSONDecodeError, TypeError, KeyError) as exc:
        raise InvalidInputError(f"{path} is not a CANARD file: {exc}") from exc
    if limit is not None and limit < len(rows):
        rows = random.Random(seed).sample(rows, limit)
    ours: list[str] = []
    secs: list[float] = []
    calls = fallbacks = 0
    started = time.perf_counter()
    for index, (history, question, _) in enumerate(rows):
        result = rewriter.rewrite(question, canard_history(history))
        ours.append(result.standalone)
        secs.append(result.latency_s)
        calls += result.model_calls
        fallbacks += result.method == "fallback"
        if progress is not None:
            progress(index + 1, len(rows))
    questions = [q for _, q, _ in rows]
    references = [r for _, _, r in rows]
    n = len(rows)
    return {
        "n": n,
        "rouge1_recall": _mean(
            [rouge1_recall(c, r) for c, r in zip(ours, references, strict=True)]
        ),
        "bleu4": round(bleu4(ours, references), 2) if n else None,
        "unchanged_rouge1_recall": _mean(
            [rouge1_recall(q, r) for q, r in zip(questions, references, strict=True)]
        ),
        "unchanged_bleu4": round(bleu4(questions, references), 2) if n else None,
        "secs_per_item": _mean(secs),
        "median_secs": round(statistics.median(secs), 4) if secs else None,
        "model_calls_per_item": round(calls / n, 4) if n else None,
        "fallback_rate": round(fallbacks / n, 4) if n else None,
        "wall_secs": round(time.perf_counter() - started, 2),
    }
