"""``QueryRewriter``: a follow-up question → a standalone question and its search queries.

Model first, code as the verifier:

1. :func:`~memory_chains.rewrite.analyse` decides, without a model, whether the question
   depends on the conversation; a standalone question (or one with no history) comes back
   unchanged, with no model call.
2. The model writes the standalone question (:mod:`._prompt`: fixed instructions and
   worked examples, then the latest turns; a JSON schema for the answer).
3. Code checks only hard facts (:func:`~memory_chains.rewrite._verify.verify`): a question
   in the question's language, no word from outside the conversation, the question's own
   words kept, one question; it cuts a parenthesis or a pasted question off, and rejects
   the rest.
4. A rejected answer, a failed call or ``use_model=False`` leaves the question to the rules
   (:mod:`._rules`), which write what they can and otherwise leave it as asked; such a
   rewrite is not trusted and retrieval fuses it with the conversation
   (:func:`~memory_chains.rewrite._queries.search_queries`).

The steps are one generator (:meth:`QueryRewriter._steps`) that yields the model call it
needs; :meth:`QueryRewriter.rewrite` and :meth:`QueryRewriter.arewrite` only differ in how
they make that call.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Collection, Generator, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage

from memory_chains._calls import Call, Unavailable, arun, run
from memory_chains._folding import fold, has_word
from memory_chains._history import message_text
from memory_chains._terms import keywords, stem
from memory_chains.errors import InvalidInputError, MalformedOutputError
from memory_chains.rewrite._detect import EXPLICIT, Detection, analyse
from memory_chains.rewrite._ellipsis import moves_to_another_thing
from memory_chains.rewrite._entities import candidate_entities, names_in
from memory_chains.rewrite._history import Turn, normalise_history
from memory_chains.rewrite._ordinals import ordinal_referent
from memory_chains.rewrite._prompt import FIXED_MESSAGES, build_messages, response_format
from memory_chains.rewrite._queries import search_queries
from memory_chains.rewrite._rules import RULES, put_referent, rule_rewrite
from memory_chains.rewrite._verify import read_answer, verify

__all__ = ["QueryRewriter", "RewriteResult"]

_log = logging.getLogger(__name__)

Method = Literal["unchanged", "model", "rules"]

_MAX_NEW_TOKENS = 64
# Names the model may choose its referent from (the conversation's and the entity memory's).
_MAX_LISTED = 8


@dataclass(frozen=True)
class RewriteResult:
    """The outcome of one rewrite.

    Attributes:
        original: the question as asked.
        standalone: the question to show and to answer (a natural question: no parenthesis,
            no pasted turn).
        method: ``"unchanged"`` (it stood alone: no model call), ``"model"`` (the model's
            rewrite passed the checks) or ``"rules"`` (written by rules, or left as asked,
            after a rejected answer, a failed call, or with ``use_model=False``).
        queries: what retrieval searches for; the first is ``standalone``, then one query
            per compared thing, then the conversation when the rewrite is not trusted.
        model_calls: number of model calls made (0 or 1).
        latency_s: wall-clock seconds spent in the rewrite.
        error: why the model's answer was rejected or repaired, or the call failed.
        output_tokens: tokens the model generated (0 when the model does not say).

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

    @property
    def rewritten(self) -> bool:
        """True when :attr:`standalone` differs from the question as asked."""
        return self.standalone != self.original


_Reply = BaseMessage | BaseException


