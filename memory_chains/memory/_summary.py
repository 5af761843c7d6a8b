"""The running-summary memory: :class:`SummaryCore` (its model call is in
:mod:`memory_chains.memory._summarizer`).

Once the unsummarised turns of a session pass a threshold (turns, tokens or words), the
older ones are folded into a structured summary (:class:`~memory_chains.memory.SummaryData`:
key facts, decisions and commitments, user preferences, open questions) and the last
``keep_last`` turns stay verbatim.

How the summary avoids drift when it is rewritten again and again:

* the model is never asked to rewrite the summary. It sees the current items, numbered,
  and answers with a small JSON *change set* (items to add, ids to remove); previous items
  are carried forward verbatim by code (:func:`apply_update`);
* whatever produced the new summary (our summarizer or yours), :func:`carry_forward`
  checks that the anchors (numbers, dates, names, ids, masked placeholders) of every
  previous fact, decision and preference still appear; an item whose anchors vanished is
  re-appended. Only open questions may be dropped (they get answered);
* :func:`keep_turn_details` does the same for the folded turns themselves: a sentence
  carrying a number, date, id or name that the new summary misses is added verbatim (a
  lone digit counts with its word: "2 ans");
* :func:`drop_unsupported` drops a new item whose names and numbers are not stated
  together within three consecutive folded turns (a small model continuing a pattern:
  "the Dell has the RTX 4060" when only the ASUS was said to). It runs first, so a number
  it drops comes back as the turn's own sentence.

Compaction costs one model call and runs off the critical path (a background thread by
default; :meth:`SummaryCore.wait_idle` waits for it). It never loses anything: the raw turns
stay in the log, and the new summary replaces the old one together with its ``upto_seq``
marker in one compare-and-swap write. A model failure leaves the memory as it was; the next
turn tries again.

Example:
    >>> from memory_chains.testing import ScriptedChatModel, word_counter
    >>> llm = ScriptedChatModel(default='{"add_facts": ["Order 4821 ships to Lyon."]}')
    >>> mem = SummaryCore(llm, max_turns=2, keep_last=1, background=False,
    ...                   token_counter=word_counter)
    >>> for q in ("Order 4821, to Lyon please", "Thanks", "Bye"):
    ...     _ = mem.add_exchange(q, "Noted.")
    >>> ctx = mem.context()
    >>> ctx.summary, [t.seq for t in ctx.turns], len(llm.calls)
    ('Key facts: Order 4821 ships to Lyon.', [3], 1)
"""

from __future__ import annotations

import asyncio
import functools
import logging
import queue
import threading
import time
from dataclasses import dataclass, replace
from typing import Any

from memory_chains.errors import (
    InvalidInputError,
    MalformedOutputError,
)
from memory_chains.memory._core import MemoryContext, MemoryStats, ShortTermMemory
from memory_chains.memory._summarizer import LLMSummarizer, Summarizer
from memory_chains.memory._summary_data import SummaryData, fit_budget
from memory_chains.memory._summary_drift import carry_forward, drop_unsupported, keep_turn_details
from memory_chains.memory._text import (
    TokenCounter,
    default_token_counter,
    render_turns,
    word_count,
)
from memory_chains.protocol import implements
from memory_chains.stores import SummaryState, Turn

__all__ = ["CompactionResult", "SummaryCore"]

log = logging.getLogger("memory_chains.memory")

_WORKER_START_DELAY = 0.005  # seconds


