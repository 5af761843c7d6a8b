"""One model call per turn for the profile AND the facts: :class:`LongTermExtractor`.

The model answers one JSON object (constrained by a JSON schema passed as
``response_format``) with ``profile`` updates and ``facts``. The fixed part of the prompt
(instructions and three short few-shot exchanges, French and English) comes first and is
identical between calls so that llama.cpp reuses its KV cache; only the turn and the slot
keys already known are new. An answer that is not usable JSON is repaired
(:func:`~memory_chains._json.parse_json_object`), else the call is retried
once, else :class:`~memory_chains.errors.MalformedOutputError` is raised with the raw
answer: the turn is never silently dropped. A failing model raises
:class:`~memory_chains.errors.ModelCallError`.

:class:`RuleLongTermExtractor` needs no model: a few French and English patterns ("je
m'appelle …", "je préfère …", "mon … est …", "je suis débutant") for tests and as an
offline fallback.

Example:
    >>> from memory_chains.testing import ScriptedChatModel
    >>> model = ScriptedChatModel(replies=['{"profile": [{"key": "language", "value": "fr",'
    ...     ' "source": "inferred", "confidence": 0.8}], "facts": [{"text":'
    ...     ' "L\\'utilisateur habite à Lyon.", "key": "city"}]}'])
    >>> x = LongTermExtractor(model).extract("J'habite à Lyon.", "Noté !")
    >>> [e.value for e in x.profile], [f.text for f in x.facts], x.model_calls
    (['fr'], ["L'utilisateur habite à Lyon."], 1)
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from memory_chains._calls import Call, arun, attempts, call_options, chat_messages, run
from memory_chains._folding import fold
from memory_chains._json import parse_json_object
from memory_chains._language import language_votes
from memory_chains.errors import InvalidInputError, MalformedOutputError
from memory_chains.longterm._fact_types import FactCandidate
from memory_chains.longterm._profile import ProfileEntry, normalize_key

__all__ = [
    "Extractor",
    "LongTermExtraction",
    "LongTermExtractor",
    "RuleLongTermExtractor",
]

log = logging.getLogger("memory_chains.longterm")


@dataclass(frozen=True)
class LongTermExtraction:
    """What an extractor found in one turn.

    Attributes:
        profile: profile updates (``updated_at`` and the source turn are set by the
            memory).
        facts: fact candidates.
        model_calls: calls made (0 for rules).
        rejected: items of the model's answer that were unusable, with why (kept so that
            nothing is dropped silently).
        raw: the model's raw answer.

    Example:
        >>> LongTermExtraction().empty
        True
    """

    profile: tuple[ProfileEntry, ...] = ()
    facts: tuple[FactCandidate, ...] = ()
    model_calls: int = 0
    rejected: tuple[str, ...] = ()
    raw: str = ""

    @property
    def empty(self) -> bool:
        """True when there is nothing to remember."""
        return not self.profile and not self.facts


@runtime_checkable
class Extractor(Protocol):
    """What :class:`~memory_chains.longterm.LongTermMemory` needs from an extractor."""

    def extract(
        self, human: str, ai: str = "", known_keys: Sequence[str] = ()
    ) -> LongTermExtraction: ...

    async def aextract(
        self, human: str, ai: str = "", known_keys: Sequence[str] = ()
    ) -> LongTermExtraction: ...


_INSTRUCTIONS = """You keep a long-term memory about the user. From one exchange, extract \
only what stays true in later conversations. Answer with JSON only.

