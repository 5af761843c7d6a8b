"""``QueryRewriter``: follow-up question → standalone question (+ search queries).

The pipeline is pure except for one model call:

1. :func:`~memory_chains.rewrite._detect.analyse` decides whether the question depends on
   the conversation; a standalone question (or an empty history) comes back unchanged with
   no model call.
2. Candidate referents are extracted from the history (the window's names, then the
   names the conversation opened with, then the caller's entity hints, e.g. from an entity
   memory), and the conversation's subject is settled
   (:func:`~memory_chains.rewrite._entities.conversation_subject`: what it opened on, until
   the user names something else); rewrites written without the model add it when they
   do not name it.
3. With ``strategy="choice"`` (the default), what rules can decide is decided without a
   model (:mod:`memory_chains.rewrite._template`: an elliptic variant of a standalone
   previous question, an ordinal over a listed pair, a single candidate); otherwise the
   model only *chooses* the referent among the candidates (:mod:`._choice`, a JSON ``enum``:
   a few output tokens, no invented name) and the question is written by the template.
   When there is no candidate, or the model answers "none", the free rewrite runs.
4. The free rewrite (the only step with ``strategy="free"``): a few-shot prompt
   (:mod:`memory_chains.rewrite._prompt`), JSON answer repaired and checked by
   :mod:`memory_chains.rewrite._validate`. A rejected answer or a failed call falls back to
   a deterministic expansion of the question, and the reason is kept in ``error``.

The steps are one generator (:meth:`QueryRewriter._steps`) that yields the model calls it
needs; :meth:`QueryRewriter.rewrite` and :meth:`QueryRewriter.arewrite` only differ in how
they make those calls.
"""

from __future__ import annotations

import re
import time
from collections.abc import Generator, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import BaseMessage

from memory_chains.errors import InvalidInputError, MalformedOutputError
from memory_chains.evaluation.metrics import fold, tokens
from memory_chains.rewrite._choice import build_choice_messages, choice_format, parse_choice
from memory_chains.rewrite._detect import Detection, analyse
from memory_chains.rewrite._ellipsis import complete_ellipsis, ellipsis_focus
from memory_chains.rewrite._entities import (
    candidate_entities,
    conversation_subject,
    opening_names,
)
from memory_chains.rewrite._fallback import (
    _names_own_subject,
    fallback_rewrite,
    salient_person,
    subject_person,
    with_subject,
)
from memory_chains.rewrite._history import Turn, last_user_text, normalise_history
from memory_chains.rewrite._prompt import RESPONSE_FORMAT, build_messages
from memory_chains.rewrite._template import (
    ellipsis_rewrite,
    focus_name,
    ordinal_referent,
    template_rewrite,
)
from memory_chains.rewrite._validate import check_rewrite, parse_answer

__all__ = ["QueryRewriter", "RewriteResult"]

Method = Literal["unchanged", "template", "model", "fallback"]
Strategy = Literal["choice", "free"]

_MAX_NEW_TOKENS = 80
_MAX_CHOICE_TOKENS = 32
# An elliptic constituent that is a common noun phrase: "la carte graphique", "the price".
_ARTICLE_NOUN = re.compile(r"(?:(?:la|le|les|the) |l['’])[a-zà-ÿ' -]+")
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
        method: ``"unchanged"`` (already standalone, no model call), ``"template"``
            (written by rules, no model call), ``"model"`` (the model chose the referent or
            its rewrite passed validation) or ``"fallback"`` (deterministic expansion after
            a rejected answer, a failed call, or with ``use_model=False``).
        queries: search queries for retrieval; the first is ``standalone``.
        model_calls: number of model calls made (0, 1 or 2).
        latency_s: wall-clock seconds spent in the rewrite.
        error: why the model's output was rejected or the call failed, else ``None``.
        output_tokens: tokens the model generated over all calls (0 when the model does
            not report usage).

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
    output_tokens: int = 0


@dataclass(frozen=True)
class _Call:
    """One model call the steps need: messages and per-call options."""

    messages: list[BaseMessage]
    options: dict[str, Any]


_Reply = BaseMessage | BaseException


@dataclass
class _Usage:
    calls: int = 0
    output_tokens: int = 0
    notes: list[str] = field(default_factory=list)

    def count(self, reply: _Reply) -> None:
        self.calls += 1
        usage = getattr(reply, "usage_metadata", None)
        if usage:
            self.output_tokens += int(usage.get("output_tokens", 0))


