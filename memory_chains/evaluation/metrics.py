"""Text-overlap metrics for rewrite evaluation: pure functions, no dependencies.

* :func:`tokens`: lower-cased, punctuation-stripped unigrams (the tokenisation every metric
  here shares).
* :func:`rouge1_recall`: clipped unigram recall of a candidate against one reference;
  :func:`rouge1_f1`: its harmonic mean with the clipped unigram precision (charges for
  added words).
* :func:`bleu4`: corpus BLEU-4 (geometric mean of clipped 1..4-gram precisions, brevity
  penalty, no smoothing), reported on the usual 0-100 scale.
* :func:`fold`: case- and accent-insensitive folding, for "must mention" checks.

Example:
    >>> rouge1_recall("When did Zappa disband?", "When did Zappa and the Mothers disband?")
    0.571...
    >>> fold("Évènement À Paris") == fold("evenement a paris")
    True
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

from memory_chains._folding import fold

__all__ = ["bleu4", "fold", "rouge1_f1", "rouge1_recall", "tokens"]

_WORD = re.compile(r"\w+", re.UNICODE)


def tokens(text: str) -> list[str]:
    """Lower-case ``text`` and split it into word tokens, dropping punctuation.

    Example:
        >>> tokens("Quelle est sa garantie ?")
        ['quelle', 'est', 'sa', 'garantie']
    """
    return _WORD.findall(text.lower())


def rouge1_recall(candidate: str, reference: str) -> float:
    """Share of the reference's unigrams found in the candidate (counts clipped).

    Returns 0.0 for an empty reference.

    Example:
        >>> rouge1_recall("the the cat", "the cat sat")
        0.666...
    """
    ref = Counter(tokens(reference))
    total = sum(ref.values())
    if not total:
        return 0.0
    cand = Counter(tokens(candidate))
    return sum(min(n, cand[w]) for w, n in ref.items()) / total


def rouge1_f1(candidate: str, reference: str) -> float:
    """F1 of clipped unigram precision and recall of ``candidate`` against ``reference``.

    Words the candidate adds lower the precision: appending an earlier question or a name
    in parentheses costs here what it may gain in recall. Returns 0.0 when either text has
    no word.

    Example:
        >>> rouge1_f1("the cat", "the cat sat")
        0.8
        >>> round(rouge1_f1("the cat sat (the cat)", "the cat sat"), 3)
        0.75
    """
    ref = Counter(tokens(reference))
    cand = Counter(tokens(candidate))
    if not ref or not cand:
        return 0.0
    overlap = sum(min(n, cand[w]) for w, n in ref.items())
    if not overlap:
        return 0.0
    precision = overlap / sum(cand.values())
    recall = overlap / sum(ref.values())
    return 2 * precision * recall / (precision + recall)


def _ngrams(words: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(words[i : i + n]) for i in range(len(words) - n + 1))


def bleu4(candidates: Sequence[str], references: Sequence[str]) -> float:
    """Corpus BLEU-4 of ``candidates`` against one reference each, times 100.

    Clipped n-gram counts (n = 1..4) are summed over the corpus before taking precisions;
    the brevity penalty compares total candidate and reference lengths. No smoothing: a
    corpus with no matching 4-gram scores 0.

    Raises:
        ValueError: the two sequences differ in length.

    Example:
        >>> bleu4(["the cat sat on the mat"], ["the cat sat on the mat"])
        100.0
    """
    if len(candidates) != len(references):
        raise ValueError(
            f"bleu4 needs one reference per candidate ({len(candidates)} != {len(references)})"
        )
    matches = [0] * 4
    totals = [0] * 4
    cand_len = ref_len = 0
    for cand_text, ref_text in zip(candidates, references, strict=True):
        cand, ref = tokens(cand_text), tokens(ref_text)
        cand_len += len(cand)
        ref_len += len(ref)
        for n in range(1, 5):
            c, r = _ngrams(cand, n), _ngrams(ref, n)
            matches[n - 1] += sum(min(k, r[g]) for g, k in c.items())
            totals[n - 1] += max(len(cand) - n + 1, 0)
    if cand_len == 0 or min(matches) == 0:
        return 0.0
    log_precision = sum(math.log(m / t) for m, t in zip(matches, totals, strict=True)) / 4
    penalty = 1.0 if cand_len > ref_len else math.exp(1 - ref_len / cand_len)
    return round(100 * penalty * math.exp(log_precision), 10)
