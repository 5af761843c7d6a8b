"""The model side of the summary memory: :class:`Summarizer` and :class:`LLMSummarizer`.

A summarizer folds turns into a :class:`~memory_chains.memory.SummaryData`.
:class:`LLMSummarizer` does it with one chat-model call: a fixed prompt (instructions and
one worked example in the conversation's language, so llama.cpp reuses its KV cache)
asking for a JSON change set, constrained by a JSON schema when the model supports
``response_format``, parsed and applied to the previous summary by code
(:func:`~memory_chains.memory._summary_data.apply_update`).
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any, Protocol, runtime_checkable

from memory_chains._calls import Call, attempts, call_options, run
from memory_chains._language import detect_language
from memory_chains.errors import InvalidInputError, MalformedOutputError
from memory_chains.memory._summary_data import (
    _ADD_FIELDS,
    SummaryData,
    _cut,
    apply_update,
    parse_update,
)
from memory_chains.stores import Turn

__all__ = ["LLMSummarizer", "Summarizer"]


@runtime_checkable
class Summarizer(Protocol):
    """Anything that folds turns into a summary with one model call (or none).

    Example:
        >>> class Keyword:
        ...     def summarize(self, previous, turns):
        ...         return SummaryData(key_facts=(*previous.key_facts, *(t.human for t in turns)))
        >>> isinstance(Keyword(), Summarizer)
        True
    """

    def summarize(self, previous: SummaryData, turns: Sequence[Turn]) -> SummaryData:
        """Return the new summary covering ``previous`` and ``turns``."""
        ...


_SYSTEM_PROMPT = """\
You maintain the memory of a conversation between a user and an assistant.
You get the current memory (numbered items in four sections) and the newest turns.
Answer with ONLY a JSON object listing the changes:
- "add_facts": new facts from the turns: names, numbers, amounts, dates, ids, products, \
places. One short self-contained sentence each; copy names and numbers exactly.
- "add_decisions": decisions taken and commitments (who does what, by when).
- "add_preferences": the user's preferences, wishes and constraints.
- "add_questions": questions still unanswered after these turns.
- "remove": ids of open questions (Q...) answered in these turns, or of items the turns \
prove false.
Never repeat an item already in memory. Take facts from the new turns only (the example \
below is an illustration, not part of this conversation). Write in the language of the \
conversation. Use empty lists when nothing changes."""

# One worked example per language: a French conversation gets a French example, or the
# small model writes its summary in the example's language whatever the instructions say.
_EXAMPLES = {
    "en": (
        """\
Current memory:
Key facts:
  F1. Sofia is a member of the Bastille gym.
Decisions and commitments:
  (none)
User preferences:
  (none)
Open questions:
  Q1. Is there a yoga class on Sunday?
  Q2. Does Sofia need a mat?

New turns:
Human (turn 7): No idea for Sunday then. And Saturday? I prefer mornings, book me if possible.
AI (turn 7): Saturday yoga is at 10:30 with Karim, mats are provided. Booked: number 7731.""",
        '{"add_facts": ["Saturday yoga is at 10:30 with Karim; mats are provided."], '
        '"add_decisions": ["The assistant booked Sofia into Saturday yoga at 10:30 '
        '(booking 7731)."], '
        '"add_preferences": ["Sofia prefers morning classes."], "add_questions": [], '
        '"remove": ["Q2"]}',
    ),
    "fr": (
        """\
Current memory:
Key facts:
  F1. Sofia est inscrite à la salle de Bastille.
Decisions and commitments:
  (none)
User preferences:
  (none)
Open questions:
  Q1. Y a-t-il un cours de yoga le dimanche ?
  Q2. Sofia doit-elle apporter un tapis ?

