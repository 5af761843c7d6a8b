"""Reading the load generator's store back: :func:`verify_turns` and its :class:`Verification`.

Every session of the plan (:mod:`memory_chains.evaluation._loadgen_plan`) is read back and
each turn's token ``w<worker>-i<index>`` checked against its human and AI halves, its
metadata and its session, to count the turns lost, duplicated, out of order or partial,
the ``seq`` gaps, and the writers whose stored turns are not a prefix of their plan.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memory_chains.stores import BaseStore

__all__ = ["Verification", "verify_turns"]

_TOKEN_RE = re.compile(r"\bw(\d+)-i(\d+)\b")


@dataclass(frozen=True)
class Verification:
    """The store read back after writers ran.

    Attributes:
        expected: turns the writers reported as written.
        found: turns in the store (all sessions of the plan).
        lost: reported written but absent.
        duplicated: tokens found more than once.
        out_of_order: pairs of one writer's turns stored in the wrong order in a session.
        partial: turns whose human and AI halves (or metadata) disagree, malformed turns,
            ``seq`` gaps and sessions whose counter disagrees with their turns.
        not_prefix: writers whose stored turns are not their first k turns (a turn after a
            missing one: the log lost a write in the middle).
        problems: the first problems found, for messages.

    Example:
        >>> Verification(1, 1, 0, 0, 0, 0, 0).ok
        True
    """

    expected: int
    found: int
    lost: int
    duplicated: int
    out_of_order: int
    partial: int
    not_prefix: int
    problems: tuple[str, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        """No turn lost, duplicated, reordered or partial."""
        return not (
            self.lost or self.duplicated or self.out_of_order or self.partial or self.not_prefix
        )


def verify_turns(
    store: BaseStore, sessions: int, users: int, written: dict[int, int] | None = None
) -> Verification:
    """Read every session of the plan back and check it.

    Args:
        store: the store (set up).
        sessions, users: as given to :func:`turn_plan`.
        written: turns each writer reported as written (writer -> count); a writer killed
            mid-write may have one more turn stored than it reported, never fewer.

    Example:
        >>> from memory_chains.stores import InMemoryStore
        >>> from memory_chains.evaluation._loadgen_plan import turn_plan, write_turns
        >>> store = InMemoryStore()
        >>> report = write_turns(store, 0, turn_plan(0, 4, 2, 1))
        >>> verify_turns(store, 2, 1, {0: report.written}).ok
        True
    """
    problems: list[str] = []
    seen: dict[tuple[int, int], int] = {}
    partial = out_of_order = 0
    for s in range(sessions):
        user_id, session_id = f"u{s % users}", f"s{s}"
        turns = store.turns_after(user_id, session_id)
        count, last = store.count_turns(user_id, session_id), store.last_seq(user_id, session_id)
        if [t.seq for t in turns] != list(range(1, len(turns) + 1)) or (count, last) != (
            len(turns),
            len(turns),
        ):
            partial += 1
            problems.append(
                f"{session_id}: seqs {[t.seq for t in turns][:8]}…, count {count}, last {last}"
            )
        last_index: dict[int, int] = {}
        for t in turns:
            h, a = _TOKEN_RE.findall(t.human), _TOKEN_RE.findall(t.ai)
            meta = t.metadata.get("token")
            if len(h) != 1 or h != a or meta != f"w{h[0][0]}-i{h[0][1]}":
                partial += 1
                problems.append(f"{session_id} seq {t.seq}: partial turn {t.human!r}/{t.ai!r}")
                continue
            worker, index = int(h[0][0]), int(h[0][1])
            if (worker + index) % sessions != s:
                partial += 1
                problems.append(f"{session_id} seq {t.seq}: turn w{worker}-i{index} misfiled")
            seen[(worker, index)] = seen.get((worker, index), 0) + 1
            if index <= last_index.get(worker, -1):
                out_of_order += 1
                problems.append(f"{session_id} seq {t.seq}: w{worker}-i{index} out of order")
            last_index[worker] = index
    duplicated = sum(n - 1 for n in seen.values() if n > 1)
    lost = not_prefix = 0
    workers = set(written or {}) | {w for w, _ in seen}
    for w in sorted(workers):
        indexes = sorted({i for ww, i in seen if ww == w})
        if indexes != list(range(len(indexes))):
            not_prefix += 1
            problems.append(f"writer {w}: stored turns are not a prefix ({indexes[:5]}…)")
        reported = (written or {}).get(w)
        if reported is not None:
            missing = [i for i in range(reported) if (w, i) not in seen]
            lost += len(missing)
            if missing:
                problems.append(f"writer {w}: {len(missing)} turns lost, first i{missing[0]}")
            if len(indexes) > reported + 1:
                problems.append(f"writer {w}: {len(indexes)} stored, {reported} reported")
                not_prefix += 1
    return Verification(
        expected=sum((written or {}).values()),
        found=sum(seen.values()),
        lost=lost,
        duplicated=duplicated,
        out_of_order=out_of_order,
        partial=partial,
        not_prefix=not_prefix,
        problems=tuple(problems[:10]),
    )