@dataclass(frozen=True)
class _Plan:
    question: str
    detection: Detection
    history: tuple[Turn, ...]  # the whole conversation
    window: tuple[Turn, ...]  # the turns the model sees
    names: tuple[str, ...]  # the conversation's and the entity memory's, most recent first
    started: float = field(compare=False)
    decided: str | None = None  # what an ordinal designates, counted by code

    @property
    def explicit(self) -> bool:
        """True when the question holds a reference that must be resolved (a pronoun,
        an ordinal, "là-bas", a comparison…), not only a missing subject."""
        return bool(set(self.detection.reasons) - {"no subject", "fragment"})

    def unresolved(self, rewrite: str) -> bool:
        """True when ``rewrite`` still holds the question's reference and names nothing
        the question did not ("What does the last policy pay?")."""
        if not EXPLICIT.intersection(self.detection.reasons):
            return False
        if not EXPLICIT.intersection(analyse(rewrite, self.detection.language).reasons):
            return False
        asked = fold(self.question)
        return not any(fold(n) in fold(rewrite) and fold(n) not in asked for n in self.names)

    def adds_nothing(self, rewrite: str) -> bool:
        """True when ``rewrite`` brings no content word the question lacked ("Y a un
        engagement ?" given back as it was): it resolved nothing of the conversation."""
        asked = {stem(w) for w in keywords(self.question)}
        return all(stem(w) in asked for w in keywords(rewrite))

    def referents(self, about: str) -> list[str]:
        """What the model's ``about`` names that the rewrite may put in.

        A name the conversation holds (a known name, or a phrase of two words or more that
        it says), not already in the question; several only for a comparison; none for a
        question that names its own subject or only lacks one, unless ``about`` is a known
        name. When ``about`` lists several names for a question about one thing, the last
        one listed.
        """
        if moves_to_another_thing(self.question):
            return []  # "Et pour le Lenovo ?" names what it is about; the Dell is left behind
        heard = fold(" ".join(text for _, text in self.history))
        known = {fold(n) for n in self.names}  # the counted item is one of them
        asked = fold(self.question)
        found = [
            p
            for p in _about_names(about)
            if fold(p) not in asked
            and (fold(p) in known or (len(p.split()) >= 2 and fold(p) in heard))
        ]
        if len(found) > 1 and "comparison" not in self.detection.reasons:
            # One thing is meant. A small model copies the names in the order they are shown
            # and stops at the one it means, so the last one listed is its choice (on the
            # dev split it is right twice as often as the first).
            found = found[-1:]
        if len(found) > 1 and any(
            has_word(asked, fold(n)) for n in self.names
        ):  # not "us" in "use"
            # "compare it to the Lenovo one": the question names one side, the other is missing.
            found = found[:1]
        if not self.explicit and not all(fold(p) in known for p in found):
            return []
        return found[:4]

    def names_one_of(self, rewrite: str, about: str) -> bool:
        """True when ``rewrite`` names one of the things ``about`` lists that the question
        did not name."""
        return any(_names(rewrite, p) and not _names(self.question, p) for p in _about_names(about))

    @property
    def listed(self) -> tuple[str, ...]:
        """The names shown to the model, which its ``about`` must choose from: only the
        one an ordinal designates, when code counted it."""
        return (self.decided,) if self.decided else self.names[:_MAX_LISTED]