New turns:
Human (turn 7): Tant pis pour dimanche. Et le samedi ? Je préfère le matin, réservez si possible.
AI (turn 7): Le yoga du samedi est à 10 h 30 avec Karim, tapis fournis. Réservé : numéro 7731.""",
        '{"add_facts": ["Le yoga du samedi a lieu à 10 h 30 avec Karim.", '
        '"Les tapis sont fournis."], '
        '"add_decisions": ["L\'assistant a réservé le yoga du samedi 10 h 30 pour Sofia '
        '(réservation 7731)."], '
        '"add_preferences": ["Sofia préfère les cours du matin."], "add_questions": [], '
        '"remove": ["Q2"]}',
    ),
}

_UPDATE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        **{
            name: {"type": "array", "items": {"type": "string"}, "maxItems": 8}
            for name in _ADD_FIELDS
        },
        "remove": {"type": "array", "items": {"type": "string"}, "maxItems": 8},
    },
    "required": [*_ADD_FIELDS, "remove"],
}

# Chat model classes known to honour an OpenAI-style ``response_format`` JSON schema.
_STRUCTURED_MODELS = ("ChatLlamaCpp", "ChatOpenAI", "AzureChatOpenAI")


class LLMSummarizer:
    """Folds turns into a :class:`SummaryData` with one call to a LangChain chat model.

    The prompt's fixed part (instructions and one worked example) comes first and never
    changes, so llama.cpp reuses its KV cache between compactions. The model returns a
    change set (:class:`~memory_chains.memory.SummaryUpdate`), constrained by a JSON schema
    when the model supports ``response_format``; previous items are carried forward by
    code.

    Args:
        llm: any LangChain chat model.
        structured: pass a JSON-schema ``response_format``; ``None`` decides from the
            model's class (llama.cpp and OpenAI models).
        max_turn_chars: each message is cut to this length in the prompt.
        max_output_tokens: the answer's token budget, set on every call of a structured
            model whatever the model's own default: a change set cut short is not JSON.

    Example:
        >>> from memory_chains.testing import ScriptedChatModel
        >>> reply = '{"add_decisions": ["Call Bob on 2 May."]}'
        >>> s = LLMSummarizer(ScriptedChatModel(replies=[reply]))
        >>> s.summarize(SummaryData(), [Turn(1, "Call Bob on 2 May", "OK")]).decisions
        ('Call Bob on 2 May.',)
    """

    def __init__(
        self,
        llm: Any,
        *,
        structured: bool | None = None,
        max_turn_chars: int = 1500,
        max_output_tokens: int = 512,
    ) -> None:
        if llm is None or not hasattr(llm, "invoke"):
            raise InvalidInputError("LLMSummarizer needs a LangChain chat model (llm=...)")
        self.llm = llm
        self.structured = (
            # by class name, subclasses too (ChatOpenAICompatible is a ChatOpenAI)
            any(c.__name__ in _STRUCTURED_MODELS for c in type(llm).__mro__)
            if structured is None
            else structured
        )
        self.max_turn_chars = max_turn_chars
        self.max_output_tokens = max_output_tokens

    def build_messages(self, previous: SummaryData, turns: Sequence[Turn]) -> list[Any]:
        """The chat messages of one compaction (pure: no model call)."""
        from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

        lines = []
        for t in turns:
            lines.append(f"Human (turn {t.seq}): {_cut(t.human, self.max_turn_chars)}")
            lines.append(f"AI (turn {t.seq}): {_cut(t.ai, self.max_turn_chars)}")
        user = f"Current memory:\n{previous.numbered()}\n\nNew turns:\n" + "\n".join(lines)
        example, answer = _EXAMPLES[detect_language(" ".join(t.human for t in turns))]
        return [
            SystemMessage(content=_SYSTEM_PROMPT),
            HumanMessage(content=example),
            AIMessage(content=answer),
            HumanMessage(content=user),
        ]

    def _kwargs(self) -> dict[str, Any]:
        if not self.structured:
            return {}
        schema = {
            "type": "json_schema",
            "json_schema": {"name": "memory_update", "schema": _UPDATE_SCHEMA},
        }
        return call_options(self.max_output_tokens, schema)

    def summarize(self, previous: SummaryData, turns: Sequence[Turn]) -> SummaryData:
        """One model call; raises ModelCallError or MalformedOutputError on failure."""
        return run(self._steps(previous, turns), self.llm)

    def _steps(
        self, previous: SummaryData, turns: Sequence[Turn]
    ) -> Generator[Call, Any, SummaryData]:
        call = Call(self.build_messages(previous, turns), self._kwargs())
        # A malformed answer raises MalformedOutputError from the judge: the turns stay
        # pending and the next compaction tries again.
        update = yield from attempts(
            call,
            lambda raw, _calls: parse_update(raw),
            retries=0,
            what="summary model",
            give_up=MalformedOutputError,
        )
        return apply_update(previous, update)
