"""How well "restatement" decisions separate paraphrases from changed facts.

:func:`evaluate_merge` embeds labelled pairs of fact sentences (``same``: a paraphrase
that must merge; otherwise a different fact or a changed value that must not) and scores
the decision :class:`~memory_chains.longterm.FactMemory` takes
(:func:`~memory_chains.longterm.restates`: cosine threshold + anchors) against
cosine alone at the same threshold. ``memory-chains eval longterm`` prints it for the
packaged pairs: ``dev``, the pairs the threshold and anchors were chosen on;
``heldout``, written next, on which the first rule failed 4 times and was then revised
(so no longer held out); ``fresh``, written after that revision and never tuned on.

Example:
    >>> from memory_chains.testing import HashEmbeddings
    >>> pairs = [MergePair("Il vit à Lyon.", "Il vit à Lyon !", True, "dev"),
    ...          MergePair("Il vit à Lyon.", "Il vit à Nice.", False, "dev")]
    >>> report = evaluate_merge(pairs, HashEmbeddings(), threshold=0.5)
    >>> report["all"]["accuracy"], report["all"]["cosine_only_accuracy"]
    (1.0, 0.5)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory_chains._jsonl import read_jsonl
from memory_chains.errors import InvalidInputError
from memory_chains.evaluation import DATA_DIR
from memory_chains.longterm import cosine, restates

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

__all__ = ["DEFAULT_PAIRS", "MergePair", "evaluate_merge", "load_pairs"]

#: the packaged French/English pairs (16 dev, 16 heldout, 16 fresh; half must merge).
DEFAULT_PAIRS = DATA_DIR / "longterm_pairs.jsonl"


@dataclass(frozen=True)
class MergePair:
    """Two fact sentences and whether they must merge.

    Example:
        >>> MergePair("a", "b", True).split
        'dev'
    """

    a: str
    b: str
    same: bool
    split: str = "dev"


def load_pairs(path: Path = DEFAULT_PAIRS) -> list[MergePair]:
    """Read a JSONL file of ``{"a", "b", "same", "split"}`` objects.

    Raises:
        InvalidInputError: a line is not such an object.

    Example:
        >>> len(load_pairs()) >= 32
        True
    """
    return read_jsonl(
        path,
        lambda row: MergePair(str(row["a"]), str(row["b"]), bool(row["same"]), row["split"]),
        "{a, b, same, split}",
    )


def _scores(rows: Sequence[dict[str, Any]], key: str) -> dict[str, float]:
    tp = sum(r["same"] and r[key] for r in rows)
    fp = sum(not r["same"] and r[key] for r in rows)
    fn = sum(r["same"] and not r[key] for r in rows)
    correct = sum(r["same"] == r[key] for r in rows)
    return {
        "precision": round(tp / (tp + fp), 3) if tp + fp else 1.0,
        "recall": round(tp / (tp + fn), 3) if tp + fn else 1.0,
        "accuracy": round(correct / len(rows), 3) if rows else 0.0,
    }


def evaluate_merge(
    pairs: Sequence[MergePair], embeddings: Embeddings, *, threshold: float
) -> dict[str, Any]:
    """Merge decisions on ``pairs``: per split and overall, ours and cosine-only.

    Returns:
        ``{"threshold", "pairs": [...], split: {"n", "accuracy", "precision", "recall",
        "cosine_only_accuracy", "same_min_cosine", "different_max_cosine"}}`` for each
        split and ``"all"``; precision and recall are those of "merge".
    """
    if not pairs:
        raise InvalidInputError("no pairs to evaluate")
    texts = sorted({t for p in pairs for t in (p.a, p.b)})
    vectors = dict(zip(texts, embeddings.embed_documents(texts), strict=True))
    rows: list[dict[str, Any]] = []
    for p in pairs:
        sim = cosine(vectors[p.a], vectors[p.b])
        rows.append(
            {
                "split": p.split,
                "same": p.same,
                "cosine": round(sim, 4),
                "merge": restates(p.b, p.a, sim, threshold),
                "cosine_only": sim >= threshold,
                "a": p.a,
                "b": p.b,
            }
        )
    report: dict[str, Any] = {"threshold": threshold, "pairs": rows}
    for split in [*sorted({r["split"] for r in rows}), "all"]:
        part = [r for r in rows if split in ("all", r["split"])]
        same = [r["cosine"] for r in part if r["same"]]
        diff = [r["cosine"] for r in part if not r["same"]]
        report[split] = {
            "n": len(part),
            **_scores(part, "merge"),
            "cosine_only_accuracy": _scores(part, "cosine_only")["accuracy"],
            "same_min_cosine": min(same) if same else None,
            "different_max_cosine": max(diff) if diff else None,
        }
    return report
