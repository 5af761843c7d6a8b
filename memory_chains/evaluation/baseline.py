"""The anchor rewriters the evaluation measures ours against, in the same run.

* :class:`PlainFewShotRewriter`: a plain 4-shot prompt on the same model, the whole recent
  history, a JSON answer, no checks, no rules; every follow-up with a history takes one
  call. It is the calibration the rewriter's issue names (hit@1 0.80 on an unseen French
  set) and the time anchor of ``memory-chains eval rewrite --anchor``: this machine's speed
  varies several-fold from day to day, the ratio of the two times does not.
* :class:`CopyRewriter`: the question unchanged (what every metric's ``unchanged_…`` and
  ``raw_…`` figures report).

Example:
    >>> from memory_chains.testing import ScriptedChatModel
    >>> llm = ScriptedChatModel(replies=['{"question": "Quel est le prix du Dell XPS 15 ?"}'])
    >>> r = PlainFewShotRewriter(llm).rewrite("Et son prix ?", [("user", "Le Dell XPS 15 ?")])
    >>> r.standalone, r.model_calls
    ('Quel est le prix du Dell XPS 15 ?', 1)
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from memory_chains._history import read_history
from memory_chains.errors import MalformedOutputError
from memory_chains.rewrite import RewriteResult, read_question

__all__ = ["CopyRewriter", "PlainFewShotRewriter"]

_SYSTEM = (
    "Rewrite the user's last question as a standalone question, in the same language, "
    'using the conversation. Reply with JSON: {"question": "..."}.'
)
_SHOTS = (
    (
        "User: Je regarde le vélo Orbea Vibe H30.\nAssistant: Il coûte 2 399 €.",
        "Et sa garantie ?",
        "Quelle est la garantie du vélo Orbea Vibe H30 ?",
    ),
    (
        "User: Je voudrais réserver à l'hôtel Les Tilleuls.\nAssistant: Il reste des chambres.",
        "Le petit-déjeuner est compris ?",
        "Le petit-déjeuner est-il compris à l'hôtel Les Tilleuls ?",
    ),
    (
        "User: Tell me about the PurrFect Salmon kibble.\nAssistant: It is grain-free.",
        "Is it good for kittens?",
        "Is PurrFect Salmon kibble good for kittens?",
    ),
    (
        "User: How long is the sailing course in Brest?\nAssistant: Five days.",
        "What about Lorient?",
        "How long is the sailing course in Lorient?",
    ),
)
_FORMAT = {
    "type": "json_schema",
    "json_schema": {
        "name": "question",
        "schema": {
            "type": "object",
            "properties": {"question": {"type": "string"}},
            "required": ["question"],
        },
    },
}


def _messages(question: str, turns: Sequence[tuple[str, str]]) -> list[BaseMessage]:
    messages: list[BaseMessage] = [SystemMessage(content=_SYSTEM)]
    for history, asked, standalone in _SHOTS:
        messages.append(HumanMessage(content=f"{history}\nQuestion: {asked}"))
        messages.append(AIMessage(content=json.dumps({"question": standalone})))
    history = "\n".join(f"{'User' if r == 'user' else 'Assistant'}: {t}" for r, t in turns)
    messages.append(HumanMessage(content=f"{history}\nQuestion: {question}"))
    return messages


class PlainFewShotRewriter:
    """A plain few-shot rewriter: the time and quality anchor of the evaluation.

    Args:
        llm: the chat model (the same one as the rewriter measured).
        max_history_turns: how many of the latest messages the prompt holds.
    """

    def __init__(self, llm: Any, *, max_history_turns: int = 6) -> None:
        self.llm = llm
        self.max_history_turns = max_history_turns

    def warm(self) -> float:
        """Process the fixed prompt once; seconds taken."""
        started = time.perf_counter()
        self.llm.invoke(_messages("?", []), max_tokens=1, temperature=0.0)
        return time.perf_counter() - started

    def rewrite(
        self, question: str, history: Iterable[Any] | None, *, entities: Sequence[str] = ()
    ) -> RewriteResult:
        """One model call; the model's question as it is (the question when unreadable)."""
        started = time.perf_counter()
        turns = read_history(history, collapse_whitespace=True)[-self.max_history_turns :]
        if not turns:
            return RewriteResult(question, question, "unchanged", (question,), 0, 0.0)
        reply = self.llm.invoke(
            _messages(question, turns),
            response_format=_FORMAT,
            temperature=0.0,
            max_tokens=96,
        )
        error = None
        try:
            standalone = read_question(str(reply.content))
        except MalformedOutputError as bad:
            standalone, error = question, str(bad)
        return RewriteResult(
            question,
            standalone,
            "model",
            (standalone,),
            1,
            time.perf_counter() - started,
            error,
        )


class CopyRewriter:
    """The question unchanged, with no model call.

    Example:
        >>> CopyRewriter().rewrite("Et X ?", [("user", "A")]).standalone
        'Et X ?'
    """

    def warm(self) -> float:
        """Nothing to warm."""
        return 0.0

    def rewrite(
        self, question: str, history: Iterable[Any] | None, *, entities: Sequence[str] = ()
    ) -> RewriteResult:
        """``question`` as it is."""
        return RewriteResult(question, question, "unchanged", (question,), 0, 0.0)
