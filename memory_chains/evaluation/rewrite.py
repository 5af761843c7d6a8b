"""Measuring a :class:`~memory_chains.rewrite.QueryRewriter`.

Two harnesses, this module's and its sibling's:

* :func:`evaluate_rewrites`: follow-ups over a corpus. Retrieval with the rewrite's search
  queries must find the gold passage (hit@1, hit@k, MRR; every gold passage of a comparison
  in the top k), the rewrite must name the referent (``must_mention``), and, where a human
  rewrite is given, the rewrite is scored against it (ROUGE-1 recall and F1, BLEU-4) beside
  the question copied unchanged.
* :func:`~memory_chains.evaluation.references.evaluate_references`: follow-ups with a
  human rewrite and no corpus (CANARD, TREC CAsT), in
  :mod:`memory_chains.evaluation.references`.

Both count the rewrites that append something a person would not write
(:func:`appended`: a parenthesis, or an earlier question pasted in) and time every rewrite.

The follow-up collection (:data:`FOLLOWUP_CORPUS`, :data:`FOLLOWUP_SETS`) was written by
people who saw neither the rewriter nor the other sets, over ten domains the package never
used, and split into ``dev`` and ``test`` by a hash of each item's id when it was written
(:func:`split_of`): tune on ``dev``, report ``test`` once.

File formats (JSON lines):

* corpus: ``{"id": str, "text": str}``
* dataset: ``{"id", "history": [[role, text], ...], "question", "gold_docs"?: [id, ...]
  (or "gold_doc"?: id), "must_mention"?: [str, ...], "rewrite"?: str, "lang"?: "fr"|"en",
  "family"?: str}``

With ``entity_memory`` (a factory of fresh entity trackers), each item's history is first
fed to a new tracker, one exchange at a time, and the rewriter gets
:func:`~memory_chains.rewrite.entity_hints` for the question.

Example:
    >>> from memory_chains.rewrite import QueryRewriter
    >>> from memory_chains.testing import HashEmbeddings
    >>> report = evaluate_rewrites(FOLLOWUP_CORPUS, FOLLOWUP_SETS["dev"],
    ...                            QueryRewriter(use_model=False), HashEmbeddings(), k=3)
    >>> report["n"] >= 100 and 0.0 <= report["hit@1"] <= 1.0
    True
"""

from __future__ import annotations

import hashlib
import json
import re
import statistics
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol, get_args

import numpy as np
from langchain_core.embeddings import Embeddings

from memory_chains.errors import InvalidInputError
from memory_chains.evaluation import DATA_DIR
from memory_chains.evaluation.metrics import bleu4, fold, rouge1_f1, rouge1_recall
from memory_chains.knowledge import LexicalIndex, SearchMode, hybrid_ranking
from memory_chains.rewrite import (
    RewriteResult,
    detect_language,
    entity_hints,
    fuse_rankings,
)

__all__ = [
    "DEV_CORPUS",
    "DEV_DATASET",
    "FAR_DATASET",
    "FOLLOWUP_CORPUS",
    "FOLLOWUP_SETS",
    "Rewriter",
    "appended",
    "evaluate_rewrites",
    "feed_history",
    "read_jsonl",
    "split_of",
]

FOLLOWUP_CORPUS = DATA_DIR / "followups" / "corpus.jsonl"
"""The follow-up collection's knowledge base: ten domains (bank, insurance, telecom,
health, SaaS, real estate, public services, education…), sibling offers and aspects as
distractors, French and English."""
FOLLOWUP_SETS = {
    "dev": DATA_DIR / "followups" / "dev.jsonl",
    "test": DATA_DIR / "followups" / "test.jsonl",
}
"""The follow-up collection, by split (see :func:`split_of`)."""
DEV_CORPUS = DATA_DIR / "rewrite_dev_corpus.jsonl"
"""The first corpus shipped with the package (laptops, gym classes, shop policies, trips…),
which the rewriter's earlier rules were tuned on."""
DEV_DATASET = DATA_DIR / "rewrite_dev.jsonl"
"""The first follow-ups shipped with the package, over :data:`DEV_CORPUS` (``--set legacy``)."""
FAR_DATASET = DATA_DIR / "rewrite_far_referents.jsonl"
"""Follow-ups over :data:`DEV_CORPUS` whose referent was named more than one exchange back,
with other names in between (``--set far``)."""

