"""The token budget's allocation between blocks: :func:`allocate` (pure, deterministic).

1. Each block first gets ``min(need, fair share)`` tokens, the fair share being the budget
   divided by the number of blocks, and is shrunk to that
   (:func:`~memory_chains.context._block.fit`).
2. The tokens left over go to the blocks still short, in priority order (highest first;
   ties: the block listed first). So the lowest priorities are the ones left shrunk.
3. When a block cannot exist on what it got (``shrink="drop"``, below ``min_tokens``, not
   one item fits), the lowest-priority block is dropped and the budget shared again, until
   every block left has a place. A block that does not fit even alone is dropped first.
4. Sub-word tokenizers do not add up exactly: the joined rendering is counted at the end,
   and while it exceeds the budget the lowest-priority block shrinks again (or goes).

Example:
    >>> words = lambda t: len(t.split())
    >>> a = ContextBlock("a", ("one two three",), priority=2)
    >>> b = ContextBlock("b", ("four five", "six seven"), priority=1)
    >>> [x.items if x else None for x in allocate([a, b], 9, words)]
    [('one two three',), ('four five',)]
"""

from __future__ import annotations

from collections.abc import Sequence

from memory_chains.context._block import ContextBlock, TokenCounter, fit, total_render

__all__ = ["allocate"]

_SEPARATOR = "\n\n"


def allocate(
    blocks: Sequence[ContextBlock], budget: int, count: TokenCounter
) -> tuple[ContextBlock | None, ...]:
    """Fit ``blocks`` into ``budget`` tokens; the result is aligned with ``blocks``
    (the block itself when whole, a shrunk copy, or ``None`` when dropped).

    Example:
        >>> words = lambda t: len(t.split())
        >>> high = ContextBlock("high", ("one two three four",), priority=2, shrink="drop")
        >>> low = ContextBlock("low", ("five six seven",), priority=1)
        >>> [x is not None for x in allocate([low, high], 7, words)]
        [False, True]
    """
    sep = count(_SEPARATOR)
    alive = sorted(
        (i for i, b in enumerate(blocks) if fit(b, budget - sep, count) is not None),
        key=lambda i: (-blocks[i].priority, i),
    )
    while True:
        fitted = _share_out(blocks, alive, budget, count)
        if all(fitted[i] is not None for i in alive):
            break
        alive.pop()  # the lowest priority makes room
    kept = {i: b for i, b in fitted.items() if b is not None}

    def rendering() -> str:
        return total_render([kept[i] for i in sorted(kept)])

    while kept and (excess := count(rendering()) - budget) > 0:
        i = min(kept, key=lambda i: (blocks[i].priority, -i))
        smaller = fit(kept[i], count(kept[i].render()) - excess, count)
        if smaller is None or smaller is kept[i]:
            del kept[i]
        else:
            kept[i] = smaller
    return tuple(kept.get(i) for i in range(len(blocks)))


def _share_out(
    blocks: Sequence[ContextBlock], alive: Sequence[int], budget: int, count: TokenCounter
) -> dict[int, ContextBlock | None]:
    """Steps 1 and 2 for the blocks ``alive`` (sorted by decreasing priority)."""
    sep = count(_SEPARATOR)

    def cost(block: ContextBlock | None) -> int:
        return count(block.render()) + sep if block is not None else 0

    share = budget // len(alive) if alive else 0
    fitted = {i: fit(blocks[i], min(cost(blocks[i]), share) - sep, count) for i in alive}
    left = budget - sum(cost(b) for b in fitted.values())
    for i in alive:
        current = fitted[i]
        if current is blocks[i] or left <= 0:
            continue
        better = fit(blocks[i], cost(current) + left - sep, count)
        if better is not None:
            left -= cost(better) - cost(current)
            fitted[i] = better
    return fitted
