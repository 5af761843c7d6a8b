"""Entities, profile and facts of a turn in ONE model call: :class:`TurnExtractor`.

:class:`~memory_chains.entities.LLMEntityExtractor` and :class:`LongTermExtractor` each
make one call per turn; a turn feeding both memories would cost two. :class:`TurnExtractor`
asks once for ``{"entities", "relations", "profile", "facts"}``: its JSON schema is the
union of the two schemas, and the answer goes through the two existing parsers (entity
mentions and relations, with the pattern extractor's extra finds; profile entries and
fact candidates, with their unusable items reported). The result, a
:class:`TurnExtraction`, carries one :class:`~memory_chains.entities.Extraction` and one
:class:`LongTermExtraction`; :class:`~memory_chains.longterm.MemoryUpdater` applies them.

The fixed part of the prompt (instructions, entity types, three few-shot exchanges that
exercise all four keys) comes first and is identical between calls, for llama.cpp's KV
cache; only the known entity names, the known fact keys and the turn are new. An answer
that is not usable JSON is repaired, else retried once, else
:class:`~memory_chains.errors.MalformedOutputError` is raised with the raw answer; a
failing model raises :class:`~memory_chains.errors.ModelCallError`. Nothing is returned
half-parsed: either both parts are usable or the call is reported as failed.

Example:
    >>> from memory_chains.testing import ScriptedChatModel
    >>> model = ScriptedChatModel(replies=['{"entities": [{"name": "Dell XPS 15", "type":'
    ...     ' "PRODUCT"}], "relations": [], "profile": [], "facts": [{"text":'
    ...     ' "L\\'utilisateur habite à Lyon.", "key": "city", "supersedes": false}]}'])
    >>> x = TurnExtractor(model).extract("J'habite à Lyon, le Dell XPS 15 ?", "Oui.")
    >>> # "Lyon" comes from the pattern extractor, merged at no extra call
    >>> [m.name for m in x.entities.mentions], [f.text for f in x.long_term.facts]
    (['Dell XPS 15', 'Lyon'], ["L'utilisateur habite à Lyon."])
    >>> x.model_calls, len(model.calls)
    (1, 1)
"""

from __future__ import annotations

import json
import logging
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memory_chains._calls import Call, arun, attempts, call_options, chat_messages, run
from memory_chains._json import parse_json_object
from memory_chains.entities import (
    BUILTIN_RELATIONS,
    DEFAULT_TYPES,
    TYPE_HINTS,
    Extraction,
    ExtractionPrompt,
    LLMEntityExtractor,
    resolve_types,
    turn_text,
)
from memory_chains.errors import InvalidInputError, MalformedOutputError
from memory_chains.longterm._extract import _SCHEMA as _LONG_TERM_SCHEMA
from memory_chains.longterm._extract import LongTermExtraction, parse_extraction

__all__ = ["TurnExtraction", "TurnExtractor"]

log = logging.getLogger("memory_chains.longterm")

_INSTRUCTIONS = """You update a memory from one turn of a conversation (the user's \
message and the assistant's reply). Answer with JSON only.

entities: named things of the turn. Types:
{types}
- name: the most complete form written (brand + model: "Dell XPS 15", not "XPS") or a \
known entity's name; copy identifiers, amounts and dates exactly. Every amount is a MONEY \
entity, every calendar date a DATE entity; a brand named on its own is an ORGANIZATION.
- Never pronouns, durations (2 ans), generic words or activities (laptop, garantie).
- attributes: short facts stated about the entity ("prix": "1599 €"); omit when none.
relations: between two extracted entities, kinds: {relations}.
profile: the user's preferences. Keys: language (fr, en…), technical_level (beginner, \
intermediate, expert), topics, communication_style, or another snake_case key; source \
"stated" when the user says it, "inferred" when you deduce it; confidence 0-1.
facts: durable facts about the user (identity, city, preferences, decisions, \
constraints, possessions, plans), each one short sentence in the user's language starting \
with "L'utilisateur" or "The user", with a snake_case key (name, city, budget…); reuse a \
known key when the fact changes it and set supersedes true.
Never a profile entry or fact for: greetings, thanks, questions the user asks, what only \
the assistant says.
Nothing: {{"entities": [], "relations": [], "profile": [], "facts": []}}"""