Progress = Callable[[int, int], None]


class Rewriter(Protocol):
    """What the harnesses measure: :class:`~memory_chains.rewrite.QueryRewriter`, or an
    anchor of :mod:`memory_chains.evaluation.baseline`."""

    def rewrite(
        self, question: str, history: Iterable[Any] | None, *, entities: Sequence[str] = ()
    ) -> RewriteResult:
        """Rewrite one follow-up."""
        ...


def split_of(item_id: str) -> str:
    """``"dev"`` or ``"test"``: the split an item belongs to, from a hash of its id.

    Fixed when the item is written, so nobody chooses which items are held out.

    Example:
        >>> split_of("fr-bank-001") in ("dev", "test")
        True
    """
    return "dev" if hashlib.sha256(item_id.encode("utf-8")).digest()[0] < 128 else "test"


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


_WORDS = re.compile(r"\w+", re.UNICODE)


_SENTENCES = re.compile(r"[^?!.]+[?!.]*")


def _sentences(text: str) -> list[str]:
    return [" ".join(_WORDS.findall(fold(s))) for s in _SENTENCES.findall(text) if s.strip()]


def appended(rewrite: str, question: str, history: Sequence[tuple[str, str]]) -> str | None:
    """What ``rewrite`` appends that no person would write, or ``None``.

    ``"parenthesis"``: a parenthesis the question did not have ("Et la garantie ? (Dell)");
    ``"pasted question"``: more sentences than the question has, one of them an earlier
    user turn (of four words or more) copied whole. An elliptic question completed from
    the one it continues ("Et pour le samedi ?" → "Quels sont les horaires du cours de
    Pilates pour le samedi ?") is one sentence, and not counted.

    Example:
        >>> h = [("user", "What is throat cancer?")]
        >>> appended("Is it treatable? (throat cancer)", "Is it treatable?", h)
        'parenthesis'
        >>> appended("What is throat cancer? Is it treatable?", "Is it treatable?", h)
        'pasted question'
        >>> appended("Is throat cancer treatable?", "Is it treatable?", h) is None
        True
    """
    if "(" in rewrite and "(" not in question:
        return "parenthesis"
    parts = _sentences(rewrite)
    if len(parts) <= len(_sentences(question)):
        return None
    earlier = {
        turn
        for role, text in history
        if role == "user"
        for turn in _sentences(text)
        if len(turn.split()) >= 4
    }
    if any(turn in part for part in parts for turn in earlier):
        return "pasted question"
    return None


def _require(row: dict[str, Any], key: str, kind: type, where: str) -> Any:
    value = row.get(key)
    if not isinstance(value, kind):
        raise InvalidInputError(f"{where}: field {key!r} must be a {kind.__name__}")
    return value


def _gold_docs(row: dict[str, Any], where: str) -> list[str]:
    gold = row.get("gold_docs", [row["gold_doc"]] if "gold_doc" in row else [])
    if not isinstance(gold, list) or not all(isinstance(g, str) for g in gold):
        raise InvalidInputError(f"{where}: gold_docs must be a list of corpus ids")
    return gold


def _normalised(vectors: list[list[float]]) -> np.ndarray:
    matrix = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


class _Retriever:
    """The knowledge base's search over a corpus embedded once (cosine, fused with BM25
    when ``mode="hybrid"``); several queries fused by RRF."""

    def __init__(
        self,
        ids: Sequence[str],
        texts: Sequence[str],
        embeddings: Embeddings,
        mode: SearchMode = "dense",
    ):
        self.ids = list(ids)
        self.embeddings = embeddings
        if mode not in get_args(SearchMode):
            raise InvalidInputError(f"search must be one of {get_args(SearchMode)}, got {mode!r}")
        self.matrix = _normalised(embeddings.embed_documents(list(texts)))
        self.lexical = LexicalIndex(texts) if mode == "hybrid" else None
        self._cache: dict[str, list[str]] = {}

    def rank(self, query: str) -> list[str]:
        if query not in self._cache:
            vector = _normalised([self.embeddings.embed_query(query)])[0]
            order = [int(i) for i in np.argsort(-(self.matrix @ vector), kind="stable")]
            if self.lexical is not None:
                fused = hybrid_ranking(order, self.lexical.scores(query))
                seen = set(fused)
                order = fused + [i for i in order if i not in seen]
            self._cache[query] = [self.ids[i] for i in order]
        return self._cache[query]

    def retrieve(self, queries: Sequence[str]) -> list[str]:
        rankings = [self.rank(q) for q in queries]
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


