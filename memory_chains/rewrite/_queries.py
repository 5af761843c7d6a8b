"""Search queries for one rewrite: the standalone question, one query per compared thing,
and the conversation when the rewrite is not trusted.

* A question about several named things ("Compare la garantie du Dell XPS 15 et celle du
  Lenovo ThinkPad ?") retrieves each of them: one query per thing, its name and what is
  asked of it, so that every thing's passage reaches the answer step.
* A rewrite that could not be checked (written by rules, or the question left as asked
  when it leans on the conversation) is fused with the last user turn and the question,
  the strongest conversational baseline for retrieval.

Several queries are merged by reciprocal rank fusion
(:func:`~memory_chains.rewrite.fuse_rankings`).

Example:
    >>> for query in search_queries("Compare la garantie du Dell XPS 15 et du Lenovo ThinkPad",
    ...                             "Et compare à celui de Lenovo ?", [],
    ...                             ["Lenovo ThinkPad", "Dell XPS 15"]):
    ...     print(query)
    Compare la garantie du Dell XPS 15 et du Lenovo ThinkPad
    Dell XPS 15 garantie
    Lenovo ThinkPad garantie
"""

from __future__ import annotations

from collections.abc import Sequence

from memory_chains._folding import fold
from memory_chains._terms import QUESTION_WORDS, keywords
from memory_chains.rewrite._history import Turn, last_user_text

__all__ = ["compared_names", "search_queries"]

_COMPARISON_WORDS = frozenset(
    (
        "compare", "comparer", "comparez", "comparaison", "difference", "differences",
        "entre", "celui", "celle", "ceux", "celles", "lequel", "laquelle", "lesquels",
        "lesquelles", "versus", "compared", "comparison", "between", "which", "one", "ones",
        "other", "autre", "autres",
    )
)  # fmt: skip


def compared_names(standalone: str, names: Sequence[str]) -> list[str]:
    """The ``names`` that ``standalone`` mentions, in the order it mentions them; a name
    contained in a longer one it also mentions is dropped.

    Example:
        >>> compared_names("Le Dell XPS 15 ou le Lenovo ?", ["Lenovo", "Dell XPS 15", "Dell"])
        ['Dell XPS 15', 'Lenovo']
    """
    folded = fold(standalone)
    found = [(folded.find(fold(n)), n) for n in names if n.strip() and fold(n) in folded]
    kept = [(at, n) for at, n in found if not any(fold(n) in fold(m) and n != m for _, m in found)]
    return [n for _, n in sorted(kept)]


def search_queries(
    standalone: str,
    question: str,
    turns: Sequence[Turn],
    names: Sequence[str],
    *,
    confident: bool = True,
) -> tuple[str, ...]:
    """The queries retrieval runs for one rewrite (the first is ``standalone``).

    Args:
        standalone: the rewrite.
        question: the question as asked.
        turns: the conversation before it.
        names: the conversation's names (and the entity memory's).
        confident: False when the rewrite could not be checked: the last user turn and
            the question are added as a query.
    """
    queries = [standalone]
    compared = compared_names(standalone, names)
    if len(compared) >= 2:
        name_words = {w for n in compared for w in keywords(n)}
        aspect = [
            w
            for w in keywords(standalone)
            if w not in name_words and w not in QUESTION_WORDS and w not in _COMPARISON_WORDS
        ]
        aspect_text = " ".join(aspect)
        queries.extend(f"{name} {aspect_text}".strip() for name in compared)
    if not confident:
        last = last_user_text(turns)
        if last:
            queries.append(f"{last} {question}")
    return tuple(dict.fromkeys(queries))