# (turn text, answer); entities whose type is not configured (and their relations) are
# dropped from the answers when the prompt is built.
_EXAMPLES: tuple[tuple[str, dict[str, Any]], ...] = (
    (
        "User: Bonjour, je m'appelle Léa, je débute en photo. Je compare le Samsung Galaxy "
        "S24 et le Google Pixel 8.\nAssistant: Le Galaxy S24 coûte 899 € et Samsung le "
        "garantit 2 ans.",
        {
            "entities": [
                {"name": "Léa", "type": "PERSON"},
                {"name": "Samsung Galaxy S24", "type": "PRODUCT",
                 "attributes": {"prix": "899 €", "garantie": "2 ans"}},
                {"name": "Google Pixel 8", "type": "PRODUCT"},
                {"name": "899 €", "type": "MONEY"},
                {"name": "Samsung", "type": "ORGANIZATION"},
            ],
            "relations": [
                {"source": "Samsung Galaxy S24", "relation": "COMPARES_TO",
                 "target": "Google Pixel 8"},
            ],
            "profile": [
                {"key": "language", "value": "fr", "source": "inferred", "confidence": 0.9},
                {"key": "technical_level", "value": "beginner", "source": "stated",
                 "confidence": 0.9},
                {"key": "topics", "value": "photo, smartphones", "source": "inferred",
                 "confidence": 0.6},
            ],
            "facts": [
                {"text": "L'utilisateur s'appelle Léa.", "key": "name", "supersedes": False},
            ],
        },
    ),
    (
        "User: Merci ! Et son prix déjà ?\nAssistant: Il coûte 1299 euros.",
        {
            "entities": [{"name": "1299 euros", "type": "MONEY"}],
            "relations": [],
            "profile": [],
            "facts": [],
        },
    ),
    (
        "Known keys: city\nUser: Tom Baker here. I moved to Berlin, keep answers short. My "
        "order A-55812 from Fnac never arrived.\nAssistant: Sorry Tom, I opened ticket "
        "TCK-2207.",
        {
            "entities": [
                {"name": "Tom Baker", "type": "PERSON"},
                {"name": "Berlin", "type": "LOCATION"},
                {"name": "A-55812", "type": "ORDER_ID", "attributes": {"status": "not arrived"}},
                {"name": "Fnac", "type": "ORGANIZATION"},
                {"name": "TCK-2207", "type": "TICKET_ID"},
            ],
            "relations": [{"source": "Tom Baker", "relation": "OWNS", "target": "A-55812"}],
            "profile": [
                {"key": "communication_style", "value": "concise", "source": "stated",
                 "confidence": 0.9},
            ],
            "facts": [
                {"text": "The user lives in Berlin.", "key": "city", "supersedes": True},
            ],
        },
    ),
)  # fmt: skip


@dataclass(frozen=True)
class TurnExtraction:
    """What one combined call found in a turn, split by memory.

    Attributes:
        entities: mentions and relations for the entity memory.
        long_term: profile updates and fact candidates for the long-term memory.
        model_calls: calls actually made for the turn (1, or 2 after a retry). The two
            parts share them: each part's own ``model_calls`` is this same number, so do
            not add them up.
        rejected: unusable items of the answer (entities and long-term), with why.
        raw: the model's raw answer.

    Example:
        >>> TurnExtraction().empty
        True
    """

    entities: Extraction = field(default_factory=Extraction)
    long_term: LongTermExtraction = field(default_factory=LongTermExtraction)
    model_calls: int = 0
    rejected: tuple[str, ...] = ()
    raw: str = ""

    @property
    def empty(self) -> bool:
        """True when the turn has nothing for either memory."""
        return not self.entities.mentions and not self.entities.relations and self.long_term.empty