@dataclass(frozen=True)
class _Plan:
    question: str
    detection: Detection
    turns: tuple[Turn, ...]  # the window the model sees
    candidates: tuple[str, ...]
    started: float
    history: tuple[Turn, ...]  # the whole conversation
    subject: tuple[str, ...]  # what the conversation is still about (conversation_subject)

    def fallback(self, candidates: Sequence[str] | None = None) -> str:
        """The deterministic rewrite of this plan (``candidates`` first when given)."""
        names = self.candidates if candidates is None else candidates
        return fallback_rewrite(
            self.question, names, self.turns, history=self.history, subject=self.subject
        )


class QueryRewriter:
    """Rewrites follow-up questions into standalone questions.

    Args:
        llm: the chat model; ``None`` uses :func:`memory_chains.providers.get_chat_model`
            on the first question that needs it.
        max_history_turns: how many of the latest messages the model sees. The names of
            the conversation's first user turn that names anything (its subject) stay
            candidates after that turn has left this window.
        n_queries: how many search queries :attr:`RewriteResult.queries` holds (1-3): the
            standalone question, then the last user turn + the question, then the question
            expanded with the most recent referent.
        use_model: ``False`` never calls a model: the rules of the ``"choice"`` strategy
            settle what they can, the deterministic fallback the rest.
        language_hint: ``"fr"`` or ``"en"`` to skip language detection.
        strategy: ``"choice"`` (rules first, then the model picks the referent among the
            candidates, then the free rewrite if it picks none) or ``"free"`` (the model
            always writes the whole question; one call, more output tokens).

    Raises:
        InvalidInputError: an argument is out of range.

    Example:
        >>> from memory_chains.testing import ScriptedChatModel
        >>> llm = ScriptedChatModel(replies=['{"referent": "Dell XPS 15"}'])
        >>> rw = QueryRewriter(llm)
        >>> history = [("human", "Je regarde le Dell XPS 15 et le HP Pavilion 14."),
        ...            ("ai", "Bon choix.")]
        >>> r = rw.rewrite("Quelle est sa garantie ?", history)
        >>> r.standalone, r.method, r.model_calls
        ('Quelle est la garantie de Dell XPS 15 ?', 'model', 1)
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
        strategy: Strategy = "choice",
    ) -> None:
        if max_history_turns < 1:
            raise InvalidInputError(f"max_history_turns must be >= 1, got {max_history_turns}")
        if not 1 <= n_queries <= 3:
            raise InvalidInputError(f"n_queries must be 1, 2 or 3, got {n_queries}")
        if language_hint not in (None, "fr", "en"):
            raise InvalidInputError(f"language_hint must be 'fr', 'en' or None: {language_hint!r}")
        if strategy not in ("choice", "free"):
            raise InvalidInputError(f"strategy must be 'choice' or 'free', got {strategy!r}")
        self.strategy: Strategy = strategy
        self._llm = llm
        self.max_history_turns = max_history_turns
        self.n_queries = n_queries
        self.use_model = use_model
        self.language_hint = language_hint

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
        steps = self._steps(plan)
        try:
            call = next(steps)
            while True:
                reply: _Reply
                try:
                    reply = self._model().invoke(call.messages, **call.options)
                except Exception as exc:  # a failed call falls back, its reason in `error`
                    reply = exc
                call = steps.send(reply)
        except StopIteration as done:
            result: RewriteResult = done.value
            return result

    async def arewrite(
        self, question: str, history: Iterable[Any] | None, *, entities: Sequence[str] = ()
    ) -> RewriteResult:
        """Async :meth:`rewrite`; identical except for the model call."""
        plan = self._plan(question, history, entities)
        if isinstance(plan, RewriteResult):
            return plan
        steps = self._steps(plan)
        try:
            call = next(steps)
            while True:
                reply: _Reply
                try:
                    reply = await self._model().ainvoke(call.messages, **call.options)
                except Exception as exc:  # a failed call falls back, its reason in `error`
                    reply = exc
                call = steps.send(reply)
        except StopIteration as done:
            result: RewriteResult = done.value
            return result

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
        conversation = normalise_history(history)
        turns = conversation[-self.max_history_turns :]
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
        # What the conversation opened with stays a candidate after it leaves the window.
        # ... even when the window names enough to fill the candidate list.
        opening = opening_names(conversation)
        candidates = candidate_entities(turns, (*opening, *entities), always=opening)
        # A question naming something new has moved away from the subject.
        subject = conversation_subject((*conversation, ("user", question)))
        plan = _Plan(question, detection, turns, candidates, started, conversation, subject)
        if not self.use_model:
            decided = self._decide(plan) if self.strategy == "choice" else None
            if decided is not None:
                return self._result(plan, decided, "template")
            return self._result(plan, plan.fallback(), "fallback")
        return plan

    def _decide(self, plan: _Plan) -> str | None:
        """The standalone question when rules settle it without a model, else None."""
        completed = ellipsis_rewrite(plan.question, plan.turns, plan.candidates)
        if completed is not None:
            return completed
        ordinal = ordinal_referent(plan.question, plan.turns, plan.candidates)
        if ordinal:
            return template_rewrite(plan.question, ordinal)
        usable = self._usable(plan)
        if len(usable) == 1 and self._topical(plan, usable[0]) and not _names_itself(plan):
            return template_rewrite(plan.question, usable[0])
        continued = continued_name(plan.question, plan.turns, usable, plan.subject)
        if continued:  # "Parle-moi de X." ... "Et la carte graphique ?": still X
            return template_rewrite(plan.question, continued)
        person = salient_person(plan.question, usable, plan.history) or subject_person(
            plan.question, plan.subject
        )
        if person:  # "he" in a conversation about one person
            return template_rewrite(plan.question, person)
        return None

    @staticmethod
    def _topical(plan: _Plan, name: str) -> bool:
        """True for a name the user brought up (at any point), or a product-like name (digit).

        A lone name only from the assistant ("avec Camille", "en France") is often not what
        the follow-up is about: the model checks it (and may answer "none").
        """
        if any(ch.isdigit() for ch in name):
            return True
        folded = fold(name)
        return any(role == "user" and folded in fold(text) for role, text in plan.history)

    @staticmethod
    def _usable(plan: _Plan) -> list[str]:
        """Candidates the question does not already name."""
        folded = fold(plan.question)
        return [c for c in plan.candidates if fold(c) not in folded]

    def _steps(self, plan: _Plan) -> Generator[_Call, _Reply, RewriteResult]:
        """The rewrite as a sequence of model calls (yielded) and pure decisions."""
        usage = _Usage()
        if self.strategy == "choice":
            decided = self._decide(plan)
            if decided is not None:
                return self._result(plan, decided, "template")
            usable = self._usable(plan)
            if usable and not _names_itself(plan):
                reply = yield _Call(
                    build_choice_messages(plan.question, plan.turns, usable),
                    {
                        "response_format": choice_format(usable),
                        "temperature": 0.0,
                        "max_tokens": _MAX_CHOICE_TOKENS,
                    },
                )
                usage.count(reply)
                if isinstance(reply, BaseException):
                    error = f"model call failed: {type(reply).__name__}: {reply}"
                    fallback = plan.fallback()
                    return self._result(plan, fallback, "fallback", usage=usage, error=error)
                raw = _text(reply)
                try:
                    referent = parse_choice(raw, usable)
                except MalformedOutputError as bad:
                    referent = ""
                    usage.notes.append(f"{bad}: {raw[:120]!r}")
                if referent:
                    standalone = with_subject(
                        template_rewrite(plan.question, referent), plan.subject, plan.question
                    )
                    return self._result(plan, standalone, "model", usage=usage)
                usage.notes.append("the model chose no candidate: free rewrite")
        reply = yield _Call(
            build_messages(plan.question, plan.turns, plan.candidates),
            {
                "response_format": RESPONSE_FORMAT,
                "temperature": 0.0,
                "max_tokens": _MAX_NEW_TOKENS,
            },
        )
        usage.count(reply)
        return self._finish(plan, reply, usage)

    def _finish(self, plan: _Plan, reply: _Reply, usage: _Usage) -> RewriteResult:
        fallback = plan.fallback()
        if isinstance(reply, BaseException):
            error = f"model call failed: {type(reply).__name__}: {reply}"
            return self._result(plan, fallback, "fallback", usage=usage, error=error)
        raw = _text(reply)
        try:
            referent, rewrite = parse_answer(raw)
        except MalformedOutputError as bad:
            error = f"{bad}: {raw[:200]!r}"
            return self._result(plan, fallback, "fallback", usage=usage, error=error)
        rewrite = " ".join(rewrite.split())
        problem = check_rewrite(rewrite, plan.question, plan.detection, plan.turns)
        if problem is None or problem.startswith("rewrite lost"):
            completed = self._complete_ellipsis(plan, referent, rewrite, usage)
            if completed is not None:
                return completed
        if problem is None and self._unresolved(plan, rewrite):
            if self._grounded(plan, referent):
                # The model found the referent but copied the question: put it in.
                candidates = (referent, *plan.candidates)
                repaired = plan.fallback(candidates)
                error = f"the model copied the question; its referent {referent!r} was used"
                return self._result(plan, repaired, "fallback", usage=usage, error=error)
            problem = "the model left the reference unresolved"
        if problem is not None:
            error = f"{problem}: {rewrite[:200]!r}"
            if self._grounded(plan, referent):
                # The model's referent is usually right even when its question is not.
                candidates = (referent, *plan.candidates)
                fallback = plan.fallback(candidates)
            return self._result(plan, fallback, "fallback", usage=usage, error=error)
        return self._result(plan, rewrite, "model", usage=usage)

    def _complete_ellipsis(
        self, plan: _Plan, referent: str, rewrite: str, usage: _Usage
    ) -> RewriteResult | None:
        """Repair an elliptic follow-up whose rewrite dropped its new constituent.

        The model tends to return the previous question made standalone: when that rewrite
        is a sound version of the previous user question, the missing constituent is added
        to it (see :mod:`memory_chains.rewrite._ellipsis`); otherwise the fallback decides.
        """
        focus = ellipsis_focus(plan.question)
        if focus is None or fold(focus_name(focus[1]) or focus[1]) in fold(rewrite):
            return None
        last_user = last_user_text(plan.turns)
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
        return self._result(plan, completed, "model", usage=usage, note=note)

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
        usage: _Usage | None = None,
        error: str | None = None,
        note: str | None = None,
    ) -> RewriteResult:
        usage = usage or _Usage()
        notes = [*usage.notes, *(x for x in (error, note) if x)]
        if method == "template":
            # A template that does not name what the conversation is about gets it added
            # (as the fallback does); the model's own wording is left as it is.
            standalone = with_subject(standalone, plan.subject, plan.question)
        return RewriteResult(
            original=plan.question,
            standalone=standalone,
            method=method,
            queries=self._queries(plan, standalone),
            model_calls=usage.calls,
            latency_s=time.perf_counter() - plan.started,
            error="; ".join(notes) or None,
            output_tokens=usage.output_tokens,
        )

    def _queries(self, plan: _Plan, standalone: str) -> tuple[str, ...]:
        queries = [standalone]
        last_user = last_user_text(plan.turns)
        if last_user:
            queries.append(f"{last_user} {plan.question}")
        queries.append(plan.fallback())
        unique = list(dict.fromkeys(queries))
        return tuple(unique[: self.n_queries])

    # -- the model -----------------------------------------------------------------------

    def _model(self) -> Any:
        if self._llm is None:
            from memory_chains.providers import get_chat_model

            self._llm = get_chat_model(temperature=0.0, max_tokens=_MAX_NEW_TOKENS)
        return self._llm


def continued_name(
    question: str, turns: Sequence[Turn], usable: Sequence[str], subject: Sequence[str]
) -> str:
    """The conversation's subject, when the user's last turn named it alone and the question
    only adds a noun phrase to it.

    "Et la carte graphique ?" after "Parle-moi de l'ASUS ROG Strix G15." keeps the user's
    own thread, whatever the answer named on the way (its processor, its GPU). Anything
    else is left to the other rules and the model: a pronoun or a possessive ("Et il coûte
    combien ?", "Et sa garantie ?"), a name in the question ("Et celui de Lenovo ?"),
    "pour" ("Et pour le samedi ?"), a last user turn naming two candidates or something
    other than the subject ("Vous livrez à Marseille ?").

    Example:
        >>> turns = [("user", "Parle-moi de l'ASUS G15."), ("assistant", "Il a une RTX 4060.")]
        >>> continued_name("Et la carte graphique ?", turns, ["ASUS G15", "RTX 4060"], ["ASUS G15"])
        'ASUS G15'
        >>> continued_name("Et celui de Lenovo ?", turns, ["ASUS G15", "RTX 4060"], ["ASUS G15"])
        ''
    """
    focus = ellipsis_focus(question)
    if focus is None or focus[0] or not _ARTICLE_NOUN.fullmatch(focus[1]):
        return ""
    last = fold(last_user_text(turns))
    named = [name for name in usable if fold(name) in last]
    if len(named) != 1 or fold(named[0]) not in {fold(name) for name in subject}:
        return ""
    return named[0]


def _names_itself(plan: _Plan) -> bool:
    """True for an elliptic question naming its own subject ("Et celle du Lenovo ?").

    What it lacks is what was asked before, which no candidate name supplies: neither a
    template with another candidate nor the model's choice of one can write it.
    """
    return ellipsis_focus(plan.question) is not None and _names_own_subject(
        plan.question, plan.candidates
    )


def _text(message: BaseMessage) -> str:
    return message.text if isinstance(message.text, str) else str(message.content)
