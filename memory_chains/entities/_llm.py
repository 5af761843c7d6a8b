"""Entity extraction with a chat model: one call per turn, JSON-schema constrained.

:class:`LLMEntityExtractor` asks the model once for every entity, attribute and relation
of a turn. The fixed part of the prompt (instructions, type list, few-shot examples) comes
first and is identical from call to call, so llama.cpp reuses its KV cache and only the
turn itself is processed. The answer is parsed with :func:`parse_json_object` (fences,
prose and truncation repaired); if it still cannot be used the call is retried once, and
then an :class:`~memory_chains.entities.Extraction` with ``error`` set is returned: the
turn is kept, the failure is counted and logged, nothing is raised.

Example:
    >>> from memory_chains.testing import ScriptedChatModel
    >>> model = ScriptedChatModel(replies=['{"entities": [{"name": "Dell XPS 15",'
    ...     ' "type": "PRODUCT", "attributes": {"prix": "1599 €"}}], "relations": []}'])
    >>> x = LLMEntityExtractor(model).extract("User: le Dell XPS 15 à 1599 € ?", ["PRODUCT"])
    >>> [(m.name, m.type, dict(m.attributes)) for m in x.mentions], x.model_calls
    ([('Dell XPS 15', 'PRODUCT', {'prix': '1599 €'})], 1)
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from memory_chains._json import parse_json_object
from memory_chains.entities._types import BUILTIN_RELATIONS, Extraction, Mention, RelationMention
from memory_chains.errors import InvalidInputError, MalformedOutputError

__all__ = ["LLMEntityExtractor"]

log = logging.getLogger("memory_chains.entities")

_DURATION = re.compile(
    r"(?i)\d+(?:[.,]\d+)?\s*(?:ans?|années?|years?|mois|months?|semaines?|weeks?|jours?|days?|"
    r"heures?|hours?|h|minutes?|min)"
)

_TYPE_HINTS: Mapping[str, str] = {
    "PERSON": "a named person",
    "PRODUCT": "a named product or model, with brand and model number (Dell XPS 15, iPhone 15)",
    "ORGANIZATION": "a company, brand, school or institution",
    "LOCATION": "a city, country, address or place",
    "DATE": "a date, day or deadline (12 mars, next Monday)",
    "MONEY": "an amount with its currency (1599 €, $25)",
    "CONCEPT": "a named plan, offer, option, service or technology",
    "ORDER_ID": "an order number",
    "TICKET_ID": "a support ticket or case number",
    "BOOKING_ID": "a booking or reservation reference",
    "EMAIL": "an e-mail address",
    "ISSUE": "the problem the customer reports (écran noir, battery drain)",
    "POSITION": "a job title or role",
    "SKILL": "a skill, language or tool a person knows",
    "EDUCATION": "a degree, diploma or school",
}

_INSTRUCTIONS = """You extract entities from one turn of a conversation (the user's message \
and the assistant's reply) for a memory. Answer with JSON only.

Entity types:
{types}

