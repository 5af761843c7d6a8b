"""One named piece of a prompt's context: :class:`ContextBlock`, and how it shrinks.

A block is a list of items (turns, entity lines, facts, documents…) under a heading, with a
priority and a shrink policy (:data:`Shrink`). :func:`fit` returns the largest version of a
block that fits a token budget, or ``None`` when the block should rather be dropped. It
never mutates the block it is given.

Example:
    >>> b = ContextBlock("recent", ("Human: a\\nAI: b", "Human: c\\nAI: d"), shrink="drop_oldest")
    >>> fit(b, 6, lambda t: len(t.split())).items
    ('Human: c\\nAI: d',)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from memory_chains.errors import InvalidInputError

__all__ = [
    "TRUNCATION_MARK",
    "ContextBlock",
    "Shrink",
    "TokenCounter",
    "fit",
    "keep_first",
    "keep_last",
    "total_render",
]

TokenCounter = Callable[[str], int]

Shrink = Literal["drop_oldest", "drop_last", "truncate", "drop"]
"""How a block gets smaller: ``drop_oldest`` removes items from the front (items are oldest
first: turns), ``drop_last`` removes them from the end (items are most relevant first:
entities, facts, documents), ``truncate`` keeps the first items and cuts the next one at a
word boundary, ``drop`` keeps the block whole or not at all."""

_SHRINKS = ("drop_oldest", "drop_last", "truncate", "drop")
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
TRUNCATION_MARK = " […]"


@dataclass(frozen=True)
class ContextBlock:
    """A named section of the context, with a priority and a way to shrink.

    Attributes:
        name: identifier (``recent``, ``entities``…: lower-case letters, digits, ``_``).
        items: the block's content, one string per item, in the order they are rendered.
        priority: higher is more important; the lowest priority shrinks first.
        title: the section heading (defaults to ``name``).
        shrink: see :data:`Shrink`.
        min_tokens: below this many tokens the block is dropped rather than shrunk.
        turns: the ``(human, ai)`` exchanges behind the block's *last* ``len(turns)``
            items (recent-turn blocks); used for topic detection and chat history.
        cited_ids: ids of the stored records the block quotes (recalled turns).

    Example:
        >>> b = ContextBlock("facts", ("Lives in Lyon.", "Prefers e-mail."), priority=5)
        >>> print(b.render())
        ## facts
        Lives in Lyon.
        Prefers e-mail.
    """

    name: str
    items: tuple[str, ...] = ()
    priority: int = 0
    title: str = ""
    shrink: Shrink = "drop_last"
    min_tokens: int = 0
    turns: tuple[tuple[str, str], ...] = ()
    cited_ids: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise InvalidInputError(
                f"block name {self.name!r} is invalid: use 1-40 lower-case letters, digits "
                "or '_', starting with a letter"
            )
        if isinstance(self.items, (str, bytes)) or not all(isinstance(i, str) for i in self.items):
            raise InvalidInputError(f"block {self.name!r}: items must be a tuple of strings")
        if self.shrink not in _SHRINKS:
            raise InvalidInputError(
                f"block {self.name!r}: shrink must be one of {_SHRINKS}, got {self.shrink!r}"
            )
        if isinstance(self.min_tokens, bool) or not isinstance(self.min_tokens, int):
            raise InvalidInputError(f"block {self.name!r}: min_tokens must be an integer")
        # tuples, whatever sequence the caller passed; blank items say nothing
        object.__setattr__(self, "items", tuple(i for i in self.items if i.strip()))
        object.__setattr__(self, "turns", tuple((str(h), str(a)) for h, a in self.turns))
        object.__setattr__(self, "cited_ids", tuple(self.cited_ids))
        if len(self.turns) > len(self.items):
            raise InvalidInputError(
                f"block {self.name!r}: {len(self.turns)} turns for {len(self.items)} items"
            )

    @classmethod
    def from_text(cls, name: str, text: str, **kwargs: object) -> ContextBlock:
        """A block made of one text (shrinks by truncation unless told otherwise).

        Example:
            >>> ContextBlock.from_text("note", "  Be brief.  ").items
            ('Be brief.',)
        """
        options: dict[str, object] = {"shrink": "truncate", **kwargs}
        return cls(name, (text.strip(),) if text.strip() else (), **options)  # type: ignore[arg-type]

    @property
    def heading(self) -> str:
        """The section heading: :attr:`title`, else :attr:`name`."""
        return self.title or self.name

    @property
    def empty(self) -> bool:
        """True when the block has nothing to say."""
        return not self.items

    def body(self) -> str:
        """The items, one per line."""
        return "\n".join(self.items)

    def render(self) -> str:
        """``## heading`` then the items; ``""`` for an empty block."""
        return f"## {self.heading}\n{self.body()}" if self.items else ""