def _compactions(state: SummaryState) -> int:
    value = state.data.get("compactions", 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


@dataclass(frozen=True)
class CompactionResult:
    """What one compaction did.

    Attributes:
        state: the summary state written (or the one found, when ``conflict``).
        folded_turns: turns folded into the summary.
        restored_items: previous items re-appended by :func:`carry_forward`.
        dropped_items: oldest items dropped to fit ``max_summary_tokens``.
        unsupported_items: new items dropped because the folded turns do not state their
            names and numbers together (:func:`drop_unsupported`).
        conflict: another writer replaced the summary first; nothing was written.

    Example:
        >>> CompactionResult(SummaryState("Key facts: x.", 4, {}, 1), folded_turns=4).conflict
        False
    """

    state: SummaryState
    folded_turns: int
    restored_items: int = 0
    dropped_items: int = 0
    unsupported_items: int = 0
    conflict: bool = False


class SummaryCore(ShortTermMemory):
    """A structured running summary plus the last ``keep_last`` turns verbatim.

    Args:
        llm: chat model writing summaries (default: ``memory_chains.providers
            .get_chat_model()``, resolved at the first compaction).
        summarizer: a :class:`Summarizer` to use instead of ``LLMSummarizer(llm)``.
        max_turns, max_tokens, max_words: compaction starts when the unsummarised turns
            exceed any of the thresholds given (``max_tokens=1000`` when none is given).
        keep_last: turns always kept verbatim (0 or more).
        max_summary_tokens: the summary is trimmed (oldest open questions first) to fit.
        background: compact in a background thread (default) or inline in the save call.
        **kwargs: see :class:`~memory_chains.memory.ShortTermMemory`.

    The prompt gets at most ``max_summary_tokens`` plus the threshold plus one exchange
    (the pending turns while a compaction runs).
    """

    def __init__(
        self,
        llm: Any = None,
        *,
        summarizer: Summarizer | None = None,
        max_turns: int | None = None,
        max_tokens: int | None = None,
        max_words: int | None = None,
        keep_last: int = 4,
        max_summary_tokens: int = 600,
        background: bool = True,
        **kwargs: Any,
    ) -> None:
        for name, value in (
            ("max_turns", max_turns),
            ("max_tokens", max_tokens),
            ("max_words", max_words),
        ):
            if value is not None and (
                not isinstance(value, int) or isinstance(value, bool) or value < 1
            ):
                raise InvalidInputError(f"{name} must be a positive integer or None, got {value!r}")
        if isinstance(keep_last, bool) or not isinstance(keep_last, int) or keep_last < 0:
            raise InvalidInputError(f"keep_last must be an integer >= 0, got {keep_last!r}")
        if (
            isinstance(max_summary_tokens, bool)
            or not isinstance(max_summary_tokens, int)
            or max_summary_tokens < 1
        ):
            raise InvalidInputError("max_summary_tokens must be a positive integer")
        if summarizer is not None and not implements(summarizer, Summarizer):
            raise InvalidInputError("summarizer must have a summarize(previous, turns) method")
        super().__init__(**kwargs)
        if max_turns is None and max_tokens is None and max_words is None:
            max_tokens = 1000
        self.max_turns = max_turns
        self.max_tokens = max_tokens
        self.max_words = max_words
        self.keep_last = keep_last
        self.max_summary_tokens = max_summary_tokens
        self.background = background
        self._llm = llm
        self._summarizer = summarizer
        self._turn_tokens = functools.lru_cache(maxsize=4096)(self._cost)
        self._lock = threading.Lock()
        self._idle = threading.Event()
        self._idle.set()
        self._running = False
        self._again = False
        self.compaction_failures = 0
        self.last_error: BaseException | None = None

    # -- summarizer ----------------------------------------------------------------------

    @property
    def token_counter(self) -> TokenCounter:
        """Given counter, else the exact counter of ``llm`` when it is the embedded model."""
        if self._token_counter is None:
            self._token_counter = default_token_counter(self._llm)
        return self._token_counter

    @property
    def summarizer(self) -> Summarizer:
        """The summarizer (built from ``llm`` or the default chat model on first use)."""
        if self._summarizer is None:
            llm = self._llm
            if llm is None:
                from memory_chains.providers import get_chat_model

                llm = get_chat_model(temperature=0.0, max_tokens=320)
            self._summarizer = LLMSummarizer(llm)
        return self._summarizer

    # -- reading -------------------------------------------------------------------------

    def _cost(self, human: str, ai: str) -> int:
        return self.count_tokens(
            render_turns([Turn(0, human, ai)], self.human_prefix, self.ai_prefix)
        )

    def _pending(self) -> tuple[SummaryState, list[Turn]]:
        state = self.store.get_summary(self.user_id, self.session_id)
        return state, self.store.turns_after(self.user_id, self.session_id, state.upto_seq)

    def context(self) -> MemoryContext:
        state, turns = self._pending()
        return MemoryContext(state.text, tuple(turns))

    def stats(self) -> MemoryStats:
        base = super().stats()
        state = self.store.get_summary(self.user_id, self.session_id)
        return replace(
            base, compactions=_compactions(state), compaction_failures=self.compaction_failures
        )

    # -- compaction ----------------------------------------------------------------------

    def _fold(self, turns: list[Turn]) -> list[Turn]:
        """The turns to fold, or [] when no threshold is passed (no negative slicing)."""
        foldable = len(turns) - self.keep_last
        if foldable <= 0:
            return []
        over = (
            (self.max_turns is not None and len(turns) > self.max_turns)
            or (
                self.max_tokens is not None
                and sum(self._turn_tokens(t.human, t.ai) for t in turns) > self.max_tokens
            )
            or (
                self.max_words is not None
                and sum(word_count(t.human) + word_count(t.ai) for t in turns) > self.max_words
            )
        )
        return turns[:foldable] if over else []

    def needs_compaction(self) -> bool:
        """True when the unsummarised turns pass a threshold."""
        return bool(self._fold(self._pending()[1]))

    def compact_now(self) -> CompactionResult | None:
        """Compact synchronously if a threshold is passed (one model call); else None.

        Raises:
            ModelCallError, MalformedOutputError: the model failed; nothing changed.
        """
        state, pending = self._pending()
        fold = self._fold(pending)
        if not fold:
            return None
        previous = SummaryData.from_json(state.data)
        produced = self.summarizer.summarize(previous, fold)
        if not isinstance(produced, SummaryData):
            raise MalformedOutputError(
                f"the summarizer returned {type(produced).__name__}, not SummaryData"
            )
        grounded, unsupported = drop_unsupported(previous, produced, fold)
        repaired, restored = carry_forward(previous, grounded)
        repaired, kept = keep_turn_details(repaired, fold)
        restored += kept
        fitted, dropped = fit_budget(repaired, self.max_summary_tokens, self.count_tokens)
        data: dict[str, Any] = {
            **fitted.to_json(),
            "compactions": _compactions(state) + 1,
        }
        new_state = self.store.replace_summary(
            self.user_id,
            self.session_id,
            fitted.render(),
            fold[-1].seq,
            data,
            expected_version=state.version,
        )
        if new_state is None:
            current = self.store.get_summary(self.user_id, self.session_id)
            return CompactionResult(current, 0, conflict=True)
        if restored or dropped or unsupported:
            log.info(
                "summary compaction restored %d items, dropped %d over budget, %d unsupported",
                restored,
                dropped,
                unsupported,
            )
        return CompactionResult(new_state, len(fold), restored, dropped, unsupported)

    async def acompact_now(self) -> CompactionResult | None:
        """Async :meth:`compact_now` (runs in a thread)."""
        return await asyncio.to_thread(self.compact_now)

    def _after_append(self, turn: Turn) -> None:
        if not self.background:
            self._compact_recording_errors()
            return
        if not self.needs_compaction():
            return
        with self._lock:
            if self._running:
                self._again = True
                return
            self._running = True
            self._idle.clear()
        _COMPACTOR.submit(self)

    def _compact_recording_errors(self) -> bool:
        """Compact once; a failure is recorded (the raw turns stay) and retried next turn."""
        try:
            self.compact_now()
        except Exception as exc:  # recorded and retried next turn: nothing is lost
            self.compaction_failures += 1
            self.last_error = exc
            log.warning("summary compaction failed, the turns stay verbatim: %s", exc)
            return False
        self.last_error = None
        return True

    def _run_compactions(self) -> None:
        """Compact until no threshold is passed (runs in the shared compaction thread)."""
        # Let the caller's turn finish first: sleeping releases the GIL, so the reply path
        # does not wait for this thread's Python work (a model call takes seconds anyway).
        time.sleep(_WORKER_START_DELAY)
        try:
            while True:
                ok = self._compact_recording_errors()
                with self._lock:
                    if not (ok and (self._again or self.needs_compaction())):
                        self._running = False
                        self._again = False
                        self._idle.set()
                        return
                    self._again = False
        except BaseException:
            with self._lock:
                self._running = False
                self._idle.set()
            raise

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until no compaction is running; False if ``timeout`` (seconds) passed first."""
        return self._idle.wait(timeout)

    async def await_idle(self, timeout: float | None = None) -> bool:
        """Async :meth:`wait_idle`."""
        return await asyncio.to_thread(self._idle.wait, timeout)


class _Compactor:
    """One daemon thread per process running every background compaction, in order.

    Starting a thread per compaction costs milliseconds on a loaded machine; a queue put
    costs microseconds. Compactions share the model anyway, so running them one at a time
    loses nothing.
    """

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[SummaryCore] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def submit(self, core: SummaryCore) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="memory-chains-compaction", daemon=True
                )
                self._thread.start()
        self._queue.put(core)

    def _run(self) -> None:
        while True:
            core = self._queue.get()
            try:
                core._run_compactions()
            except BaseException:  # already recorded on the core; keep serving the others
                log.exception("background compaction crashed")


_COMPACTOR = _Compactor()