Rules:
- name: the most complete form written in the text (brand + model: "Dell XPS 15", not \
"XPS"); copy identifiers, amounts and dates exactly as written.
- Every amount of money is a MONEY entity and every calendar date a DATE entity, even \
when it is also an attribute value.
- A brand or company named on its own ("garanti par Dell", "celui de Lenovo") is an \
ORGANIZATION.
- Extract named things only. Never pronouns (it, sa, celui), never durations (2 ans, \
3 years), never generic words or activities (laptop, warranty, garantie, commande, \
livraison, photo editing).
- attributes: short facts stated about an entity, as "key": "value" (price, warranty, \
size, status, colour, date…); leave it out when there are none.
- relations between two extracted entities, kinds: {relations}.
- Nothing to extract: {{"entities": [], "relations": []}}."""

# (turn text, answer) pairs; entities whose type is not configured are dropped from them.
_EXAMPLES: tuple[tuple[str, dict[str, Any]], ...] = (
    (
        "User: Je compare le Samsung Galaxy S24 et le Google Pixel 8, lequel a la meilleure "
        "batterie ?\nAssistant: Le Galaxy S24 a une batterie de 4000 mAh, coûte 899 € et "
        "Samsung le garantit 2 ans.",
        {
            "entities": [
                {
                    "name": "Samsung Galaxy S24",
                    "type": "PRODUCT",
                    "attributes": {"batterie": "4000 mAh", "prix": "899 €", "garantie": "2 ans"},
                },
                {"name": "Google Pixel 8", "type": "PRODUCT", "attributes": {}},
                {"name": "899 €", "type": "MONEY", "attributes": {}},
                {"name": "Samsung", "type": "ORGANIZATION", "attributes": {}},
            ],
            "relations": [
                {
                    "source": "Samsung Galaxy S24",
                    "relation": "COMPARES_TO",
                    "target": "Google Pixel 8",
                }
            ],
        },
    ),
    (
        "User: Hi, this is Tom Baker. My order #A-55812 from Fnac never arrived, I paid "
        "on March 3.\nAssistant: Sorry Tom, I opened ticket TCK-2207 for order A-55812.",
        {
            "entities": [
                {"name": "Tom Baker", "type": "PERSON", "attributes": {}},
                {"name": "A-55812", "type": "ORDER_ID", "attributes": {"status": "not arrived"}},
                {"name": "Fnac", "type": "ORGANIZATION", "attributes": {}},
                {"name": "March 3", "type": "DATE", "attributes": {}},
                {"name": "TCK-2207", "type": "TICKET_ID", "attributes": {}},
            ],
            "relations": [{"source": "Tom Baker", "relation": "OWNS", "target": "A-55812"}],
        },
    ),
    (
        "User: Quel est son prix ?\nAssistant: Il coûte 1299 euros, livraison gratuite.",
        {"entities": [{"name": "1299 euros", "type": "MONEY", "attributes": {}}], "relations": []},
    ),
)


@dataclass(frozen=True)
class _Prompt:
    types: tuple[str, ...]
    prefix: tuple[tuple[str, str], ...]  # (role, content), fixed between calls
    response_format: Mapping[str, Any]


class LLMEntityExtractor:
    """Extract entities, attributes and relations of a turn with ONE model call.

    Args:
        model: a LangChain chat model (``ChatLlamaCpp`` by default in memory_chains, or any
            ``BaseChatModel``).
        relations: relation kinds offered to the model (built-ins plus your own).
        structured: pass a JSON schema as ``response_format`` so that the model's output is
            constrained (llama.cpp and OpenAI honour it); False for models that reject it.
        max_tokens: cap of the answer; a truncated answer is repaired.
        retries: extra attempts after an unusable answer (1 by default).
        patterns: a model-free extractor whose findings are merged with the model's at no
            extra call (a small model often misses amounts, dates and ids that patterns
            catch reliably); ``"default"`` is a :class:`RuleEntityExtractor` without spaCy,
            ``None`` disables it.

    Attributes:
        calls: model calls made so far.
        failures: turns whose extraction failed after the retry.

    Example:
        >>> from memory_chains.testing import ScriptedChatModel
        >>> model = ScriptedChatModel(replies=["oops", "still not json"])
        >>> x = LLMEntityExtractor(model).extract("User: bonjour", ["PERSON"])
        >>> x.ok, x.model_calls, "JSON" in x.error
        (False, 2, True)
    """

    def __init__(
        self,
        model: Any,
        *,
        relations: Sequence[str] = BUILTIN_RELATIONS,
        structured: bool = True,
        max_tokens: int = 256,
        retries: int = 1,
        patterns: Any = "default",
    ) -> None:
        if retries < 0 or max_tokens < 16:
            raise InvalidInputError("retries must be >= 0 and max_tokens >= 16")
        self.model = model
        self.relations = tuple(dict.fromkeys(r.strip().upper() for r in relations if r.strip()))
        self.structured = structured
        self.max_tokens = max_tokens
        self.retries = retries
        if patterns == "default":
            from memory_chains.entities._rules import RuleEntityExtractor

            patterns = RuleEntityExtractor(use_spacy=False)
        self.patterns = patterns
        self.calls = 0
        self.failures = 0
        self._prompts: dict[tuple[str, ...], _Prompt] = {}

    # -- public ---------------------------------------------------------------------------
    def extract(self, text: str, types: Sequence[str], known: Sequence[str] = ()) -> Extraction:
        """Extract from one turn's text; never raises for a bad model answer."""
        prompt = self._prompt(tuple(types))
        messages = self._messages(prompt, text, known)
        raw, error = "", ""
        for attempt in range(self.retries + 1):
            try:
                reply: Any = self.model.invoke(messages, **self._kwargs(prompt))
            except Exception as exc:  # reported in the result and the log, never raised
                reply = exc
            done, raw, error = self._attempt(reply, prompt, attempt, text, types, known)
            if done is not None:
                return done
        return self._with_patterns(self._failed(error, raw, self.retries + 1), text, types, known)

    async def aextract(
        self, text: str, types: Sequence[str], known: Sequence[str] = ()
    ) -> Extraction:
        """Async :meth:`extract` (only the model call differs)."""
        prompt = self._prompt(tuple(types))
        messages = self._messages(prompt, text, known)
        raw, error = "", ""
        for attempt in range(self.retries + 1):
            try:
                reply: Any = await self.model.ainvoke(messages, **self._kwargs(prompt))
            except Exception as exc:  # reported in the result and the log, never raised
                reply = exc
            done, raw, error = self._attempt(reply, prompt, attempt, text, types, known)
            if done is not None:
                return done
        return self._with_patterns(self._failed(error, raw, self.retries + 1), text, types, known)

    def _attempt(
        self,
        reply: Any,
        prompt: _Prompt,
        attempt: int,
        text: str,
        types: Sequence[str],
        known: Sequence[str],
    ) -> tuple[Extraction | None, str, str]:
        """Judge one model reply (or the exception it raised): the extraction when usable,
        else ``(None, raw, why)``. The turn is kept either way; the next turn works."""
        if isinstance(reply, BaseException):
            return None, "", f"model call failed: {reply!r}"
        raw = _content(reply)
        result = self._parse(raw, prompt, attempt + 1)
        if result is None:
            return None, raw, "the model's answer is not usable JSON"
        self.calls += attempt + 1
        return self._with_patterns(result, text, types, known), raw, ""

    # -- helpers --------------------------------------------------------------------------
    def _with_patterns(
        self, result: Extraction, text: str, types: Sequence[str], known: Sequence[str]
    ) -> Extraction:
        """Drop durations the model took for dates; add what the patterns found."""
        mentions = [
            m for m in result.mentions if not (m.type == "DATE" and _DURATION.fullmatch(m.name))
        ]
        if self.patterns is not None:
            from memory_chains.entities._fold import fold, is_alias

            found = self.patterns.extract(text, types, known).mentions
            for extra in found:
                if not extra.type:
                    continue
                if any(
                    fold(extra.name) == fold(m.name) or is_alias(extra.name, m.name, m.type)
                    for m in mentions
                ):
                    continue
                mentions.append(extra)
        return replace(result, mentions=tuple(mentions))

    def _failed(self, error: str, raw: str, calls: int) -> Extraction:
        self.calls += calls
        self.failures += 1
        log.warning("entity extraction failed after %d call(s): %s; raw=%.200r", calls, error, raw)
        return Extraction(model_calls=calls, error=error, raw=raw)

    def _kwargs(self, prompt: _Prompt) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"max_tokens": self.max_tokens}
        if self.structured:
            kwargs["response_format"] = dict(prompt.response_format)
        return kwargs

    def _messages(self, prompt: _Prompt, text: str, known: Sequence[str]) -> list[Any]:
        from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

        kinds = {"system": SystemMessage, "user": HumanMessage, "assistant": AIMessage}
        messages: list[Any] = [kinds[role](content=content) for role, content in prompt.prefix]
        tail = ""
        if known:
            tail = "Already known (reuse these names): " + "; ".join(known[:10]) + "\n\n"
        messages.append(HumanMessage(content=tail + text.strip()))
        return messages

    def _prompt(self, types: tuple[str, ...]) -> _Prompt:
        if not types:
            raise InvalidInputError("at least one entity type is required")
        cached = self._prompts.get(types)
        if cached is not None:
            return cached
        type_lines = "\n".join(
            f"- {t}: {_TYPE_HINTS.get(t, t.lower().replace('_', ' '))}" for t in types
        )
        system = _INSTRUCTIONS.format(types=type_lines, relations=", ".join(self.relations))
        prefix: list[tuple[str, str]] = [("system", system)]
        for text, answer in _EXAMPLES:
            kept = [
                {k: v for k, v in e.items() if v != {}}
                for e in answer["entities"]
                if e["type"] in types
            ]
            names = {e["name"] for e in kept}
            rels = [
                r
                for r in answer["relations"]
                if r["source"] in names and r["target"] in names and r["relation"] in self.relations
            ]
            prefix.append(("user", text))
            prefix.append(
                ("assistant", json.dumps({"entities": kept, "relations": rels}, ensure_ascii=False))
            )
        schema = {
            "type": "object",
            "properties": {
                "entities": {
                    "type": "array",
                    "maxItems": 16,
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string", "minLength": 1, "maxLength": 80},
                            "type": {"type": "string", "enum": list(types)},
                            "attributes": {
                                "type": "object",
                                "additionalProperties": {"type": "string", "maxLength": 80},
                            },
                        },
                        "required": ["name", "type"],
                    },
                },
                "relations": {
                    "type": "array",
                    "maxItems": 8,
                    "items": {
                        "type": "object",
                        "properties": {
                            "source": {"type": "string"},
                            "relation": {"type": "string", "enum": list(self.relations)},
                            "target": {"type": "string"},
                        },
                        "required": ["source", "relation", "target"],
                    },
                },
            },
            "required": ["entities", "relations"],
        }
        prompt = _Prompt(
            types,
            tuple(prefix),
            {"type": "json_schema", "json_schema": {"name": "entities", "schema": schema}},
        )
        self._prompts[types] = prompt
        return prompt

    def _parse(self, raw: str, prompt: _Prompt, calls: int) -> Extraction | None:
        try:
            data = parse_json_object(raw)
        except MalformedOutputError:
            return None
        items = data.get("entities")
        if not isinstance(items, list):
            return None
        allowed = {t.upper(): t for t in prompt.types}
        mentions: list[Mention] = []
        for item in items:
            if not isinstance(item, dict):
                continue
            name = item.get("name")
            etype = str(item.get("type", "")).strip().upper()
            if not isinstance(name, str) or not name.strip() or etype not in allowed:
                continue
            attrs = item.get("attributes")
            clean: dict[str, str] = {}
            if isinstance(attrs, dict):
                for k, v in attrs.items():
                    if isinstance(v, (list, tuple)):
                        v = ", ".join(str(x) for x in v)
                    if v is not None and str(v).strip() and str(k).strip():
                        clean[str(k).strip()] = str(v).strip()
            mentions.append(Mention(name.strip(), allowed[etype], clean))
        relations: list[RelationMention] = []
        rel_items = data.get("relations")
        for r in rel_items if isinstance(rel_items, list) else ():
            if isinstance(r, dict) and all(isinstance(r.get(k), str) for k in ("source", "target")):
                kind = str(r.get("relation") or r.get("kind") or "").strip().upper()
                if kind:
                    relations.append(RelationMention(r["source"], kind, r["target"]))
        return Extraction(tuple(mentions), tuple(relations), model_calls=calls)


def _content(message: Any) -> str:
    content = getattr(message, "content", message)
    if isinstance(content, list):  # content blocks
        return "".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content)
    return str(content)