def fit(block: ContextBlock, max_tokens: int, count: TokenCounter) -> ContextBlock | None:
    """The largest version of ``block`` whose rendering fits ``max_tokens`` tokens.

    Returns ``block`` itself when it fits, a smaller copy when it can shrink, ``None`` when
    it should be dropped (``shrink="drop"``, a budget below ``min_tokens``, or not even one
    item fits).

    Example:
        >>> b = ContextBlock.from_text("note", "one two three four five six")
        >>> fit(b, 5, lambda t: len(t.split())).items
        ('one two […]',)
    """
    if block.empty:
        return None
    if count(block.render()) <= max_tokens:
        return block
    if block.shrink == "drop" or max_tokens < block.min_tokens:
        return None
    n = len(block.items)
    if block.shrink == "drop_oldest":
        k = _largest(n - 1, lambda k: count(keep_last(block, k).render()) <= max_tokens)
        return keep_last(block, k) if k else None
    k = _largest(n - 1, lambda k: count(keep_first(block, k).render()) <= max_tokens)
    if block.shrink == "truncate":
        cut = _truncate_item(block, k, max_tokens, count)
        if cut is not None:
            return cut
    return keep_first(block, k) if k else None


def _largest(upper: int, ok: Callable[[int], bool]) -> int:
    """Largest k in [0, upper] with ok(k), ok being monotone (true then false); 0 if none."""
    lo, hi = 0, upper
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo if lo > 0 and ok(lo) else 0


def keep_last(block: ContextBlock, k: int) -> ContextBlock:
    """``block`` with only its last ``k`` items (and the turns among them)."""
    turns = block.turns[len(block.turns) - min(k, len(block.turns)) :] if k else ()
    return replace(block, items=block.items[len(block.items) - k :] if k else (), turns=turns)


def keep_first(block: ContextBlock, k: int) -> ContextBlock:
    """``block`` with only its first ``k`` items (and the turns among them)."""
    # turns belong to the trailing items: keep those among the first k
    leading = len(block.items) - len(block.turns)
    kept_turns = max(0, k - leading)
    return replace(block, items=block.items[:k], turns=block.turns[:kept_turns])


def _truncate_item(
    block: ContextBlock, whole: int, max_tokens: int, count: TokenCounter
) -> ContextBlock | None:
    """Keep ``whole`` items and as many words of the next one as fit (None if no word fits)."""
    base = keep_first(block, whole)
    words = block.items[whole].split(" ")

    def cut(j: int) -> ContextBlock:
        partial = " ".join(words[:j]).rstrip() + TRUNCATION_MARK
        return replace(base, items=(*base.items, partial))

    j = _largest(len(words) - 1, lambda j: count(cut(j).render()) <= max_tokens)
    return cut(j) if j else None


def total_render(blocks: Sequence[ContextBlock]) -> str:
    """The rendering of several blocks, separated by blank lines (empty blocks skipped)."""
    return "\n\n".join(b.render() for b in blocks if not b.empty)