def _p95(values: Sequence[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 4)


def _text_scores(item: dict[str, Any], standalone: str, question: str, reference: str) -> None:
    item["reference"] = reference
    item["rouge1_recall"] = rouge1_recall(standalone, reference)
    item["rouge1_f1"] = rouge1_f1(standalone, reference)
    item["unchanged_rouge1_recall"] = rouge1_recall(question, reference)
    item["unchanged_rouge1_f1"] = rouge1_f1(question, reference)


def evaluate_rewrites(
    corpus_path: str | Path,
    dataset_path: str | Path,
    rewriter: Rewriter,
    embeddings: Embeddings,
    k: int = 3,
    *,
    progress: Progress | None = None,
    entity_memory: Callable[[], Any] | None = None,
    search: SearchMode = "dense",
) -> dict[str, Any]:
    """Rewrite every follow-up of ``dataset_path`` and retrieve over ``corpus_path``.

    Retrieval is the knowledge base's: cosine similarity over the corpus embedded once
    (``embed_documents``), each query embedded with ``embed_query`` (``search="hybrid"``:
    fused with BM25 by reciprocal rank); a rewrite's several queries
    (:attr:`~memory_chains.rewrite.RewriteResult.queries`) are merged by reciprocal rank
    fusion. An item's rank is the best rank of its gold passages.

    Returns:
        The metrics of :func:`summarise` over all items, ``by_language`` and ``by_family``
        (the same per group) and ``items`` (one row per follow-up).

    Raises:
        InvalidInputError: a file is missing or malformed, ``k < 1``, or a gold passage is
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
        for gold in _gold_docs(row, f"{dataset_path}:{row.get('id')}"):
            if gold not in known:
                raise InvalidInputError(
                    f"{dataset_path}:{row.get('id')}: unknown gold_doc {gold!r}"
                )
    retriever = _Retriever(ids, texts, embeddings, search)

    items: list[dict[str, Any]] = []
    for index, row in enumerate(dataset):
        where = f"{dataset_path}:{row.get('id', index)}"
        question = _require(row, "question", str, where)
        history = [(str(r), str(t)) for r, t in _require(row, "history", list, where)]
        hints: list[str] = []
        if entity_memory is not None:
            hints = entity_hints(feed_history(entity_memory(), history), question)
        result: RewriteResult = rewriter.rewrite(question, history, entities=hints)
        item = _item(row, index, question, history, result)
        item["entities"] = hints
        golds = _gold_docs(row, where)
        if golds:
            ranking = retriever.retrieve(result.queries)
            ranks = [ranking.index(g) + 1 for g in golds]
            item.update(
                rank=min(ranks),
                ranks=ranks,
                raw_rank=min(retriever.rank(question).index(g) + 1 for g in golds),
            )
            if isinstance(row.get("rewrite"), str):
                gold_ranking = retriever.rank(row["rewrite"])
                item["gold_rank"] = min(gold_ranking.index(g) + 1 for g in golds)
        mentions = row.get("must_mention")
        if mentions:
            folded = fold(result.standalone)
            item["mentioned"] = all(fold(m) in folded for m in mentions)
        if isinstance(row.get("rewrite"), str):
            _text_scores(item, result.standalone, question, row["rewrite"])
        items.append(item)
        if progress is not None:
            progress(index + 1, len(dataset))
    return _report(items, k)


def _item(
    row: dict[str, Any],
    index: int,
    question: str,
    history: Sequence[tuple[str, str]],
    result: RewriteResult,
) -> dict[str, Any]:
    language = row.get("lang") or detect_language(question)
    return {
        "id": row.get("id", str(index)),
        "language": language,
        "family": row.get("family", ""),
        "question": question,
        "standalone": result.standalone,
        "queries": list(result.queries),
        "method": result.method,
        "model_calls": result.model_calls,
        "output_tokens": result.output_tokens,
        "secs": round(result.latency_s, 4),
        "error": result.error,
        "appended": appended(result.standalone, question, history),
    }


def _report(items: list[dict[str, Any]], k: int) -> dict[str, Any]:
    report = summarise(items, k)
    for key, field in (("by_language", "language"), ("by_family", "family")):
        groups = sorted({item[field] for item in items if item[field]})
        if groups:
            report[key] = {g: summarise([i for i in items if i[field] == g], k) for g in groups}
    report["items"] = items
    return report


def summarise(items: list[dict[str, Any]], k: int = 3) -> dict[str, Any]:
    """The metrics of evaluated items (rows of :func:`evaluate_rewrites` or
    :func:`evaluate_references`).

    ``n``; retrieval: ``hit@1``, ``hit@{k}``, ``mrr``, ``all_gold@{k}`` (items with several
    gold passages: all of them in the top k), ``raw_hit@1`` (the question as asked),
    ``gold_hit@1`` (the human rewrite); ``mention_rate``; against the human rewrite:
    ``rouge1_recall``, ``rouge1_f1``, ``bleu4`` and the same for the question copied
    (``unchanged_…``); ``appended_rate`` (:func:`appended`); time: ``secs_per_item``
    (mean), ``median_secs``, ``p95_secs``, ``model_calls_per_item``,
    ``output_tokens_per_item``; methods: ``unchanged_rate``, ``template_rate``,
    ``model_rate``, ``fallback_rate``.

    Example:
        >>> summarise([{"rank": 1, "raw_rank": 2, "secs": 0.5, "model_calls": 1,
        ...             "method": "model", "appended": None}])["hit@1"]
        1.0
    """
    ranked = [i for i in items if "rank" in i]
    multi = [i for i in ranked if len(i.get("ranks", ())) > 1]
    secs = [i["secs"] for i in items]
    gold = [i for i in ranked if "gold_rank" in i]
    mention = [i["mentioned"] for i in items if "mentioned" in i]
    scored = [i for i in items if "reference" in i]

    def methods(name: str) -> float | None:
        return _mean([float(i["method"] == name) for i in items])

    return {
        "n": len(items),
        "hit@1": _mean([float(i["rank"] == 1) for i in ranked]),
        f"hit@{k}": _mean([float(i["rank"] <= k) for i in ranked]),
        "mrr": _mean([1.0 / i["rank"] for i in ranked]),
        f"all_gold@{k}": _mean([float(max(i["ranks"]) <= k) for i in multi]),
        "raw_hit@1": _mean([float(i["raw_rank"] == 1) for i in ranked]),
        "gold_hit@1": _mean([float(i["gold_rank"] == 1) for i in gold]),
        "mention_rate": _mean([float(m) for m in mention]),
        "rouge1_recall": _mean([i["rouge1_recall"] for i in scored]),
        "rouge1_f1": _mean([i["rouge1_f1"] for i in scored]),
        "bleu4": round(
            bleu4([i["standalone"] for i in scored], [i["reference"] for i in scored]), 2
        )
        if scored
        else None,
        "unchanged_rouge1_recall": _mean([i["unchanged_rouge1_recall"] for i in scored]),
        "unchanged_rouge1_f1": _mean([i["unchanged_rouge1_f1"] for i in scored]),
        "unchanged_bleu4": round(
            bleu4([i["question"] for i in scored], [i["reference"] for i in scored]), 2
        )
        if scored
        else None,
        "appended_rate": _mean([float(i.get("appended") is not None) for i in items]),
        "secs_per_item": _mean(secs),
        "median_secs": round(statistics.median(secs), 4) if secs else None,
        "p95_secs": _p95(secs),
        "model_calls_per_item": _mean([float(i["model_calls"]) for i in items]),
        "output_tokens_per_item": _mean([float(i.get("output_tokens", 0)) for i in items]),
        "unchanged_rate": methods("unchanged"),
        "template_rate": methods("template"),
        "model_rate": methods("model"),
        "fallback_rate": methods("fallback"),
    }
