"""LangChain adapter: :class:`EntityMemory`, a ``BaseMemory`` over :class:`EntityTracker`.

It composes with ``ConversationalRetrievalChain`` next to a short-term memory: it exposes
one extra prompt variable (``entities`` by default) that the QA prompt can use, reads the
question from ``question`` and the answer from ``answer``. All logic lives in the tracker;
this module is the only one of the package that imports ``langchain_classic``.

Example:
    >>> from memory_chains.entities import EntityMemory, RuleEntityExtractor
    >>> memory = EntityMemory(extractor=RuleEntityExtractor(use_spacy=False))
    >>> memory.save_context({"question": "Je cherche le Dell XPS 15"},
    ...                     {"answer": "Il coûte 1599 €."})
    >>> print(memory.load_memory_variables({"question": "Sa garantie ?"})["entities"])
    Known entities (most relevant first):
    - Dell XPS 15 [PRODUCT]; price: 1599 €
      relations: the user INTERESTED_IN it
    - 1599 € [MONEY]
    >>> memory.resolve("sa")
    'Dell XPS 15'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_classic.base_memory import BaseMemory
from pydantic import ConfigDict, Field

from memory_chains._pydantic import TypedValidation
from memory_chains.entities._llm import LLMEntityExtractor
from memory_chains.entities._rules import RuleEntityExtractor
from memory_chains.entities._tracker import EntityTracker, TurnReport
from memory_chains.entities._types import Entity
from memory_chains.errors import InvalidInputError

__all__ = ["EntityMemory"]


class EntityMemory(TypedValidation, BaseMemory):
    """Entity memory for LangChain chains (``ConversationalRetrievalChain`` and others).

    Args:
        llm: a chat model for the one-call-per-turn :class:`LLMEntityExtractor`.
        extractor: an extractor instance, or ``"llm"`` (the default chat model of
            :func:`memory_chains.providers.get_chat_model`) or ``"rules"`` (no model call).
            Ignored when ``llm`` is given.
        types: a preset (``"default"``, ``"ecommerce"``, ``"support"``, ``"hr"``,
            ``"travel"``) or a list of types.
        user_id: whose entities these are (persisted under ``("entities", user_id)``).
        store: a :class:`~memory_chains.stores.BaseStore`; None keeps entities in memory.
        ttl: seconds after which an entity not mentioned again is forgotten.
        token_counter: counts tokens for the context budget.
        max_tokens: budget of the context block.
        memory_key: name of the prompt variable (``entities``).
        input_key: where the question is read (``question``).
        output_key: where the answer is read (``answer``).
        pii: masking applied to each turn before extraction (see :class:`EntityTracker`).
        tracker: an existing :class:`EntityTracker` (the options above are then ignored).

    Example:
        >>> from memory_chains.entities import EntityMemory
        >>> EntityMemory(extractor="rules").memory_variables
        ['entities']
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    tracker: EntityTracker
    memory_key: str = "entities"
    input_key: str = "question"
    output_key: str = "answer"
    max_tokens: int = Field(default=256, ge=0)
    last_report: TurnReport | None = None

    def __init__(
        self,
        *,
        llm: Any = None,
        extractor: Any = "llm",
        types: str | list[str] | tuple[str, ...] | None = None,
        user_id: str = "default",
        store: Any = None,
        ttl: float | None = None,
        token_counter: Callable[[str], int] | None = None,
        pii: Any = True,
        tracker: EntityTracker | None = None,
        **kwargs: Any,
    ) -> None:
        if tracker is None:
            tracker = EntityTracker(
                _make_extractor(llm, extractor),
                types=types,
                user_id=user_id,
                store=store,
                ttl=ttl,
                token_counter=token_counter,
                pii=pii,
            )
        super().__init__(tracker=tracker, **kwargs)

    @property
    def memory_variables(self) -> list[str]:
        """The one prompt variable this memory provides."""
        return [self.memory_key]

    def load_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """The context block for the current question."""
        question = str(inputs.get(self.input_key, "") or "")
        return {self.memory_key: self.tracker.context(question, max_tokens=self.max_tokens)}

    def save_context(self, inputs: dict[str, Any], outputs: dict[str, str]) -> None:
        """Extract and merge the entities of one exchange (one model call at most)."""
        human, ai = self._texts(inputs, outputs)
        self.last_report = self.tracker.observe(human, ai)

    async def asave_context(self, inputs: dict[str, Any], outputs: dict[str, str]) -> None:
        """Async :meth:`save_context`."""
        human, ai = self._texts(inputs, outputs)
        self.last_report = await self.tracker.aobserve(human, ai)

    def clear(self) -> None:
        """Forget every entity of this user."""
        self.tracker.clear()

    def _texts(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> tuple[str, str]:
        if self.input_key not in inputs:
            raise InvalidInputError(
                f"EntityMemory reads the question from {self.input_key!r} but the chain gave "
                f"{sorted(inputs)}: pass input_key=... to EntityMemory"
            )
        if self.output_key not in outputs:
            raise InvalidInputError(
                f"EntityMemory reads the answer from {self.output_key!r} but the chain gave "
                f"{sorted(outputs)}: pass output_key=... to EntityMemory"
            )
        return str(inputs[self.input_key]), str(outputs[self.output_key])

    # -- conveniences delegating to the tracker --------------------------------------------
    def salient(self, question: str = "", k: int = 5) -> list[str]:
        """Names of the ``k`` most relevant entities, most recent first (for a rewriter)."""
        return self.tracker.salient(question, k)

    def resolve(self, phrase: str, *, question: str = "") -> str | None:
        """The name of the entity a reference designates, or None."""
        found = self.tracker.resolve(phrase, question=question)
        return found.name if found else None

    def related(self, name: str) -> list[tuple[str, str, str]]:
        """``(other name, relation kind, direction)`` for each relation of ``name``."""
        return self.tracker.related(name)

    def entities(self) -> list[Entity]:
        """Every live entity of this user."""
        return self.tracker.entities()

    def export_json(self, *, indent: int | None = 2) -> str:
        """This user's entities and relations as JSON."""
        return self.tracker.export_json(indent=indent)


def _make_extractor(llm: Any, extractor: Any) -> Any:
    if llm is not None:
        return LLMEntityExtractor(llm)
    if extractor == "rules":
        return RuleEntityExtractor()
    if extractor == "llm":
        from memory_chains.providers import get_chat_model

        return LLMEntityExtractor(get_chat_model(max_tokens=256))
    if isinstance(extractor, str) or not hasattr(extractor, "extract"):
        raise InvalidInputError(
            f"extractor must be 'llm', 'rules' or an extractor object, got {extractor!r}"
        )
    return extractor
