"""Entity extraction with a chat model: one call per turn, JSON-schema constrained.

:class:`LLMEntityExtractor` asks the model once for every entity (name, type from the
configured enum, a confidence) and attribute of a turn (and its relations, when asked).
The fixed part of the prompt (:mod:`~memory_chains.entities._prompt`) comes first and is
identical from call to call, so llama.cpp reuses its KV cache and only the turn itself is
processed. The answer is parsed with :func:`parse_json_object` (fences, prose and
truncation repaired); if it still cannot be used the call is retried once, and then an
:class:`~memory_chains.entities.Extraction` with ``error`` set is returned: the turn is
kept, the failure is counted and logged, nothing is raised.

When a rule extractor runs beside the model (``patterns``, the default, at no extra call),
the two are made to agree: amounts, dates and ids the patterns find win; a name the model
types against strong evidence of its sentence takes the evidence's type when the model was
not sure; names the model missed are added; the rules' relations are added, and the
model's (when ``relations`` asks it for some) are kept when their ends have the types the
relation needs.

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
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from memory_chains._calls import Call, arun, call_options, chat_messages, content, run
from memory_chains._json import parse_json_object
from memory_chains.entities._evidence import STRONG, best_type
from memory_chains.entities._fold import fold, is_alias
from memory_chains.entities._prompt import examples, instructions
from memory_chains.entities._prompt import schema as json_schema
from memory_chains.entities._relrules import fits
from memory_chains.entities._types import Extraction, Mention, RelationMention
from memory_chains.errors import InvalidInputError, MalformedOutputError

__all__ = ["LLMEntityExtractor"]


log = logging.getLogger("memory_chains.entities")

_PATTERN_TYPES = frozenset(
    {"MONEY", "DATE", "EMAIL", "ORDER_ID", "TICKET_ID", "BOOKING_ID", "PRICE", "AMOUNT"}
)
PATTERNS_ONLY = ("MONEY", "DATE", "EMAIL", "ORDER_ID", "TICKET_ID", "BOOKING_ID")
_EVIDENCE_TYPES = ("PERSON", "ORGANIZATION", "LOCATION", "PRODUCT", "CONCEPT")
_DURATION = re.compile(
    r"(?i)\d+(?:[.,]\d+)?\s*(?:ans?|années?|years?|mois|months?|semaines?|weeks?|jours?|days?|"
    r"heures?|hours?|h|minutes?|min)"
)


@dataclass(frozen=True)
class ExtractionPrompt:
    """The fixed part of an extraction call for one set of types (built once, cached).

    Attributes:
        types: the entity types asked for.
        prefix: ``(role, content)`` messages sent before the turn: the instructions and
            the worked examples.
        response_format: the OpenAI-style ``json_schema`` the answer must follow.

    Example:
        >>> from memory_chains.testing import ScriptedChatModel
        >>> prompt = LLMEntityExtractor(ScriptedChatModel()).prompt(["PERSON", "PRODUCT"])
        >>> prompt.types, prompt.prefix[0][0], prompt.response_format["type"]
        (('PERSON', 'PRODUCT'), 'system', 'json_schema')
    """

    types: tuple[str, ...]
    prefix: tuple[tuple[str, str], ...]
    response_format: Mapping[str, Any]


class LLMEntityExtractor:
    """Extract entities, attributes and relations of a turn with ONE model call.

    Args:
        model: a LangChain chat model (``ChatLlamaCpp`` by default in memory_chains, or any
            ``BaseChatModel``).
        relations: relation kinds the model is asked for (``BUILTIN_RELATIONS`` plus your
            own). None by default: the rules beside it state relations from the turn's cue
            words, and on 17 dev dialogues the embedded model's relations added 44 false ones
            for 8 true ones (``docs/entities.md``); asking for none also shortens its answer.
        structured: pass a JSON schema as ``response_format`` so that the model's output is
            constrained (llama.cpp and OpenAI honour it); False for models that reject it.
        max_tokens: cap of the answer; a truncated answer is repaired.
        retries: extra attempts after an unusable answer (1 by default).
        patterns: a model-free extractor whose findings are merged with the model's at no
            extra call (a small model often misses amounts, dates and ids that patterns
            catch reliably); ``"default"`` is a :class:`RuleEntityExtractor` without spaCy,
            ``None`` disables it.
        patterns_only: types the model is not asked for when ``patterns`` run (amounts,
            dates, ids and e-mails: patterns find them reliably, and leaving them out
            shortens the model's answer, the slow part of a call); a turn whose types are
            all among them costs no call.
        model_weight: how much the model's type weighs against the rules' evidence (times
            the model's confidence); the rules' type wins only with a larger margin.

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
        relations: Sequence[str] = (),
        structured: bool = True,
        max_tokens: int = 320,
        retries: int = 1,
        patterns: Any = "default",
        patterns_only: Sequence[str] = PATTERNS_ONLY,
        model_weight: float = STRONG,
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
        self.model_weight = model_weight
        self.patterns_only = frozenset(t.upper() for t in patterns_only)
        self.calls = 0
        self.failures = 0
        self._prompts: dict[tuple[str, ...], ExtractionPrompt] = {}

    # -- public ---------------------------------------------------------------------------
    def extract(self, text: str, types: Sequence[str], known: Sequence[str] = ()) -> Extraction:
        """Extract from one turn's text; never raises for a bad model answer."""
        return run(self._steps(text, types, known), self.model)

    async def aextract(
        self, text: str, types: Sequence[str], known: Sequence[str] = ()
    ) -> Extraction:
        """Async :meth:`extract` (only the model call differs)."""
        return await arun(self._steps(text, types, known), self.model)

    def _steps(
        self, text: str, types: Sequence[str], known: Sequence[str]
    ) -> Generator[Call, Any, Extraction]:
        """The extraction as the calls it makes (a retry after an unusable answer)."""
        asked = self._asked(types)
        if not asked:  # everything configured is left to the patterns: no call
            return self.with_patterns(Extraction(), text, types, known)
        prompt = self.prompt(asked)
        call = Call(self._messages(prompt, text, known), self._options(prompt))
        raw, error = "", ""
        for attempt in range(self.retries + 1):
            reply = yield call  # a failed call arrives as its exception, never raised
            done, raw, error = self._attempt(reply, prompt, attempt, text, types, known)
            if done is not None:
                return done
        return self.with_patterns(self._failed(error, raw, self.retries + 1), text, types, known)

    def _asked(self, types: Sequence[str]) -> tuple[str, ...]:
        """The types the model is asked for: all, less those the patterns handle."""
        if not types:
            raise InvalidInputError("at least one entity type is required")
        if self.patterns is None:
            return tuple(types)
        return tuple(t for t in types if t.upper() not in self.patterns_only)

    def _attempt(
        self,
        reply: Any,
        prompt: ExtractionPrompt,
        attempt: int,
        text: str,
        types: Sequence[str],
        known: Sequence[str],
    ) -> tuple[Extraction | None, str, str]:
        """Judge one model reply (or the exception it raised): the extraction when usable,
        else ``(None, raw, why)``. The turn is kept either way; the next turn works."""
        if isinstance(reply, BaseException):
            return None, "", f"model call failed: {reply!r}"
        raw = content(reply)
        result = self.parse(raw, prompt, attempt + 1)
        if result is None:
            return None, raw, "the model's answer is not usable JSON"
        self.calls += attempt + 1
        return self.with_patterns(result, text, types, known), raw, ""

    # -- helpers --------------------------------------------------------------------------
    def with_patterns(
        self, result: Extraction, text: str, types: Sequence[str], known: Sequence[str]
    ) -> Extraction:
        """Make the model's findings and the rules' agree (see the module docstring): names
        the turn ``text`` does not write nor ``known`` holds are dropped, the patterns'
        amounts, dates and ids are added, relations must fit their types."""
        # A name the turn does not write, nor the memory knows, is the model's invention.
        written = f" {fold(text)} "
        known_names = {fold(k) for k in known}
        mentions = [
            m
            for m in result.mentions
            if not (m.type == "DATE" and _DURATION.fullmatch(m.name))
            and (f" {fold(m.name)} " in written or fold(m.name) in known_names)
        ]
        relations = list(result.relations)
        house, stated = result.house, result.house_stated
        if self.patterns is not None:
            found = self.patterns.extract(text, types, known)
            house, stated = found.house or house, found.house_stated or stated
            scores = getattr(self.patterns, "type_scores", None)
            mentions = [self._agree(m, found.mentions, scores, text, types) for m in mentions]
            for extra in found.mentions:
                if not extra.type:
                    continue
                if any(
                    fold(extra.name) == fold(m.name) or is_alias(extra.name, m.name, m.type)
                    for m in mentions
                ):
                    continue
                mentions.append(extra)
            for r in found.relations:
                if not any(_same_relation(r, other) for other in relations):
                    relations.append(r)
        typed = {fold(m.name): m.type for m in mentions} | {"user": "USER"}
        relations = [
            r
            for r in relations
            if fits(r.kind, typed.get(fold(r.source), ""), typed.get(fold(r.target), ""))
        ]
        return replace(
            result,
            mentions=tuple(mentions),
            relations=tuple(relations),
            house=house,
            house_stated=stated,
        )

    def _agree(
        self,
        m: Mention,
        found: Sequence[Mention],
        scores: Any,
        text: str,
        types: Sequence[str],
    ) -> Mention:
        """The model's mention, retyped when the rules have better evidence."""
        same = [f for f in found if f.type and fold(f.name) == fold(m.name)]
        if same and same[0].type in _PATTERN_TYPES and same[0].type != m.type:
            return replace(m, type=same[0].type)  # an amount, a date, an id: patterns win
        if scores is None or m.type not in _EVIDENCE_TYPES:
            return m
        evidence = scores(text, m.name)
        allowed = [t for t in _EVIDENCE_TYPES if t in types]
        rule = best_type(evidence, allowed)
        if not rule or rule == m.type:
            return m
        margin = evidence[rule] - evidence.get(m.type, 0.0)
        if margin > self.model_weight * m.confidence:
            return replace(m, type=rule)
        return m

    def _failed(self, error: str, raw: str, calls: int) -> Extraction:
        self.calls += calls
        self.failures += 1
        log.warning("entity extraction failed after %d call(s): %s; raw=%.200r", calls, error, raw)
        return Extraction(model_calls=calls, error=error, raw=raw)

    def _options(self, prompt: ExtractionPrompt) -> dict[str, Any]:
        return call_options(self.max_tokens, prompt.response_format if self.structured else None)

    def _messages(self, prompt: ExtractionPrompt, text: str, known: Sequence[str]) -> list[Any]:
        tail = ""
        if known:
            tail = "Already known (reuse these names): " + "; ".join(known[:10]) + "\n\n"
        return chat_messages(prompt.prefix, tail + text.strip())

    def prompt(self, types: Sequence[str]) -> ExtractionPrompt:
        """The instructions, examples and JSON schema of a call asking for ``types``.

        Another extractor that asks for entities in the same call (the long-term
        memory's combined one) builds its prompt on this one.

        Raises:
            InvalidInputError: ``types`` is empty.
        """
        types = tuple(types)
        if not types:
            raise InvalidInputError("at least one entity type is required")
        cached = self._prompts.get(types)
        if cached is not None:
            return cached
        system = instructions(types, self.relations)
        prefix: list[tuple[str, str]] = [("system", system)]
        for text, answer in examples(types, self.relations):
            prefix.append(("user", text))
            prefix.append(("assistant", json.dumps(answer, ensure_ascii=False)))
        schema = json_schema(types, self.relations)
        prompt = ExtractionPrompt(
            types,
            tuple(prefix),
            {"type": "json_schema", "json_schema": {"name": "entities", "schema": schema}},
        )
        self._prompts[types] = prompt
        return prompt

    def parse(self, raw: str, prompt: ExtractionPrompt, calls: int = 1) -> Extraction | None:
        """The entities and relations of a model's answer ``raw`` (JSON, repaired when
        truncated), or ``None`` when it has no ``entities`` list. Items of a type
        ``prompt`` did not ask for, or without a name, are left out.

        Example:
            >>> from memory_chains.testing import ScriptedChatModel
            >>> x = LLMEntityExtractor(ScriptedChatModel())
            >>> raw = '{"entities": [{"name": "Dell XPS 15", "type": "PRODUCT"}], "relations": []}'
            >>> [(m.name, m.type) for m in x.parse(raw, x.prompt(["PRODUCT"])).mentions]
            [('Dell XPS 15', 'PRODUCT')]
        """
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
            mentions.append(Mention(name.strip(), allowed[etype], clean, _confidence(item)))
        relations: list[RelationMention] = []
        rel_items = data.get("relations")
        for r in rel_items if isinstance(rel_items, list) else ():
            if isinstance(r, dict) and all(isinstance(r.get(k), str) for k in ("source", "target")):
                kind = str(r.get("relation") or r.get("kind") or "").strip().upper()
                if kind in self.relations:  # a kind nobody asked for is not kept
                    relations.append(RelationMention(r["source"], kind, r["target"]))
        return Extraction(tuple(mentions), tuple(relations), model_calls=calls)


def _same_relation(a: RelationMention, b: RelationMention) -> bool:
    def same(x: str, y: str) -> bool:
        return fold(x) == fold(y) or is_alias(x, y)

    return a.kind == b.kind and same(a.source, b.source) and same(a.target, b.target)


def _confidence(item: Mapping[str, Any]) -> float:
    value = item.get("confidence", 1.0)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 1.0
    return min(1.0, max(0.0, float(value)))
