"""The long-term memory facade: :class:`LongTermMemory` (profile + facts of one user).

``observe(human, ai, session_id=…)`` masks personal data, asks the extractor once for
profile updates and facts, then merges them (:class:`~memory_chains.longterm.UserProfile`,
:class:`~memory_chains.longterm.FactMemory`). Nothing is written before the extractor and
the embeddings succeeded, so a failed model call leaves memory exactly as it was.
``observe_in_background`` does the same on one worker thread per memory, off the answer's
critical path; :meth:`LongTermMemory.flush` waits for it and raises what failed.

Reading: :meth:`~LongTermMemory.profile_block` and :meth:`~LongTermMemory.facts_block` are
the two blocks a context builder asks for; :meth:`~LongTermMemory.context` joins them.

Example:
    >>> from memory_chains.stores import InMemoryStore
    >>> from memory_chains.testing import HashEmbeddings
    >>> mem = LongTermMemory(InMemoryStore(), "alice", HashEmbeddings())
    >>> _ = mem.observe("Je m'appelle Alice et je préfère le Pilates le samedi matin.",
    ...                 "Noté !", session_id="s1", seq=1)
    >>> print(mem.context("Quel cours le samedi ?", max_tokens=80))
    User profile:
    - language: fr (inferred)
    <BLANKLINE>
    Known facts about the user:
    - L'utilisateur préfère le Pilates le samedi matin.
    - L'utilisateur s'appelle Alice.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from memory_chains.errors import InvalidInputError
from memory_chains.longterm._background import BackgroundWorker
from memory_chains.longterm._extract import (
    Extractor,
    LongTermExtraction,
    LongTermExtractor,
    RuleLongTermExtractor,
)
from memory_chains.longterm._fact_types import Fact, FactCandidate, FactChanges
from memory_chains.longterm._facts import DEFAULT_MERGE_THRESHOLD, FactMemory
from memory_chains.longterm._observation import ObserveReport, Observing, _Turn, check_turn
from memory_chains.longterm._profile import UserProfile, profile_instructions
from memory_chains.longterm._session import LongTermSession
from memory_chains.protocol import MemoryBase, MemoryBlock, block_name, check_budget, implements
from memory_chains.stores import validate_id

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

    from memory_chains.stores import BaseStore

__all__ = ["LongTermMemory"]


_DEFAULT = object()


class LongTermMemory(Observing[ObserveReport], MemoryBase):
    """Long-term memory of one user across sessions: a profile and durable facts.

    Args:
        store: any :class:`~memory_chains.stores.BaseStore`; documents go under
            ``("profile", user_id)`` and ``("facts", user_id)``, so
            :func:`~memory_chains.stores.forget_user` erases them.
        user_id: whose memory (``"__global__"`` is reserved).
        embeddings: any LangChain ``Embeddings`` (``E5Embeddings`` offline).
        extractor: a :class:`LongTermExtractor`, :class:`RuleLongTermExtractor` or
            anything with ``extract``/``aextract``; default: ``LongTermExtractor(llm)``
            when ``llm`` is given, else the rules.
        llm: chat model for the default extractor.
        masker: callable masking personal data before anything is extracted or stored
            (default :class:`~memory_chains.privacy.PIIMasker`; ``None`` disables it).
        token_counter: counts tokens for the blocks' budgets (default
            :func:`~memory_chains.providers.approximate_token_count`).
        include_global: recall facts stored with ``scope="global"`` too.
        merge_threshold: see :class:`FactMemory`.
        clock: current UNIX time (injected in tests).

    Example:
        >>> from memory_chains.stores import InMemoryStore
        >>> from memory_chains.testing import HashEmbeddings
        >>> mem = LongTermMemory(InMemoryStore(), "bob", HashEmbeddings())
        >>> mem.observe_in_background("Mon IBAN est FR7630006000011234567890189.",
        ...                           session_id="s1")
        >>> mem.flush()
        1
        >>> [f.text for f in mem.facts()]
        ["L'IBAN de l'utilisateur est [IBAN]."]
        >>> mem.close()
    """

    def __init__(
        self,
        store: BaseStore,
        user_id: str,
        embeddings: Embeddings,
        extractor: Extractor | None = None,
        llm: Any = None,
        *,
        masker: Any = _DEFAULT,
        token_counter: Callable[[str], int] | None = None,
        include_global: bool = False,
        merge_threshold: float = DEFAULT_MERGE_THRESHOLD,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.fact_memory = FactMemory(
            store,
            user_id,
            embeddings,
            include_global=include_global,
            merge_threshold=merge_threshold,
            clock=clock,
        )
        if extractor is None:
            extractor = LongTermExtractor(llm) if llm is not None else RuleLongTermExtractor()
        if not implements(extractor, Extractor):
            raise InvalidInputError(
                f"extractor must have extract() and aextract(), got {type(extractor).__name__}"
            )
        if masker is _DEFAULT:
            from memory_chains.privacy import PIIMasker

            masker = PIIMasker()
        if masker is not None and not callable(masker):
            raise InvalidInputError("masker must be callable (text -> masked text) or None")
        if token_counter is None:
            from memory_chains.providers import approximate_token_count

            token_counter = approximate_token_count
        self.store = store
        self.user_id = user_id
        self.extractor = extractor
        self.masker: Callable[[str], str] | None = masker
        self.token_counter = token_counter
        self.clock = clock
        self.last_report: ObserveReport | None = None
        self._write_lock = threading.Lock()
        self._background: BackgroundWorker[_Turn] = BackgroundWorker(
            self._observe_queued,
            name=f"longterm-{self.user_id}",
            what="long-term observation",
            describe=lambda t: f"turn {t.session_id}#{t.seq} of {self.user_id}",
        )

    # -- reading ------------------------------------------------------------------------
    def profile(self) -> UserProfile:
        """The user's current profile (read from the store)."""
        return UserProfile.load(self.store, self.user_id)

    def facts(self, *, include_superseded: bool = False) -> list[Fact]:
        """The user's facts, oldest first; superseded ones only when asked."""
        return self.fact_memory.facts(include_superseded=include_superseded)

    def recall(self, question: str, k: int = 5) -> list[Fact]:
        """The ``k`` current facts most similar to ``question`` (this user, global if enabled)."""
        return self.fact_memory.recall(question, k)

    async def arecall(self, question: str, k: int = 5) -> list[Fact]:
        """Async :meth:`recall`."""
        return await self.fact_memory.arecall(question, k)

    def instructions(self) -> str:
        """Answer-prompt instructions from the profile (:func:`profile_instructions`)."""
        return profile_instructions(self.profile())

    def profile_block(self, max_tokens: int = 120) -> str:
        """The profile as a prompt block within ``max_tokens`` ("" when empty)."""
        return self.profile().render(max_tokens, token_counter=self.token_counter)

    def facts_block(self, question: str, max_tokens: int = 200, *, k: int = 8) -> str:
        """The facts most relevant to ``question`` as a prompt block within ``max_tokens``.

        Up to ``k`` recalled facts, best first, each added while it fits ("" when none).
        """
        if max_tokens < 0:
            raise InvalidInputError(f"max_tokens must be zero or positive, got {max_tokens}")
        hits = self.fact_memory.search(question, k)
        lines = ["Known facts about the user:"]
        for fact, _ in hits:
            line = f"- {fact.text}" + (" (general)" if fact.scope == "global" else "")
            if self.token_counter("\n".join([*lines, line])) <= max_tokens:
                lines.append(line)
        return "\n".join(lines) if len(lines) > 1 else ""

    def context(self, question: str, *, max_tokens: int = 300, k: int = 8) -> str:
        """Profile block then recalled facts, together within ``max_tokens``.

        The profile may take up to a third of the budget; the facts get the rest.
        """
        if max_tokens < 0:
            raise InvalidInputError(f"max_tokens must be zero or positive, got {max_tokens}")
        profile = self.profile_block(max_tokens // 3)
        used = self.token_counter(profile + "\n\n") if profile else 0
        facts = self.facts_block(question, max(0, max_tokens - used), k=k)
        return "\n\n".join(block for block in (profile, facts) if block)

    # -- the memory protocol (memory_chains.protocol) -----------------------------------
    block_names = LongTermSession.block_names

    def record(self, human: str, ai: str) -> None:
        """:meth:`observe` under the session ``"default"``; :meth:`session` files the
        exchanges of a given session."""
        self.observe(human, ai, session_id="default")

    async def arecord(self, human: str, ai: str) -> None:
        """Async :meth:`record` (the extractor's model call awaited)."""
        await self.aobserve(human, ai, session_id="default")

    def session(
        self, session_id: str, *, seq: Callable[[], int | None] | None = None
    ) -> LongTermSession:
        """This memory, recording the exchanges of ``session_id`` (their provenance).

        Args:
            session_id: the session the exchanges are filed under.
            seq: called after each exchange for its sequence number in the session (the
                short-term memory's turn count when it records first); None: no number.

        Example:
            >>> from memory_chains.stores import InMemoryStore
            >>> from memory_chains.testing import HashEmbeddings
            >>> mem = LongTermMemory(InMemoryStore(), "bob", HashEmbeddings())
            >>> mem.session("s1", seq=lambda: 3).record("Je préfère le yoga le soir.", "Noté.")
            >>> [f.sources for f in mem.facts()]
            [(('s1', 3),)]
        """
        if seq is not None and not callable(seq):
            raise InvalidInputError("seq must be None or a callable giving an int")
        return LongTermSession(self, validate_id(session_id, "session_id"), seq)

    def context_block(self, question: str, max_tokens: int, name: str | None = None) -> MemoryBlock:
        """The profile (``profile``) or the facts recalled for ``question`` (``facts``,
        best first), one line each, within ``max_tokens``.

        Example:
            >>> from memory_chains.stores import InMemoryStore
            >>> from memory_chains.testing import HashEmbeddings
            >>> mem = LongTermMemory(InMemoryStore(), "eve", HashEmbeddings())
            >>> _ = mem.observe("Je préfère le Pilates.", "Noté.", session_id="s1")
            >>> mem.context_block("Quel cours ?", 60, "facts").items
            ("- L'utilisateur préfère le Pilates.",)
        """
        check_budget(max_tokens)
        if block_name(self, name) == "profile":
            text, title = self.profile_block(max_tokens), "About the user"
        else:
            text = self.facts_block(question, max_tokens) if question.strip() else ""
            title = "What we know from earlier conversations"
        lines = [line for line in text.strip().splitlines() if line.strip()]
        if lines and lines[0].rstrip().endswith(":") and not lines[0].startswith("- "):
            lines = lines[1:]  # the rendering's own header: a block has a title
        return MemoryBlock(block_name(self, name), tuple(lines), title=title)

    async def acontext(self, question: str, *, max_tokens: int = 300, k: int = 8) -> str:
        """Async :meth:`context` (run in a thread: store reads and one query embedding)."""
        return await asyncio.to_thread(self.context, question, max_tokens=max_tokens, k=k)

    # -- observing ----------------------------------------------------------------------
    def _mask(self, text: str) -> str:
        return self.masker(text) if self.masker is not None else text

    def _turn(
        self, human: str, ai: str, session_id: str, seq: int | None, when: float | None
    ) -> _Turn:
        return check_turn(human, ai, session_id, seq, when, clock=self.clock, mask=self.masker)

    def _known(self) -> list[str]:
        """The fact keys already held (the extractor reuses them)."""
        return sorted({f.key for f in self.facts() if f.key})

    def _extract(self, turn: _Turn, known: list[str]) -> LongTermExtraction:
        return self.extractor.extract(turn.human, turn.ai, known)

    async def _aextract(self, turn: _Turn, known: list[str]) -> LongTermExtraction:
        return await self.extractor.aextract(turn.human, turn.ai, known)

    def _apply(self, turn: _Turn, extraction: LongTermExtraction) -> ObserveReport:
        """Merge an extraction into the store (embeddings first: a failure writes nothing)."""
        if not isinstance(extraction, LongTermExtraction):
            raise InvalidInputError(
                f"the extractor returned {type(extraction).__name__}, not LongTermExtraction"
            )
        updates = [
            replace(
                e,
                value=self._mask(e.value)
                if isinstance(e.value, str)
                else tuple(self._mask(t) for t in e.value),
                updated_at=turn.when,
                session_id=turn.session_id,
                seq=turn.seq,
            )
            for e in extraction.profile
        ]
        candidates = [replace(c, text=self._mask(c.text)) for c in extraction.facts]
        with self._write_lock:
            changes = self.fact_memory.add(
                candidates, session_id=turn.session_id, seq=turn.seq, when=turn.when
            )
            profile, changed = self.profile().apply(updates)
            profile.save(self.store, changed)
        report = ObserveReport(changed, changes, extraction.model_calls, extraction.rejected)
        self.last_report = report
        return report

    # -- application-level facts ---------------------------------------------------------
    def add_facts(
        self, texts: Sequence[str], *, scope: str = "user", key: str | None = None
    ) -> FactChanges:
        """Store facts the application states itself (``scope="global"`` for everyone).

        Example:
            >>> from memory_chains.stores import InMemoryStore
            >>> from memory_chains.testing import HashEmbeddings
            >>> mem = LongTermMemory(InMemoryStore(), "al", HashEmbeddings())
            >>> len(mem.add_facts(["La salle ouvre à 7 h."], scope="global").added)
            1
        """
        candidates = [FactCandidate(self._mask(t), key=key) for t in texts]
        with self._write_lock:
            return self.fact_memory.add(candidates, scope=scope)
