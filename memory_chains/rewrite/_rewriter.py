"""``QueryRewriter``: follow-up question → standalone question (+ search queries).

The pipeline is pure except for one model call:

1. :func:`~memory_chains.rewrite._detect.analyse` decides whether the question depends on
   the conversation; a standalone question (or an empty history) comes back unchanged with
   no model call.
2. Candidate referents are extracted from the history (plus the caller's entity hints) and
   the few-shot prompt is built (:mod:`memory_chains.rewrite._prompt`).
3. The model answers JSON; :mod:`memory_chains.rewrite._validate` repairs and checks it.
   A rejected answer or a failed call falls back to a deterministic expansion of the
   question with the most recent referent, and the reason is kept in ``error``.

:meth:`QueryRewriter.rewrite` and :meth:`QueryRewriter.arewrite` share everything but the
model call line.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import BaseMessage

from memory_chains.errors import InvalidInputError, MalformedOutputError
from memory_chains.evaluation.metrics import fold, tokens
from memory_chains.rewrite._detect import Detection, analyse
from memory_chains.rewrite._ellipsis import complete_ellipsis, ellipsis_focus
from memory_chains.rewrite._entities import candidate_entities
from memory_chains.rewrite._fallback import fallback_rewrite
from memory_chains.rewrite._history import Turn, normalise_history
from memory_chains.rewrite._prompt import RESPONSE_FORMAT, build_messages
from memory_chains.rewrite._validate import check_rewrite, parse_answer

__all__ = ["QueryRewriter", "RewriteResult"]

Method = Literal["unchanged", "model", "fallback"]

_MAX_NEW_TOKENS = 80
# Words a rewrite may add without naming anything ("Quel est le …", "What is the …").
_FILLER = frozenset(
    (
        "quel",
        "quelle",
        "quels",
        "quelles",
        "est",
        "sont",
        "les",
        "des",
        "une",
        "pour",
        "what",
        "which",
        "the",
        "does",
        "did",
        "was",
        "were",
        "are",
        "has",
        "have",
        "and",
    )
)
# Reasons that point at something the rewrite must resolve (vs. a merely short question).
_EXPLICIT = frozenset(
    {"pronoun", "possessive", "demonstrative", "location", "ordinal", "object pronoun"}
)


@dataclass(frozen=True)
class RewriteResult:
    """The outcome of one rewrite.

    Attributes:
        original: the question as asked.
        standalone: the question to use for retrieval and answering.
        method: ``"unchanged"`` (already standalone, no model call), ``"model"`` (the
            model's rewrite passed validation) or ``"fallback"`` (deterministic expansion).
        queries: search queries for retrieval; the first is ``standalone``.
        model_calls: number of model calls made (0 or 1).
        latency_s: wall-clock seconds spent in the rewrite.
        error: why the model's output was rejected or the call failed, else ``None``.

    Example:
        >>> r = RewriteResult("Et X ?", "Et X ?", "unchanged", ("Et X ?",), 0, 0.0)
        >>> r.method, r.error
        ('unchanged', None)
    """

    original: str
    standalone: str
    method: Method
    queries: tuple[str, ...]
    model_calls: int
    latency_s: float
    error: str | None = None


@dataclass(frozen=True)
class _Plan:
    question: str
    detection: Detection
    turns: tuple[Turn, ...]
    candidates: tuple[str, ...]
    started: float
    messages: list[BaseMessage] = field(default_factory=list)


class QueryRewriter:
    """Rewrites follow-up questions into standalone questions.

    Args:
        llm: the chat model; ``None`` uses :func:`memory_chains.providers.get_chat_model`
            on the first question that needs it.
        max_history_turns: how many of the latest messages the model sees.
        n_queries: how many search queries :attr:`RewriteResult.queries` holds (1-3): the
            standalone question, then the last user turn + the question, then the question
            expanded with the most recent referent.
        use_model: ``False`` never calls a model (deterministic fallback only).
        language_hint: ``"fr"`` or ``"en"`` to skip language detection.

    Raises:
        InvalidInputError: an argument is out of range.

    Example:
        >>> from memory_chains.testing import ScriptedChatModel
        >>> llm = ScriptedChatModel(replies=['{"referent": "Dell XPS 15", '
        ...     '"question": "Quelle est la garantie du Dell XPS 15 ?"}'])
        >>> rw = QueryRewriter(llm)
        >>> history = [("human", "Je regarde le Dell XPS 15."), ("ai", "Bon choix.")]
        >>> rw.rewrite("Quelle est sa garantie ?", history).standalone
        'Quelle est la garantie du Dell XPS 15 ?'
        >>> rw.rewrite("Quel est le prix du Lenovo ThinkPad X1 ?", history).model_calls
        0
    """

    def __init__(
        self,
        llm: BaseChatModel | None = None,
        *,
        max_history_turns: int = 6,
        n_queries: int = 1,
        use_model: bool = True,
        language_hint: str | None = None,
    ) -> None:
        if max_history_turns < 1:
            raise InvalidInputError(f"max_history_turns must be >= 1, got {max_history_turns}")
        if not 1 <= n_queries <= 3:
            raise InvalidInputError(f"n_queries must be 1, 2 or 3, got {n_queries}")
        if language_hint not in (None, "fr", "en"):
            raise InvalidInputError(f"language_hint must be 'fr', 'en' or None: {language_hint!r}")
        self._llm = llm
        self.max_history_turns = max_history_turns
        self.n_queries = n_queries
        self.use_model = use_model
        self.language_hint = language_hint
        self._bound: Any = None

    def rewrite(
        self, question: str, history: Iterable[Any] | None, *, entities: Sequence[str] = ()
    ) -> RewriteResult:
        """Rewrite ``question`` given ``history`` (``(role, text)`` pairs or messages).

        Never raises for a bad model answer or a failed model call (see ``error``).

        Raises:
            InvalidInputError: the question is empty or the history malformed.
        """
        plan = self._plan(question, history, entities)
        if isinstance(plan, RewriteResult):
            return plan
        try:
            message = self._model().invoke(plan.messages)
        except Exception as exc:  # a failed call falls back, its reason kept in `error`
            return self._finish(plan, None, exc)
        return self._finish(plan, message, None)

    async def arewrite(
        self, question: str, history: Iterable[Any] | None, *, entities: Sequence[str] = ()
    ) -> RewriteResult:
        """Async :meth:`rewrite`; identical except for the model call."""
        plan = self._plan(question, history, entities)
        if isinstance(plan, RewriteResult):
            return plan
        try:
            message = await self._model().ainvoke(plan.messages)
        except Exception as exc:  # a failed call falls back, its reason kept in `error`
            return self._finish(plan, None, exc)
        return self._finish(plan, message, None)

    # -- pure steps ----------------------------------------------------------------------

    def _plan(
        self, question: str, history: Iterable[Any] | None, entities: Sequence[str]
    ) -> _Plan | RewriteResult:
        started = time.perf_counter()
        if not isinstance(question, str) or not question.strip():
            raise InvalidInputError("question must be a non-empty string")
        if isinstance(entities, str):
            raise InvalidInputError("entities must be a sequence of names, not a string")
        question = " ".join(question.split())
        turns = normalise_history(history)[-self.max_history_turns :]
        detection = analyse(question, self.language_hint)
        if detection.standalone or not turns:
            return RewriteResult(
                original=question,
                standalone=question,
                method="unchanged",
                queries=(question,),
                model_calls=0,
                latency_s=time.perf_counter() - started,
            )
        candidates = candidate_entities(turns, entities)
        plan = _Plan(question, detection, turns, candidates, started)
        if not self.use_model:
            return self._result(plan, fallback_rewrite(question, candidates, turns), "fallback")
        return _Plan(
            question,
            detection,
            turns,
            candidates,
            started,
            build_messages(question, turns, candidates),
        )

    def _finish(
        self, plan: _Plan, message: BaseMessage | None, exc: BaseException | None
    ) -> RewriteResult:
        fallback = fallback_rewrite(plan.question, plan.candidates, plan.turns)
        if exc is not None:
            error = f"model call failed: {type(exc).__name__}: {exc}"
            return self._result(plan, fallback, "fallback", calls=1, error=error)
        assert message is not None
        raw = message.text if isinstance(message.text, str) else str(message.content)
        try:
            referent, rewrite = parse_answer(raw)
        except MalformedOutputError as bad:
            error = f"{bad}: {raw[:200]!r}"
            return self._result(plan, fallback, "fallback", calls=1, error=error)
        rewrite = " ".join(rewrite.split())
        problem = check_rewrite(rewrite, plan.question, plan.detection, plan.turns)
        if problem is None or problem.startswith("rewrite lost"):
            completed = self._complete_ellipsis(plan, referent, rewrite)
            if completed is not None:
                return completed
        if problem is None and self._unresolved(plan, rewrite):
            if self._grounded(plan, referent):
                # The model found the referent but copied the question: put it in.
                candidates = (referent, *plan.candidates)
                repaired = fallback_rewrite(plan.question, candidates, plan.turns)
                error = f"the model copied the question; its referent {referent!r} was used"
                return self._result(plan, repaired, "fallback", calls=1, error=error)
            problem = "the model left the reference unresolved"
        if problem is not None:
            error = f"{problem}: {rewrite[:200]!r}"
            if self._grounded(plan, referent):
                # The model's referent is usually right even when its question is not.
                candidates = (referent, *plan.candidates)
                fallback = fallback_rewrite(plan.question, candidates, plan.turns)
            return self._result(plan, fallback, "fallback", calls=1, error=error)
        return self._result(plan, rewrite, "model", calls=1)

    def _complete_ellipsis(self, plan: _Plan, referent: str, rewrite: str) -> RewriteResult | None:
        """Repair an elliptic follow-up whose rewrite dropped its new constituent.

        The model tends to return the previous question made standalone: when that rewrite
        is a sound version of the previous user question, the missing constituent is added
        to it (see :mod:`memory_chains.rewrite._ellipsis`); otherwise the fallback decides.
        """
        focus = ellipsis_focus(plan.question)
        if focus is None or fold(focus[1]) in fold(rewrite):
            return None
        last_user = next((text for role, text in reversed(plan.turns) if role == "user"), "")
        if not last_user:
            return None
        base_detection = analyse(last_user, plan.detection.language)
        if check_rewrite(rewrite, last_user, base_detection, plan.turns) is not None:
            return None  # not a sound version of the previous question: the fallback decides
        referents = [r for r in (referent, *plan.candidates) if r]
        french = plan.detection.language == "fr"
        completed = complete_ellipsis(plan.question, rewrite, referents, french=french)
        if completed is None:
            return None
        note = f"elliptic question completed from the model's rewrite {rewrite[:120]!r}"
        return self._result(plan, completed, "model", calls=1, error=note)

    @staticmethod
    def _grounded(plan: _Plan, referent: str) -> bool:
        """True when the model's referent is a name found in the conversation."""
        if not referent or fold(referent) in fold(plan.question):
            return False
        context = fold(" ".join(text for _, text in plan.turns) + " " + " ".join(plan.candidates))
        return fold(referent) in context

    @staticmethod
    def _unresolved(plan: _Plan, rewrite: str) -> bool:
        explicit = _EXPLICIT.intersection(plan.detection.reasons) or (
            "ellipsis" in plan.detection.reasons
        )
        if not explicit:
            return False
        # Unresolved when the rewrite adds no content word to the question (a copy, give or
        # take punctuation and function words).
        added = set(tokens(fold(rewrite))) - set(tokens(fold(plan.question)))
        return not any(len(word) >= 3 and word not in _FILLER for word in added)

    def _result(
        self,
        plan: _Plan,
        standalone: str,
        method: Method,
        *,
        calls: int = 0,
        error: str | None = None,
    ) -> RewriteResult:
        return RewriteResult(
            original=plan.question,
            standalone=standalone,
            method=method,
            queries=self._queries(plan, standalone),
            model_calls=calls,
            latency_s=time.perf_counter() - plan.started,
            error=error,
        )

    def _queries(self, plan: _Plan, standalone: str) -> tuple[str, ...]:
        queries = [standalone]
        last_user = next((text for role, text in reversed(plan.turns) if role == "user"), "")
        if last_user:
            queries.append(f"{last_user} {plan.question}")
        queries.append(fallback_rewrite(plan.question, plan.candidates, plan.turns))
        unique = list(dict.fromkeys(queries))
        return tuple(unique[: self.n_queries])

    # -- the model -----------------------------------------------------------------------

    def _model(self) -> Any:
        if self._bound is None:
            if self._llm is None:
                from memory_chains.providers import get_chat_model

                self._llm = get_chat_model(temperature=0.0, max_tokens=_MAX_NEW_TOKENS)
            self._bound = self._llm.bind(
                response_format=RESPONSE_FORMAT, temperature=0.0, max_tokens=_MAX_NEW_TOKENS
            )
        return self._bound