@dataclass(frozen=True)
class _Prompt:
    entity: ExtractionPrompt  # the entity extractor's prompt: types, schema, parser input
    prefix: tuple[tuple[str, str], ...]  # (role, content), fixed between calls
    response_format: Mapping[str, Any]


_Request = tuple[_Prompt, str, list[Any]]  # (prompt, the turn's text, messages to send)


class TurnExtractor:
    """Entities, relations, profile updates and facts of a turn with ONE model call.

    Args:
        model: any LangChain chat model (the embedded ``ChatLlamaCpp`` by default).
        relations: relation kinds offered to the model.
        structured: pass the combined JSON schema as ``response_format`` (llama.cpp and
            OpenAI honour it); False for models that reject it.
        max_tokens: cap of the answer; a truncated answer is repaired, and retried when
            the repair lost the profile and facts.
        retries: extra calls after an unusable answer (1 by default).
        patterns: merged with the model's entities at no extra call, as in
            :class:`~memory_chains.entities.LLMEntityExtractor` (``"default"``: rules
            without spaCy; ``None`` disables it).

    Attributes:
        calls: model calls made so far.

    Raises:
        ModelCallError: from :meth:`extract` when the model call fails.
        MalformedOutputError: from :meth:`extract` when no answer was usable (``raw``
            holds the last one).

    Example:
        >>> from memory_chains.testing import ScriptedChatModel
        >>> bad = TurnExtractor(ScriptedChatModel(replies=["oops", '{"entities": []}']))
        >>> try:
        ...     bad.extract("Je préfère le thé.")
        ... except MalformedOutputError as exc:
        ...     exc.raw, bad.calls
        ('{"entities": []}', 2)
    """

    def __init__(
        self,
        model: Any,
        *,
        relations: Sequence[str] = BUILTIN_RELATIONS,
        structured: bool = True,
        max_tokens: int = 512,
        retries: int = 1,
        patterns: Any = "default",
    ) -> None:
        if retries < 0 or max_tokens < 64:
            raise InvalidInputError("retries must be >= 0 and max_tokens >= 64")
        # Never called: it lends its entity prompt pieces, parser and pattern merge.
        self._entities = LLMEntityExtractor(
            model, relations=relations, structured=structured, patterns=patterns
        )
        self.model = model
        self.relations = self._entities.relations
        self.structured = structured
        self.max_tokens = max_tokens
        self.retries = retries
        self.calls = 0
        self._prompts: dict[tuple[str, ...], _Prompt] = {}

    # -- public ---------------------------------------------------------------------------
    def extract(
        self,
        human: str,
        ai: str = "",
        *,
        types: str | Sequence[str] = DEFAULT_TYPES,
        known_entities: Sequence[str] = (),
        known_keys: Sequence[str] = (),
    ) -> TurnExtraction:
        """Extract from one turn (``known_*``: entity names and fact keys in memory).

        ``human`` and ``ai`` must already be masked; each is cut at 1,500 characters as
        in the entity memory.
        """
        request = self._request(human, ai, types, known_entities, known_keys)
        return run(self._steps(request, known_entities), self.model)

    async def aextract(
        self,
        human: str,
        ai: str = "",
        *,
        types: str | Sequence[str] = DEFAULT_TYPES,
        known_entities: Sequence[str] = (),
        known_keys: Sequence[str] = (),
    ) -> TurnExtraction:
        """Async :meth:`extract` (only the model call differs)."""
        request = self._request(human, ai, types, known_entities, known_keys)
        return await arun(self._steps(request, known_entities), self.model)

    def messages(
        self,
        human: str,
        ai: str = "",
        *,
        types: str | Sequence[str] = DEFAULT_TYPES,
        known_entities: Sequence[str] = (),
        known_keys: Sequence[str] = (),
    ) -> list[Any]:
        """The chat messages one call sends (to count or inspect the prompt)."""
        return self._request(human, ai, types, known_entities, known_keys)[2]

    # -- helpers --------------------------------------------------------------------------
    def _steps(
        self, request: _Request, known_entities: Sequence[str]
    ) -> Generator[Call, Any, TurnExtraction]:
        prompt, text, messages = request
        options = call_options(self.max_tokens, prompt.response_format if self.structured else None)

        def judge(raw: str, calls: int) -> TurnExtraction | None:
            return self._judge(raw, calls, prompt, text, known_entities)

        return attempts(
            Call(messages, options),
            judge,
            retries=self.retries,
            what="turn extraction",
            give_up=self._give_up,
        )

    def _request(
        self,
        human: str,
        ai: str,
        types: str | Sequence[str],
        known_entities: Sequence[str],
        known_keys: Sequence[str],
    ) -> _Request:
        """The prompt, the turn's text and the messages; a bad turn raises here."""
        text = turn_text(human, ai)  # checks both are strings
        if not human.strip():
            raise InvalidInputError("the human message is empty: there is nothing to extract")
        prompt = self._prompt(resolve_types(types if isinstance(types, str) else list(types)))
        head = ""
        if known_entities:
            head += f"Known entities: {'; '.join(list(known_entities)[:10])}\n"
        if known_keys:
            head += f"Known keys: {', '.join(list(known_keys)[:15])}\n"
        return prompt, text, chat_messages(prompt.prefix, head + text)

    def _prompt(self, types: tuple[str, ...]) -> _Prompt:
        cached = self._prompts.get(types)
        if cached is not None:
            return cached
        entity = self._entities.prompt(types)
        type_lines = "\n".join(
            f"- {t}: {TYPE_HINTS.get(t, t.lower().replace('_', ' '))}" for t in types
        )
        prefix = [
            ("system", _INSTRUCTIONS.format(types=type_lines, relations=", ".join(self.relations)))
        ]
        for text, answer in _EXAMPLES:
            kept = [e for e in answer["entities"] if e["type"] in types]
            names = {e["name"] for e in kept}
            relations = [
                r
                for r in answer["relations"]
                if {r["source"], r["target"]} <= names and r["relation"] in self.relations
            ]
            shown = {**answer, "entities": kept, "relations": relations}
            prefix += [("user", text), ("assistant", json.dumps(shown, ensure_ascii=False))]
        entity_schema = entity.response_format["json_schema"]["schema"]
        schema = {
            "type": "object",
            "properties": {**entity_schema["properties"], **_LONG_TERM_SCHEMA["properties"]},
            "required": [*entity_schema["required"], *_LONG_TERM_SCHEMA["required"]],
        }
        prompt = _Prompt(
            entity,
            tuple(prefix),
            {"type": "json_schema", "json_schema": {"name": "turn_memory", "schema": schema}},
        )
        self._prompts[types] = prompt
        return prompt

    def _judge(
        self, raw: str, calls: int, prompt: _Prompt, text: str, known_entities: Sequence[str]
    ) -> TurnExtraction | None:
        """Both parts of one answer, or ``None`` when either is unusable."""
        self.calls += 1
        entities = self._entities.parse(raw, prompt.entity, calls)
        long_term = parse_extraction(raw, calls)
        if entities is None or long_term is None:
            return None
        rejected = [*_unusable_entities(raw, len(entities.mentions)), *long_term.rejected]
        entities = self._entities.with_patterns(entities, text, prompt.entity.types, known_entities)
        return TurnExtraction(entities, long_term, calls, tuple(rejected), raw)

    def _give_up(self, raw: str) -> MalformedOutputError:
        return MalformedOutputError(
            f"the model's turn extraction was not usable JSON with entities, profile and "
            f"facts after {self.retries + 1} call(s); neither memory was updated: observe "
            "the turn again, or give each memory its own extractor",
            raw=raw,
        )


def _unusable_entities(raw: str, kept: int) -> list[str]:
    """Why entity items of a parsed answer were left out (the parser skips them)."""
    items = parse_json_object(raw).get("entities")
    dropped = len(items) - kept if isinstance(items, list) else 0
    if dropped <= 0:
        return []
    why = f"{dropped} entity item(s) without a name or with a type not configured"
    log.warning("turn extraction: %s", why)
    return [why]
