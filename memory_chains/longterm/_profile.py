"""The user's profile: preferences with a confidence, a source and a history.

:class:`UserProfile` is an immutable snapshot of one user's :class:`ProfileEntry` records;
:meth:`UserProfile.apply` returns a new snapshot with updates merged by these rules
(:func:`merge_entry`):

* a value the user **stated** beats an **inferred** one, whatever their confidences;
* between two stated values the newer wins; between two inferred values the one with the
  higher (or equal, newer) confidence wins;
* the replaced value is kept in the entry's ``history`` (last 5);
* ``topics`` is a list: new topics are added to the known ones (last 12 kept).

Each entry is one document of the store under ``("profile", user_id)`` whose key is the
preference key, so :func:`~memory_chains.stores.forget_user` and
:func:`~memory_chains.stores.export_user` cover it. Standard keys: ``language``
(``fr``, ``en``…), ``technical_level`` (``beginner``, ``intermediate``, ``expert``),
``topics`` and ``communication_style``; any other snake_case key is accepted.
:func:`profile_instructions` turns a profile into instructions for the answer prompt.

Example:
    >>> p = UserProfile("alice")
    >>> p, changed = p.apply([ProfileEntry("language", "français", source="inferred",
    ...                                    confidence=0.6, updated_at=1.0)])
    >>> p.value("language"), changed
    ('fr', ('language',))
    >>> p, changed = p.apply([ProfileEntry("language", "en", source="inferred",
    ...                                    confidence=0.5, updated_at=2.0)])
    >>> p.value("language"), changed
    ('fr', ())
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from memory_chains._folding import fold
from memory_chains.errors import InvalidInputError, StoreError

if TYPE_CHECKING:
    from memory_chains.stores import BaseStore

__all__ = [
    "PROFILE_NAMESPACE",
    "SOURCES",
    "STANDARD_KEYS",
    "ProfileEntry",
    "UserProfile",
    "merge_entry",
    "normalize_key",
    "profile_instructions",
]

#: first label of the profile documents' namespace: ``("profile", user_id)``.
PROFILE_NAMESPACE = "profile"
#: where a value comes from: the user said it, or it was deduced.
SOURCES = ("stated", "inferred")
#: keys every extractor knows; :func:`profile_instructions` uses the first, second and last.
STANDARD_KEYS = ("language", "technical_level", "topics", "communication_style")

_HISTORY = 5
_MAX_TOPICS = 12
_MAX_VALUE_CHARS = 200
_KEY_RE = re.compile(r"[^a-z0-9]+")

_LANGUAGES = {
    "fr": "fr", "francais": "fr", "french": "fr",
    "en": "en", "anglais": "en", "english": "en",
    "es": "es", "espagnol": "es", "spanish": "es", "espanol": "es",
    "de": "de", "allemand": "de", "german": "de", "deutsch": "de",
    "it": "it", "italien": "it", "italian": "it",
}  # fmt: skip
_LEVELS = {
    "beginner": "beginner", "debutant": "beginner", "debutante": "beginner",
    "novice": "beginner", "intermediate": "intermediate", "intermediaire": "intermediate",
    "expert": "expert", "experte": "expert", "advanced": "expert", "avance": "expert",
    "avancee": "expert",
}  # fmt: skip
_LANGUAGE_NAMES = {"fr": "French", "en": "English", "es": "Spanish", "de": "German",
                   "it": "Italian"}  # fmt: skip
_LEVEL_INSTRUCTIONS = {
    "beginner": "The user is a beginner: explain simply, define technical terms, no jargon.",
    "intermediate": "The user has an intermediate level: be clear, skip the basics.",
    "expert": "The user is an expert: be precise and technical, skip basic explanations.",
}
_STYLE_INSTRUCTIONS = (
    (("formel", "formal", "vouvoiement", "vouvoie", "professionnel", "professional"),
     "Use a formal, professional tone (vouvoiement in French)."),
    (("informel", "informal", "casual", "tutoiement", "tutoie", "detendu", "familier"),
     "Use a relaxed, friendly tone (tutoiement in French)."),
    (("concis", "concise", "court", "courte", "courtes", "short", "brief", "bref", "breve"),
     "Keep answers short and to the point."),
    (("detaille", "detailed", "long", "approfondi", "thorough"),
     "Give detailed, thorough answers."),
)  # fmt: skip


def normalize_key(key: object) -> str:
    """A profile key as stored: folded snake_case ASCII, 1-64 characters.

    Raises:
        InvalidInputError: not a string, or nothing left after normalisation.

    Example:
        >>> normalize_key("Niveau Technique")
        'niveau_technique'
    """
    if not isinstance(key, str):
        raise InvalidInputError(f"a profile key must be a string, got {type(key).__name__}")
    cleaned = _KEY_RE.sub("_", fold(key)).strip("_")[:64]
    if not cleaned:
        raise InvalidInputError(
            f"profile key {key[:40]!r} is empty once normalised: use letters or digits"
        )
    return cleaned


def _normalize_value(key: str, value: object) -> str | tuple[str, ...]:
    if key == "topics":
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, (list, tuple)):
            raise InvalidInputError("profile 'topics' must be a list of strings or a string")
        topics: dict[str, str] = {}
        for item in items:
            text = " ".join(str(item).split())[:80]
            if text and fold(text) not in topics:
                topics[fold(text)] = text
        return tuple(topics.values())[-_MAX_TOPICS:]
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise InvalidInputError(
            f"profile value of {key!r} must be a string or a number, got {type(value).__name__}"
        )
    text = " ".join(str(value).split())[:_MAX_VALUE_CHARS]
    if not text:
        raise InvalidInputError(f"profile value of {key!r} is empty")
    folded = fold(text)
    if key == "language":
        return _LANGUAGES.get(folded, text)
    if key == "technical_level":
        return _LEVELS.get(folded, text)
    return text


@dataclass(frozen=True)
class ProfileEntry:
    """One preference of the profile (also the shape of an update).

    Construction normalises the key (:func:`normalize_key`) and the value (``"français"``
    becomes ``"fr"`` for ``language``; ``topics`` becomes a tuple).

    Attributes:
        key: the preference key (``language``, ``preferred_course_day``…).
        value: a string, or a tuple of strings for ``topics``.
        source: ``"stated"`` (the user said it) or ``"inferred"``.
        confidence: 0-1.
        updated_at: UNIX time the value was observed.
        session_id: the session of the turn it comes from, if known.
        seq: that turn's position in the session, if known.
        history: the values it replaced, newest first, as small dicts.

    Raises:
        InvalidInputError: unknown source, confidence outside 0-1, empty value.

    Example:
        >>> ProfileEntry("Technical level", "Débutant", source="stated").value
        'beginner'
    """

    key: str
    value: str | tuple[str, ...]
    source: str = "inferred"
    confidence: float = 0.7
    updated_at: float = 0.0
    session_id: str | None = None
    seq: int | None = None
    history: tuple[Mapping[str, Any], ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        key = normalize_key(self.key)
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "value", _normalize_value(key, self.value))
        if self.source not in SOURCES:
            raise InvalidInputError(
                f"profile source must be 'stated' or 'inferred', got {self.source!r:.40}"
            )
        conf = self.confidence
        if isinstance(conf, bool) or not isinstance(conf, (int, float)) or not 0 <= conf <= 1:
            raise InvalidInputError(f"confidence must be between 0 and 1, got {conf!r:.40}")
        object.__setattr__(self, "confidence", float(conf))

    def to_json(self) -> dict[str, Any]:
        """The JSON document stored for this entry.

        Example:
            >>> ProfileEntry("topics", ["yoga"]).to_json()["value"]
            ['yoga']
        """
        return {
            "value": list(self.value) if isinstance(self.value, tuple) else self.value,
            "source": self.source,
            "confidence": self.confidence,
            "updated_at": self.updated_at,
            "session_id": self.session_id,
            "seq": self.seq,
            "history": [dict(h) for h in self.history],
        }

    @classmethod
    def from_json(cls, key: str, data: Mapping[str, Any]) -> ProfileEntry:
        """Rebuild an entry from :meth:`to_json`'s document.

        Raises:
            StoreError: the document is not a profile entry.

        Example:
            >>> ProfileEntry.from_json("language", {"value": "fr"}).source
            'inferred'
        """
        try:
            return cls(
                key,
                data["value"],
                source=data.get("source", "inferred"),
                confidence=data.get("confidence", 0.7),
                updated_at=float(data.get("updated_at") or 0.0),
                session_id=data.get("session_id"),
                seq=data.get("seq"),
                history=tuple(h for h in data.get("history", ()) if isinstance(h, Mapping)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise StoreError(f"profile document {key!r} is not a profile entry: {exc}") from exc


def _same(a: str | tuple[str, ...], b: str | tuple[str, ...]) -> bool:
    if isinstance(a, tuple) or isinstance(b, tuple):
        return isinstance(a, tuple) and isinstance(b, tuple) and [*map(fold, a)] == [*map(fold, b)]
    return fold(a) == fold(b)


def merge_entry(old: ProfileEntry | None, new: ProfileEntry) -> ProfileEntry | None:
    """The entry to store after observing ``new``, or ``None`` when nothing changes.

    Example:
        >>> old = ProfileEntry("day", "samedi", source="stated", updated_at=1.0)
        >>> merge_entry(old, ProfileEntry("day", "lundi", confidence=0.99, updated_at=2.0))
        >>> merged = merge_entry(old, ProfileEntry("day", "lundi", source="stated",
        ...                                        updated_at=2.0))
        >>> merged.value, merged.history[0]["value"]
        ('lundi', 'samedi')
    """
    if old is None:
        return new
    if new.key != old.key:
        raise InvalidInputError(f"cannot merge profile key {new.key!r} into {old.key!r}")
    source = "stated" if "stated" in (old.source, new.source) else "inferred"
    if isinstance(old.value, tuple) and isinstance(new.value, tuple):  # topics: union
        known = {fold(t) for t in old.value}
        added = tuple(t for t in new.value if fold(t) not in known)
        if not added and source == old.source and new.confidence <= old.confidence:
            return None
        return replace(
            old,
            value=(*old.value, *added)[-_MAX_TOPICS:],
            source=source,
            confidence=max(old.confidence, new.confidence),
            updated_at=max(old.updated_at, new.updated_at),
            session_id=new.session_id,
            seq=new.seq,
        )
    if _same(old.value, new.value):
        if source == old.source and new.confidence <= old.confidence:
            return None
        return replace(
            old,
            source=source,
            confidence=max(old.confidence, new.confidence),
            updated_at=max(old.updated_at, new.updated_at),
        )
    if old.source == "stated" and new.source == "inferred":
        return None
    if new.updated_at < old.updated_at and new.source == old.source:
        return None  # an older observation arriving late never overwrites a newer one
    if new.source == old.source == "inferred" and new.confidence < old.confidence:
        return None
    previous = {
        "value": list(old.value) if isinstance(old.value, tuple) else old.value,
        "source": old.source,
        "confidence": old.confidence,
        "updated_at": old.updated_at,
    }
    return replace(new, history=(previous, *old.history)[:_HISTORY])


@dataclass(frozen=True)
class UserProfile:
    """An immutable snapshot of one user's profile.

    Args:
        user_id: whose profile it is.
        entries: preference key -> :class:`ProfileEntry`.

    Example:
        >>> from memory_chains.stores import InMemoryStore
        >>> store = InMemoryStore()
        >>> p, keys = UserProfile("bob").apply([ProfileEntry("topics", "yoga, pilates")])
        >>> p.save(store, keys)
        >>> UserProfile.load(store, "bob").value("topics")
        ('yoga', 'pilates')
    """

    user_id: str
    entries: Mapping[str, ProfileEntry] = field(default_factory=dict)

    # -- reading ------------------------------------------------------------------------
    def get(self, key: str) -> ProfileEntry | None:
        """The entry of ``key`` (normalised), or ``None``."""
        return self.entries.get(normalize_key(key))

    def value(self, key: str, default: Any = None) -> Any:
        """The value of ``key``, or ``default``."""
        entry = self.get(key)
        return default if entry is None else entry.value

    def __len__(self) -> int:
        return len(self.entries)

    def as_dict(self) -> dict[str, str | list[str]]:
        """``{key: value}`` of every entry (lists for ``topics``).

        Example:
            >>> UserProfile("x").as_dict()
            {}
        """
        return {
            k: list(e.value) if isinstance(e.value, tuple) else e.value
            for k, e in sorted(self.entries.items())
        }

    def ordered(self) -> list[ProfileEntry]:
        """Entries by importance: standard keys first, then stated, then by confidence."""

        def rank(e: ProfileEntry) -> tuple[int, int, float, str]:
            std = STANDARD_KEYS.index(e.key) if e.key in STANDARD_KEYS else len(STANDARD_KEYS)
            return (std, 0 if e.source == "stated" else 1, -e.confidence, e.key)

        return sorted(self.entries.values(), key=rank)

    def render(
        self, max_tokens: int = 120, *, token_counter: Callable[[str], int] | None = None
    ) -> str:
        """A short block for a prompt, within ``max_tokens`` ("" when empty or no room).

        Lines are added by importance (:meth:`ordered`) while they fit.

        Example:
            >>> p, _ = UserProfile("x").apply([ProfileEntry("language", "fr", source="stated")])
            >>> print(p.render())
            User profile:
            - language: fr
        """
        if max_tokens < 0:
            raise InvalidInputError(f"max_tokens must be zero or positive, got {max_tokens}")
        if token_counter is None:
            from memory_chains.providers import approximate_token_count

            token_counter = approximate_token_count
        lines = ["User profile:"]
        for entry in self.ordered():
            value = ", ".join(entry.value) if isinstance(entry.value, tuple) else entry.value
            line = f"- {entry.key}: {value}" + (" (inferred)" if entry.source == "inferred" else "")
            if token_counter("\n".join([*lines, line])) > max_tokens:
                continue  # a shorter, less important line may still fit
            lines.append(line)
        return "\n".join(lines) if len(lines) > 1 else ""

    # -- updating -----------------------------------------------------------------------
    def apply(self, updates: Iterable[ProfileEntry]) -> tuple[UserProfile, tuple[str, ...]]:
        """A new profile with ``updates`` merged (:func:`merge_entry`), and the changed keys.

        ``self`` is not modified.
        """
        entries = dict(self.entries)
        changed: list[str] = []
        for update in updates:
            if not isinstance(update, ProfileEntry):
                raise InvalidInputError(f"profile updates must be ProfileEntry, got {update!r:.60}")
            merged = merge_entry(entries.get(update.key), update)
            if merged is not None:
                entries[update.key] = merged
                if update.key not in changed:
                    changed.append(update.key)
        if not changed:
            return self, ()
        return UserProfile(self.user_id, entries), tuple(changed)

    # -- persistence --------------------------------------------------------------------
    @staticmethod
    def namespace(user_id: str) -> tuple[str, str]:
        """``("profile", user_id)``: where the entries are stored.

        Example:
            >>> UserProfile.namespace("alice")
            ('profile', 'alice')
        """
        return (PROFILE_NAMESPACE, user_id)

    @classmethod
    def load(cls, store: BaseStore, user_id: str) -> UserProfile:
        """Read a user's profile from ``store`` (empty when there is none).

        Raises:
            StoreError: a stored document is not a profile entry.
        """
        from memory_chains.stores import validate_id

        validate_id(user_id, "user_id")
        docs = store.list(cls.namespace(user_id))
        entries = {
            d.key: ProfileEntry.from_json(d.key, d.value)
            for d in docs
            if d.namespace == cls.namespace(user_id)
        }
        return cls(user_id, entries)

    def save(self, store: BaseStore, keys: Iterable[str] | None = None) -> None:
        """Write the entries of ``keys`` (all by default) to ``store``, one document each."""
        for key in self.entries if keys is None else keys:
            entry = self.entries[normalize_key(key)]
            store.put(self.namespace(self.user_id), entry.key, entry.to_json())


def profile_instructions(profile: UserProfile) -> str:
    """Instructions for the answer prompt adapted to the profile (language, level, tone).

    A pure function: unknown or missing values add nothing; ``""`` for an empty profile.

    Example:
        >>> p, _ = UserProfile("x").apply([
        ...     ProfileEntry("language", "français", source="stated"),
        ...     ProfileEntry("technical_level", "débutant"),
        ...     ProfileEntry("communication_style", "formel")])
        >>> print(profile_instructions(p))
        Answer in French.
        The user is a beginner: explain simply, define technical terms, no jargon.
        Use a formal, professional tone (vouvoiement in French).
    """
    lines: list[str] = []
    language = profile.value("language")
    if isinstance(language, str) and language:
        lines.append(f"Answer in {_LANGUAGE_NAMES.get(language, language)}.")
    level = profile.value("technical_level")
    if isinstance(level, str) and level in _LEVEL_INSTRUCTIONS:
        lines.append(_LEVEL_INSTRUCTIONS[level])
    style = profile.value("communication_style")
    if isinstance(style, str):
        words = set(re.findall(r"[a-z]+", fold(style)))
        lines.extend(text for marks, text in _STYLE_INSTRUCTIONS if words & set(marks))
    return "\n".join(lines)