profile: the user's preferences. Keys: language (fr, en…), technical_level (beginner, \
intermediate, expert), topics (comma-separated), communication_style, or another \
snake_case key. source "stated" when the user says it, "inferred" when you deduce it; \
confidence 0-1.
facts: durable facts about the user (identity, preferences, decisions, constraints, \
possessions, plans), each one short sentence in the user's language starting with \
"L'utilisateur" or "The user", with a snake_case key naming the slot \
(preferred_course_day, city, budget…); reuse a known key when the fact changes it, and \
set supersedes true.
Never keep: greetings, thanks, politeness, questions the user asks, clarifications, \
attempts the user abandons, what only the assistant says.
Nothing durable: {"profile": [], "facts": []}"""

_EXAMPLES: tuple[tuple[str, dict[str, Any]], ...] = (
    (
        "User: Bonjour ! Je m'appelle Léa, je débute en programmation. Je préfère les cours "
        "de yoga le mardi soir.\nAssistant: Enchantée Léa ! Le yoga du mardi soir est à 19 h.",
        {
            "profile": [
                {"key": "language", "value": "fr", "source": "inferred", "confidence": 0.9},
                {"key": "technical_level", "value": "beginner", "source": "stated",
                 "confidence": 0.9},
                {"key": "topics", "value": "yoga, programmation", "source": "inferred",
                 "confidence": 0.6},
            ],
            "facts": [
                {"text": "L'utilisateur s'appelle Léa.", "key": "name", "supersedes": False},
                {"text": "L'utilisateur préfère les cours de yoga le mardi soir.",
                 "key": "preferred_course_day", "supersedes": False},
            ],
        },
    ),
    (
        "User: Merci ! Euh, c'était quoi l'horaire déjà ?\nAssistant: 19 h, le mardi.",
        {"profile": [], "facts": []},
    ),
    (
        "Known keys: city, preferred_course_day\nUser: I moved to Berlin last month, keep "
        "answers short please.\nAssistant: Noted, Berlin it is.",
        {
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

_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "profile": {
            "type": "array",
            "maxItems": 6,
            "items": {
                "type": "object",
                "properties": {
                    "key": {"type": "string", "minLength": 1, "maxLength": 40},
                    "value": {"type": "string", "minLength": 1, "maxLength": 80},
                    "source": {"type": "string", "enum": ["stated", "inferred"]},
                    "confidence": {"type": "number"},
                },
                "required": ["key", "value", "source", "confidence"],
            },
        },
        "facts": {
            "type": "array",
            "maxItems": 6,
            "items": {
                "type": "object",
                "properties": {
                    "text": {"type": "string", "minLength": 3, "maxLength": 160},
                    "key": {"type": "string", "maxLength": 40},
                    "supersedes": {"type": "boolean"},
                },
                "required": ["text", "key", "supersedes"],
            },
        },
    },
    "required": ["profile", "facts"],
}
_RESPONSE_FORMAT = {"type": "json_schema", "json_schema": {"name": "longterm", "schema": _SCHEMA}}


def _turn_text(human: str, ai: str, known_keys: Sequence[str]) -> str:
    for name, value in (("human", human), ("ai", ai)):
        if not isinstance(value, str):
            raise InvalidInputError(f"{name} must be a string, got {type(value).__name__}")
    if not human.strip():
        raise InvalidInputError("the human message is empty: there is nothing to extract")
    head = f"Known keys: {', '.join(list(known_keys)[:15])}\n" if known_keys else ""
    return f"{head}User: {human.strip()}\nAssistant: {ai.strip()}"


def parse_extraction(raw: str, calls: int) -> LongTermExtraction | None:
    """The extraction in a model answer, or ``None`` when the answer is unusable."""
    try:
        data = parse_json_object(raw)
    except MalformedOutputError:
        return None
    profile_items, fact_items = data.get("profile", []), data.get("facts", [])
    if not isinstance(profile_items, list) or not isinstance(fact_items, list):
        return None
    if "profile" not in data and "facts" not in data:
        return None
    profile: list[ProfileEntry] = []
    facts: list[FactCandidate] = []
    rejected: list[str] = []
    for item in profile_items:
        try:
            if not isinstance(item, Mapping):
                raise InvalidInputError("not an object")
            confidence = item.get("confidence", 0.7)
            if isinstance(confidence, (int, float)) and not isinstance(confidence, bool):
                confidence = min(1.0, max(0.0, float(confidence)))
            source = str(item.get("source") or "inferred").strip().lower()
            profile.append(
                ProfileEntry(
                    str(item.get("key", "")),
                    item.get("value", ""),
                    source=source if source in ("stated", "inferred") else "inferred",
                    confidence=confidence,
                )
            )
        except InvalidInputError as exc:
            rejected.append(f"profile item {json.dumps(item, ensure_ascii=False)[:120]}: {exc}")
    for item in fact_items:
        try:
            if not isinstance(item, Mapping):
                raise InvalidInputError("not an object")
            key = item.get("key")
            facts.append(
                FactCandidate(
                    item.get("text", ""),  # checked by FactCandidate
                    key=str(key) if isinstance(key, str) and key.strip() else None,
                    supersedes=bool(item.get("supersedes", False)),
                )
            )
        except InvalidInputError as exc:
            rejected.append(f"fact item {json.dumps(item, ensure_ascii=False)[:120]}: {exc}")
    if rejected:
        log.warning("long-term extraction: %d unusable item(s): %s", len(rejected), rejected)
    return LongTermExtraction(tuple(profile), tuple(facts), calls, tuple(rejected), raw)


class LongTermExtractor:
    """Profile updates and facts of a turn with ONE chat-model call.

    Args:
        model: any LangChain chat model (the embedded ``ChatLlamaCpp`` by default in
            memory_chains).
        structured: pass the JSON schema as ``response_format`` (llama.cpp and OpenAI
            honour it); False for models that reject it.
        max_tokens: cap of the answer; a truncated answer is repaired.
        retries: extra calls after an unusable answer (1 by default).

    Attributes:
        calls: model calls made so far.

    Raises:
        ModelCallError: from :meth:`extract` when the model call fails.
        MalformedOutputError: from :meth:`extract` when no answer was usable.

    Example:
        >>> from memory_chains.testing import ScriptedChatModel
        >>> bad = LongTermExtractor(ScriptedChatModel(replies=["oops", "nope"]))
        >>> try:
        ...     bad.extract("Je préfère le thé.")
        ... except MalformedOutputError as exc:
        ...     exc.raw, bad.calls
        ('nope', 2)
    """

    def __init__(
        self, model: Any, *, structured: bool = True, max_tokens: int = 320, retries: int = 1
    ) -> None:
        if retries < 0 or max_tokens < 32:
            raise InvalidInputError("retries must be >= 0 and max_tokens >= 32")
        self.model = model
        self.structured = structured
        self.max_tokens = max_tokens
        self.retries = retries
        self.calls = 0
        self._prefix = self._build_prefix()

    @staticmethod
    def _build_prefix() -> tuple[tuple[str, str], ...]:
        prefix = [("system", _INSTRUCTIONS)]
        for text, answer in _EXAMPLES:
            prefix.append(("user", text))
            prefix.append(("assistant", json.dumps(answer, ensure_ascii=False)))
        return tuple(prefix)

    def extract(
        self, human: str, ai: str = "", known_keys: Sequence[str] = ()
    ) -> LongTermExtraction:
        """Extract from one turn (``known_keys``: fact slots already in memory)."""
        return run(self._steps(human, ai, known_keys), self.model)

    async def aextract(
        self, human: str, ai: str = "", known_keys: Sequence[str] = ()
    ) -> LongTermExtraction:
        """Async :meth:`extract` (only the model call differs)."""
        return await arun(self._steps(human, ai, known_keys), self.model)

    def _steps(
        self, human: str, ai: str, known_keys: Sequence[str]
    ) -> Generator[Call, Any, LongTermExtraction]:
        # Not a generator itself: a bad turn raises here, before any call.
        call = Call(
            chat_messages(self._prefix, _turn_text(human, ai, known_keys)),
            call_options(self.max_tokens, _RESPONSE_FORMAT if self.structured else None),
        )
        return attempts(
            call,
            self._judge,
            retries=self.retries,
            what="long-term extraction",
            give_up=self._give_up,
        )

    def _judge(self, raw: str, calls: int) -> LongTermExtraction | None:
        self.calls += 1
        return parse_extraction(raw, calls)

    def _give_up(self, raw: str) -> MalformedOutputError:
        return MalformedOutputError(
            f"the model's long-term extraction was not usable JSON after {self.retries + 1} "
            "call(s); the turn was not memorised: observe it again, or use "
            "RuleLongTermExtractor as a fallback",
            raw=raw,
        )


# -- rules -------------------------------------------------------------------------------
_END = r"(?=\s*(?:[.!?;]|,\s*(?:et|mais|and|but)\b|\bet\b|\bmais\b|\band\b|\bbut\b|$))"
_NAME_FR = re.compile(r"\b[Jj]e m[’']appelle\s+([A-ZÀ-Ý][\w\-]*(?:\s+[A-ZÀ-Ý][\w\-]*){0,2})")
_NAME_EN = re.compile(r"\b[Mm]y name is\s+([A-Z][\w\-]*(?:\s+[A-Z][\w\-]*){0,2})")
_PREFER_FR = re.compile(r"(?i)\bje (?:préfère|prefere)\s+(.{3,90}?)" + _END)
_PREFER_EN = re.compile(r"(?i)\bI (?:prefer|like)\s+(.{3,90}?)" + _END)
_MY_FR = re.compile(
    r"(?i)\b(mon|ma|mes)\s+([\w\-]+(?:\s+[\w\-]+){0,2}?)\s+(est|sont)\s+(.{1,80}?)" + _END
)
_MY_EN = re.compile(r"(?i)\bmy\s+([\w\-]+(?:\s+[\w\-]+){0,2}?)\s+(is|are)\s+(.{1,80}?)" + _END)
# Adverbs around a value ("Ma ville est Nantes maintenant.", "my city is now Paris"): they say
# that or when the fact changed, not what it is, and would make the same slot look different.
_ADVERB = (
    r"(?:maintenant|désormais|desormais|dorénavant|dorenavant|à présent|a present|"
    r"actuellement|en ce moment|aussi|également|egalement|now|nowadays|these days|too|"
    r"also|as well|anymore|any more)"
)
# Lower case only: a capitalised "Maintenant ou jamais" or "Before Now" is a name, kept whole.
_TRAILING_ADVERBS = re.compile(r"(?:[\s,]+" + _ADVERB + r")+\s*$")
_LEADING_ADVERBS = re.compile(r"^\s*(?:" + _ADVERB + r"[\s,]+)+")
_LEVEL_FR = re.compile(
    r"(?i)\bje (?:suis|débute|debute)\s*(?:un |une |plutôt |vraiment |complètement )?"
    r"(débutante?|debutante?|expert|experte|intermédiaire|intermediaire|avancée?|en\b)"
)
_LEVEL_EN = re.compile(r"(?i)\bI(?:'m| am) (?:a |an )?(beginner|novice|expert|intermediate)")


def _value(text: str) -> str:
    """``text`` without time or additive adverbs around it (unless nothing else is left)."""
    return _LEADING_ADVERBS.sub("", _TRAILING_ADVERBS.sub("", text)).strip() or text


class RuleLongTermExtractor:
    """A model-free extractor: a few patterns on the human message, no model call.

    Finds names ("je m'appelle …", "my name is …"), preferences ("je préfère …"),
    "mon/ma/mes X est/sont Y" ("my X is Y") as a fact keyed X, the technical level ("je
    suis débutant", "I'm an expert") and the language (inferred from common words).
    Adverbs ending (or starting) a value, such as "maintenant", "désormais", "aussi", "now",
    "too" or "anymore", are left out of it.

    Example:
        >>> x = RuleLongTermExtractor().extract("Je m'appelle Paul et ma ville est Lille.")
        >>> for fact in x.facts:
        ...     print(fact.key, "|", fact.text)
        name | L'utilisateur s'appelle Paul.
        ville | La ville de l'utilisateur est Lille.
        >>> [(e.key, e.value, e.source) for e in x.profile]
        [('language', 'fr', 'inferred')]
        >>> RuleLongTermExtractor().extract("Ma ville est Nantes maintenant.").facts[0].text
        "La ville de l'utilisateur est Nantes."
    """

    def extract(
        self, human: str, ai: str = "", known_keys: Sequence[str] = ()
    ) -> LongTermExtraction:
        """Extract from one turn (the AI reply and ``known_keys`` are not used)."""
        _turn_text(human, ai, ())
        facts: list[FactCandidate] = []
        profile: list[ProfileEntry] = []
        for m in _NAME_FR.finditer(human):
            facts.append(FactCandidate(f"L'utilisateur s'appelle {m.group(1)}.", key="name"))
        for m in _NAME_EN.finditer(human):
            facts.append(FactCandidate(f"The user's name is {m.group(1)}.", key="name"))
        for m in _PREFER_FR.finditer(human):
            facts.append(FactCandidate(f"L'utilisateur préfère {_value(m.group(1))}."))
        for m in _PREFER_EN.finditer(human):
            facts.append(FactCandidate(f"The user prefers {_value(m.group(1))}."))
        for m in _MY_FR.finditer(human):
            det = {"mon": "Le", "ma": "La", "mes": "Les"}[m.group(1).lower()]
            what, verb, value = m.group(2), m.group(3).lower(), _value(m.group(4))
            if det == "Le" and fold(what)[:1] in "aeiouh":
                text = f"L'{what} de l'utilisateur {verb} {value}."
            else:
                text = f"{det} {what} de l'utilisateur {verb} {value}."
            facts.append(FactCandidate(text, key=normalize_key(what)))
        for m in _MY_EN.finditer(human):
            what, verb, value = m.group(1), m.group(2).lower(), _value(m.group(3))
            facts.append(
                FactCandidate(f"The user's {what} {verb} {value}.", key=normalize_key(what))
            )
        facts = list({fold(f.text): f for f in reversed(facts)}.values())[::-1]  # dedupe
        level = _LEVEL_FR.search(human) or _LEVEL_EN.search(human)
        if level:
            word = fold(level.group(1))
            value = "beginner" if word == "en" else word
            profile.append(ProfileEntry("technical_level", value, source="stated", confidence=0.9))
        fr, en = language_votes(human)
        if max(fr, en) >= 2 and fr != en:
            language = "fr" if fr > en else "en"
            profile.insert(0, ProfileEntry("language", language, confidence=0.6))
        return LongTermExtraction(tuple(profile), tuple(facts))

    async def aextract(
        self, human: str, ai: str = "", known_keys: Sequence[str] = ()
    ) -> LongTermExtraction:
        """Async :meth:`extract` (pure computation, no I/O)."""
        return self.extract(human, ai, known_keys)