class QueryRewriter:
    """Rewrites follow-up questions into standalone questions.

    Args:
        llm: the chat model; ``None`` uses :func:`memory_chains.providers.get_chat_model`
            on the first question that needs it (or at :meth:`warm`).
        max_history_turns: how many of the latest messages the model sees; older names
            are listed apart.
        use_model: ``False`` never calls a model: the rules write what they can, the rest
            is left as asked.
        language_hint: ``"fr"`` or ``"en"`` to skip language detection.
        rules: the rule families used without a model or after a rejected answer
            (:data:`memory_chains.rewrite._rules.RULES`; ``()`` for none).

    Raises:
        InvalidInputError: an argument is out of range.

    Example:
        >>> from memory_chains.testing import ScriptedChatModel
        >>> answer = '{"question": "Quelle est la garantie du Dell XPS 15 ?"}'
        >>> llm = ScriptedChatModel(replies=[answer])
        >>> rw = QueryRewriter(llm)
        >>> history = [("human", "Je regarde le Dell XPS 15 et le HP Pavilion 14."),
        ...            ("ai", "Bon choix.")]
        >>> r = rw.rewrite("Quelle est sa garantie ?", history)
        >>> r.standalone, r.method, r.model_calls
        ('Quelle est la garantie du Dell XPS 15 ?', 'model', 1)
        >>> rw.rewrite("Quel est le prix du Lenovo ThinkPad X1 ?", history).model_calls
        0
    """

    def __init__(
        self,
        llm: BaseChatModel | None = None,
        *,
        max_history_turns: int = 6,
        use_model: bool = True,
        language_hint: str | None = None,
        rules: Collection[str] = RULES,
    ) -> None:
        if max_history_turns < 1:
            raise InvalidInputError(f"max_history_turns must be >= 1, got {max_history_turns}")
        if language_hint not in (None, "fr", "en"):
            raise InvalidInputError(f"language_hint must be 'fr', 'en' or None: {language_hint!r}")
        unknown = set(rules) - set(RULES)
        if unknown or isinstance(rules, str):
            raise InvalidInputError(f"unknown rules {sorted(unknown) or rules!r}; known: {RULES}")
        self._llm = llm
        self.max_history_turns = max_history_turns
        self.use_model = use_model
        self.language_hint = language_hint
        self.rules = tuple(r for r in RULES if r in rules)
        self._warm_lock = threading.Lock()
        self._warmed = False

    # -- the two drivers -----------------------------------------------------------------

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
        # A failed call is sent to the steps, which fall back to the rules (reason in `error`).
        return run(self._steps(plan), self._model_or_reason())

    async def arewrite(
        self, question: str, history: Iterable[Any] | None, *, entities: Sequence[str] = ()
    ) -> RewriteResult:
        """Async :meth:`rewrite`; identical except for the model call."""
        plan = self._plan(question, history, entities)
        if isinstance(plan, RewriteResult):
            return plan
        return await arun(self._steps(plan), self._model_or_reason())

    def warm(self) -> float:
        """Load the embedded model and process the prompt's fixed part once; seconds taken.

        llama.cpp keeps that part's KV cache, so the first follow-up then costs what the
        others do. Does nothing (0.0) for a remote model, with ``use_model=False`` or when
        already warm; a failed call is logged and left to the first rewrite.

        Example:
            >>> QueryRewriter(use_model=False).warm()
            0.0
        """
        if not self.use_model:
            return 0.0
        with self._warm_lock:
            if self._warmed or not _in_process(self._model()):
                return 0.0
            started = time.perf_counter()
            try:
                self._model().invoke(
                    [*FIXED_MESSAGES, HumanMessage(content="Message: ?")],
                    max_tokens=1,
                    temperature=0.0,
                )
            except Exception as exc:  # warming is an optimisation: the first rewrite retries
                _log.warning("could not warm the rewriter's model: %s", exc)
                return 0.0
            self._warmed = True
            seconds = time.perf_counter() - started
            _log.info("rewriter model warmed in %.1f s", seconds)
            return seconds

    def warm_in_background(self) -> threading.Thread | None:
        """:meth:`warm` in a daemon thread (returned), so building a chain does not wait.

        Example:
            >>> QueryRewriter(use_model=False).warm_in_background() is None
            True
        """
        if not self.use_model or self._warmed or not _in_process(self._model()):
            return None
        thread = threading.Thread(target=self.warm, name="rewriter-warm-up", daemon=True)
        thread.start()
        return thread

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
        detection = analyse(question, self.language_hint)
        if detection.standalone or not conversation:
            return RewriteResult(
                original=question,
                standalone=question,
                method="unchanged",
                queries=(question,),
                model_calls=0,
                latency_s=time.perf_counter() - started,
            )
        names = candidate_entities(conversation, entities, limit=12)
        window = conversation[-self.max_history_turns :]
        # Counting ("le second", "the last one") is code's job; the model then only
        # phrases the question about what was counted.
        decided = ordinal_referent(question, conversation, names)
        if decided:  # a phrase of the conversation ("le vidage du bassin") is a name
            names = (decided, *(n for n in names if n != decided))
        plan = _Plan(question, detection, conversation, window, names, started, decided)
        if not self.use_model:
            return self._by_rules(plan, calls=0, error=None)
        return plan

    def _steps(self, plan: _Plan) -> Generator[Call, _Reply, RewriteResult]:
        """The rewrite as the model call it needs (yielded) and pure decisions."""
        reply = yield Call(
            build_messages(plan.question, plan.window, plan.listed),
            {
                "response_format": response_format(plan.listed),
                "temperature": 0.0,
                "max_tokens": _MAX_NEW_TOKENS,
            },
        )
        tokens = _output_tokens(reply)
        if isinstance(reply, BaseException):
            error = f"model call failed: {type(reply).__name__}: {reply}"
            return self._by_rules(plan, calls=1, error=error)
        raw = message_text(reply)
        try:
            about, written = read_answer(raw)
        except MalformedOutputError as bad:
            return self._by_rules(plan, calls=1, error=f"{bad}: {raw[:200]!r}", tokens=tokens)
        referents = plan.referents(about) or ([plan.decided] if plan.decided else [])
        verdict = verify(written, plan.question, plan.detection, plan.history, plan.names)
        if verdict.question is None:
            # The model's referent is usually right even when its question is not.
            error = f"{verdict.problem}: {written[:200]!r}"
            return self._by_rules(plan, calls=1, error=error, tokens=tokens, referent=referents)
        standalone, note = verdict.question, verdict.problem
        unresolved = plan.unresolved(standalone)
        if unresolved or plan.adds_nothing(standalone):
            # "the last policy", "sa garantie" left as they were: the rules name them.
            what = "left the reference unresolved" if unresolved else "added nothing"
            error = f"the model {what}: {standalone[:200]!r}"
            return self._by_rules(plan, calls=1, error=error, tokens=tokens, referent=referents)
        one_named = (
            len(referents) == 1
            and plan.names_one_of(standalone, about)
            and not EXPLICIT.intersection(analyse(standalone, plan.detection.language).reasons)
        )
        if referents and not one_named and not all(_names(standalone, r) for r in referents):
            # It named the referent in "about" and left it out of the question: put it in
            # (not a second thing beside the one of "about" a resolved question names).
            repaired = self._checked(plan, put_referent(standalone, referents, plan.history))
            if repaired:
                standalone = repaired
                note = "; ".join(x for x in (note, f"referent {about!r} put in") if x)
        return self._result(
            plan,
            standalone,
            "model",
            calls=1,
            error=note,
            tokens=tokens,
            confident=standalone != plan.question or not plan.explicit,
        )

    def _checked(self, plan: _Plan, written: str | None) -> str | None:
        """``written`` when it passes :func:`verify` (repaired), else None."""
        if written is None:
            return None
        return verify(written, plan.question, plan.detection, plan.history, plan.names).question

    def _by_rules(
        self,
        plan: _Plan,
        *,
        calls: int,
        error: str | None,
        tokens: int = 0,
        referent: Sequence[str] = (),
    ) -> RewriteResult:
        # Completing a question that only lacks a subject ("… pour le Forfait Mistral ?")
        # would guess it: the rules complete only explicit references.
        rules = (
            self.rules
            if referent or plan.explicit
            else tuple(r for r in self.rules if r != "completion")
        )
        chosen = list(referent) or ([plan.decided] if plan.decided else [])
        written = rule_rewrite(plan.question, plan.history, plan.names, rules, referent=chosen)
        standalone = self._checked(plan, written) or plan.question
        return self._result(
            plan,
            standalone,
            "rules",
            calls=calls,
            error=error,
            tokens=tokens,
            confident=bool(referent) and standalone != plan.question,
        )

    def _result(
        self,
        plan: _Plan,
        standalone: str,
        method: Method,
        *,
        calls: int,
        error: str | None,
        tokens: int = 0,
        confident: bool = True,
    ) -> RewriteResult:
        # The question's own names count too ("Et comparé à celui de Lenovo ?").
        names = candidate_entities((("user", plan.question),), plan.names, limit=16)
        queries = search_queries(
            standalone, plan.question, plan.history, names, confident=confident
        )
        return RewriteResult(
            original=plan.question,
            standalone=standalone,
            method=method,
            queries=queries,
            model_calls=calls,
            latency_s=time.perf_counter() - plan.started,
            error=error,
            output_tokens=tokens,
        )

    # -- the model -----------------------------------------------------------------------

    def _model_or_reason(self) -> Any:
        """The model, or an :class:`Unavailable` one when it cannot be built (the rules
        answer then, with the reason in ``error``)."""
        try:
            return self._model()
        except Exception as exc:
            return Unavailable(exc)

    def _model(self) -> Any:
        if self._llm is None:
            from memory_chains.providers import get_chat_model

            self._llm = get_chat_model(temperature=0.0, max_tokens=_MAX_NEW_TOKENS)
        return self._llm


def _about_names(about: str) -> list[str]:
    """The names of the model's ``about`` (``read_answer`` joins them with ``;``)."""
    return [" ".join(p.split()) for p in about.replace(",", ";").split(";") if p.strip()]


def _names(text: str, name: str) -> bool:
    """True when ``text`` names ``name``, in full or by a part that can only mean it
    ("l'offre Brume" names "Velora Brume"; "Velora" alone does not).

    Example:
        >>> _names("Il y a un engagement sur l'offre Brume ?", "Velora Brume")
        True
        >>> _names("Il y a un engagement chez Velora ?", "Velora Brume")
        False
    """
    from memory_chains.entities import is_alias  # the entity memory's alias rule

    return has_word(fold(text), fold(name)) or any(is_alias(n, name) for n in names_in(text))


def _in_process(model: Any) -> bool:
    """True for the embedded llama.cpp model (loading it and its prompt cache take time)."""
    from memory_chains.providers import ChatLlamaCpp

    return isinstance(model, ChatLlamaCpp)


def _output_tokens(reply: _Reply) -> int:
    usage = getattr(reply, "usage_metadata", None)
    return int(usage.get("output_tokens", 0)) if usage else 0
