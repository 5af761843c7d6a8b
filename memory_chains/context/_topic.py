"""Topic changes: :class:`TopicTracker`, :class:`TopicChange`, :func:`detect_topic_change`
and :func:`history_since_topic_start`.

A question changes the subject when, in this order of precedence:

1. it carries an explicit marker ("changeons de sujet", "autre question", "by the way",
   "revenons à…", "back to…"): a change, whatever else it says;
2. it depends on the conversation (:func:`memory_chains.rewrite._detect.analyse` finds a
   pronoun, an ellipsis such as "Et pour le samedi ?", a bare fragment): never a change;
3. it is standalone and shares too few content words with the recent turns (and, when
   embeddings are given, is not similar enough to them either): a change. A weak opener
   ("sinon", "anyway") lowers the bar.

Everything is deterministic; nothing is stored. :meth:`TopicTracker.topic_start` replays
the detection over a history to find where the current topic began, so that the context
builder and a query rewriter can both leave the previous topic out.

Example:
    >>> turns = [("Quelle est votre politique de retour ?", "30 jours.")]
    >>> detect_topic_change(turns, "Et pour les produits électroniques ?").changed
    False
    >>> detect_topic_change(turns, "Quels sont les horaires du cours de Pilates ?").changed
    True
"""

from __future__ import annotations

import functools
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage

from memory_chains._folding import fold
from memory_chains._history import canonical_role, message_text
from memory_chains._terms import STOP_WORDS
from memory_chains.errors import InvalidInputError
from memory_chains.providers import E5Embeddings
from memory_chains.rewrite import analyse

__all__ = [
    "DEFAULT_SIMILARITY_THRESHOLD",
    "TopicChange",
    "TopicTracker",
    "detect_topic_change",
    "history_since_topic_start",
    "similarity_threshold_of",
    "to_exchanges",
]

#: Cosine similarity (question vs. a recent exchange, both embedded as queries) below which
#: a standalone question counts as a new subject with ``E5Embeddings``, between the
#: similarities of same-topic and new-topic questions. ``memory-chains eval topics
#: --embeddings`` measures those ranges, the accuracy at this threshold and the threshold that
#: best separates them on the packaged cases (``--dataset`` for others; ``--threshold`` to try
#: one). It belongs to those embeddings: ``E5Embeddings.topic_similarity_threshold`` carries
#: it, and other embeddings need their own (see :func:`similarity_threshold_of`).
DEFAULT_SIMILARITY_THRESHOLD = E5Embeddings.topic_similarity_threshold


def similarity_threshold_of(embeddings: Any) -> float | None:
    """The topic-change threshold calibrated for ``embeddings``, or ``None``.

    Embeddings carry it as a ``topic_similarity_threshold`` attribute (set it on your own
    class once ``memory-chains eval topics --embeddings`` has measured it); a wrapper that
    has none gives its ``inner`` embeddings' one.

    Example:
        >>> from memory_chains.providers import E5Embeddings
        >>> from memory_chains.testing import HashEmbeddings
        >>> similarity_threshold_of(E5Embeddings()), similarity_threshold_of(HashEmbeddings())
        (0.852, None)
    """
    seen = 0
    while embeddings is not None and seen < 8:
        value = getattr(embeddings, "topic_similarity_threshold", None)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        embeddings, seen = getattr(embeddings, "inner", None), seen + 1
    return None


# Folded, so accents do not matter. A strong marker announces a new subject by itself.
_STRONG = (
    r"changeons de sujet|changer de sujet|changement de sujet|autre sujet|autre question|"
    r"nouvelle question|question differente|rien a voir|sans rapport|au fait|par ailleurs|"
    r"by the way|\bbtw\b|another question|different question|new question|unrelated|"
    r"change of subject|changing the subject|change the subject|different topic|"
    r"on another note|switching topics?"
)
_RETURN = r"revenons (a|au|aux|sur)\b|pour revenir (a|au|aux|sur)\b|(going |go |get )?back to\b"
_WEAK = r"^\s*(sinon|d['’]ailleurs|anyway|otherwise|also)\b[\s,:]*"
_STRONG_RE = re.compile(_STRONG)
_RETURN_RE = re.compile(_RETURN)
_WEAK_RE = re.compile(_WEAK, re.IGNORECASE)

_WORD = re.compile(r"[a-z0-9]+(?:['-][a-z0-9]+)*")
# The function words, and the words of a request that carry no subject ("je voudrais
# savoir", "can you tell me"); this module's word pattern keeps elisions whole ("c'est").
_REQUEST_WORDS = """
    c'est qu'est-ce est-ce faut dire sais savoir voudrais veux cherche merci bonjour
    want need know tell hello
    """
_STOP = STOP_WORDS | frozenset(_REQUEST_WORDS.split())


def _stem(word: str) -> str:
    return word.rstrip("sx")[:6]


# Nouns naming an attribute of something: "Quelle est la garantie ?" asks about a thing
# it does not name.
_ATTRIBUTES = (
    "garantie|prix|tarif|tarifs|coût|durée|taille|poids|couleur|couleurs|autonomie|écran|"
    "batterie|horaire|horaires|adresse|capacité|dimensions|version|modèle|processeur|mémoire|"
    "stockage|note|avis|délai|délais|niveau|fréquence|"
    "warranty|price|cost|size|weight|color|colour|battery|screen|schedule|address|capacity|"
    "version|model|processor|memory|storage|rating|level|duration"
)
_ATTRIBUTE_STEMS = frozenset(_stem(fold(w)) for w in _ATTRIBUTES.split("|"))


@functools.lru_cache(maxsize=4096)  # the recent turns are read again at every request
def content_words(text: str) -> frozenset[str]:
    """Stems of the words of ``text`` that carry a subject (folded, no function words).

    Example:
        >>> sorted(content_words("Quels sont les horaires du cours de Pilates ?"))
        ['cour', 'horair', 'pilate']
    """
    words = _WORD.findall(fold(text).replace("’", "'"))
    return frozenset(_stem(w) for w in words if len(w) > 2 and w not in _STOP and not w.isdigit())


@dataclass(frozen=True)
class TopicChange:
    """What :meth:`TopicTracker.detect` decided about a question.

    Attributes:
        changed: True when the question starts a new subject.
        reasons: the signals behind the decision, in plain words.
        overlap: share of the question's content words found in the recent turns
            (1.0 when the question has none).
        similarity: highest embedding similarity with a recent exchange (None without
            embeddings or when not needed).
        returning: the question announces a return to an earlier subject ("revenons à").

    Example:
        >>> TopicChange(True, ("marker 'by the way'",)).changed
        True
    """

    changed: bool
    reasons: tuple[str, ...] = ()
    overlap: float = 1.0
    similarity: float | None = None
    returning: bool = False


class TopicTracker:
    """Detects when the user changes subject (pure and deterministic; stores nothing).

    Args:
        embeddings: optional LangChain ``Embeddings`` (e.g. ``E5Embeddings``); when given
            with a threshold, a standalone question with few shared words is a change only
            if it is also dissimilar to the recent exchanges. Without a threshold they are
            not asked (the words decide), since a cosine means nothing across models.
        window: how many recent exchanges the question is compared with.
        min_overlap: below this share of shared content words, a standalone question may
            be a new subject.
        similarity_threshold: the cosine below which the question is dissimilar; by
            default the one the embeddings carry (:func:`similarity_threshold_of`: 0.852
            for ``E5Embeddings``, :data:`DEFAULT_SIMILARITY_THRESHOLD`), none for others.

    Example:
        >>> tracker = TopicTracker()
        >>> history = [("Quels sont les horaires du cours de Pilates ?", "Mardi 12h30."),
        ...            ("Et pour le samedi ?", "Pas de Pilates le samedi."),
        ...            ("Changeons de sujet : livrez-vous en Belgique ?", "Oui.")]
        >>> tracker.topic_start(history)
        2
        >>> tracker.detect(history[:1], "Le cours de Pilates a-t-il lieu le samedi ?").changed
        False
    """

    def __init__(
        self,
        embeddings: Any = None,
        *,
        window: int = 2,
        min_overlap: float = 0.2,
        similarity_threshold: float | None = None,
    ) -> None:
        if isinstance(window, bool) or not isinstance(window, int) or window < 1:
            raise InvalidInputError(f"window must be an integer >= 1, got {window!r}")
        if not 0.0 <= min_overlap <= 1.0:
            raise InvalidInputError(f"min_overlap must be between 0 and 1, got {min_overlap!r}")
        if embeddings is not None and not hasattr(embeddings, "embed_query"):
            raise InvalidInputError("embeddings must be a LangChain Embeddings (embed_query)")
        self.embeddings = embeddings
        self.window = window
        self.min_overlap = min_overlap
        if similarity_threshold is None:
            similarity_threshold = similarity_threshold_of(embeddings)
        elif (
            isinstance(similarity_threshold, bool)
            or not isinstance(similarity_threshold, int | float)
            or not -1.0 <= similarity_threshold <= 1.0
        ):
            raise InvalidInputError(
                f"similarity_threshold must be a cosine between -1 and 1, got "
                f"{similarity_threshold!r}"
            )
        self.similarity_threshold = similarity_threshold
        self._vectors: OrderedDict[str, list[float]] = OrderedDict()
        self._lock = threading.Lock()

    def detect(self, previous_turns: Sequence[Any], question: str) -> TopicChange:
        """Does ``question`` change the subject of ``previous_turns``?

        Args:
            previous_turns: the conversation so far: ``(human, ai)`` pairs, stored
                :class:`~memory_chains.stores.Turn` objects, LangChain messages or
                ``(role, text)`` pairs (see :func:`to_exchanges`).
            question: the new question.
        """
        if not isinstance(question, str):
            raise InvalidInputError(f"question must be a string, got {type(question).__name__}")
        recent = to_exchanges(previous_turns)[-self.window :]
        return self._detect(recent, question)

    def _detect(self, recent: Sequence[tuple[str, str]], question: str) -> TopicChange:
        if not recent or not question.strip():
            return TopicChange(False, ("no previous turn",) if not recent else ("no question",))
        folded = fold(question).replace("’", "'")
        strong = _STRONG_RE.search(folded) or _RETURN_RE.search(folded)
        if strong:
            returning = bool(_RETURN_RE.search(folded))
            return TopicChange(True, (f"marker {strong.group(0)!r}",), returning=returning)
        weak = _WEAK_RE.match(question)
        rest = question[weak.end() :] if weak else question
        detection = analyse(rest)
        words = content_words(rest)
        # "no subject" alone is a follow-up only when the question asks about an attribute
        # ("Quelle est la garantie ?"), not when it names a thing ("When are the yoga classes?")
        weak_subject = detection.reasons == ("no subject",) and not words <= _ATTRIBUTE_STEMS
        if not detection.standalone and not weak_subject:
            return TopicChange(False, ("follow-up: " + ", ".join(detection.reasons),))
        seen = frozenset().union(*(content_words(f"{h} {a}") for h, a in recent))
        overlap = len(words & seen) / len(words) if words else 1.0
        bar = 0.5 if weak else self.min_overlap
        reasons = [f"standalone, {overlap:.0%} of its words in the recent turns"]
        if weak:
            reasons.insert(0, f"opener {weak.group(0).strip(' ,:')!r}")
        if overlap >= bar:
            return TopicChange(False, tuple(reasons), overlap)
        threshold = self.similarity_threshold
        if self.embeddings is None or threshold is None:
            if self.embeddings is not None:
                reasons.append("no similarity threshold for these embeddings")
            return TopicChange(True, tuple(reasons), overlap)
        similarity = max(self.similarity(rest, f"{h} {a}") for h, a in recent)
        reasons.append(f"similarity {similarity:.3f} vs threshold {threshold}")
        changed = similarity < threshold
        return TopicChange(changed, tuple(reasons), overlap, similarity)

    def topic_start(self, turns: Sequence[Any], question: str | None = None) -> int:
        """Index of the first exchange of the current topic in ``turns``.

        With ``question``, returns ``len(turns)`` when the question itself starts a new
        topic (nothing of the history belongs to it).
        """
        exchanges = to_exchanges(turns)
        start = 0
        for i in range(1, len(exchanges)):
            if self._detect(exchanges[max(0, i - self.window) : i], exchanges[i][0]).changed:
                start = i
        if (
            question is not None
            and exchanges
            and self._detect(exchanges[-self.window :], question).changed
        ):
            start = len(exchanges)
        return start

    def history_since_topic_start(
        self, history: Sequence[Any], question: str | None = None
    ) -> list[Any]:
        """The items of ``history`` from the start of the current topic, in their own shape.

        ``history`` may hold exchanges (``(human, ai)`` pairs, stored turns) or messages
        (LangChain messages, ``(role, text)`` pairs): what comes back is a suffix of it,
        so a query rewriter can use it exactly as it used the whole history.
        """
        items = list(history)
        starts = _exchange_starts(items)
        start = self.topic_start(items, question)
        return items[starts[start] :] if start < len(starts) else []

    def similarity(self, a: str, b: str) -> float:
        """Cosine similarity of two texts, both embedded as queries (needs embeddings)."""
        if self.embeddings is None:
            raise InvalidInputError("this TopicTracker has no embeddings: pass embeddings=...")
        va, vb = self._vector(a), self._vector(b)
        dot = sum(x * y for x, y in zip(va, vb, strict=False))
        norm = math.sqrt(sum(x * x for x in va) * sum(y * y for y in vb))
        return dot / norm if norm else 0.0

    def _vector(self, text: str) -> list[float]:
        # the same texts come back at every turn (topic_start replays the history)
        with self._lock:
            cached = self._vectors.get(text)
        if cached is None:
            cached = list(self.embeddings.embed_query(text))
            with self._lock:
                self._vectors[text] = cached
                if len(self._vectors) > 512:
                    self._vectors.popitem(last=False)
        return cached


def _message(item: Any) -> tuple[str, str] | None:
    """``(role, text)`` when ``item`` is a message or a role pair, else None (the role
    ``user``, ``assistant`` or ``system``: :func:`~memory_chains._history.canonical_role`)."""
    if isinstance(item, BaseMessage):
        return canonical_role(item.type) or "system", message_text(item)
    if isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[0], str):
        role = canonical_role(item[0])
        if role is not None:
            return role, str(item[1])
    return None


def _parse(items: Sequence[Any]) -> list[tuple[int, str, str]]:
    """``(index of the item starting it, human, ai)`` for each exchange of ``items``."""
    out: list[tuple[int, str, str]] = []
    for index, item in enumerate(items):
        if hasattr(item, "human") and hasattr(item, "ai"):
            out.append((index, str(item.human), str(item.ai)))
            continue
        message = _message(item)
        if message is None:
            if isinstance(item, (tuple, list)) and len(item) == 2:
                out.append((index, str(item[0]), str(item[1])))
                continue
            raise InvalidInputError(
                "turns must be (human, ai) pairs, stored turns, LangChain messages or "
                f"(role, text) pairs, got {type(item).__name__}"
            )
        role, text = message
        if role == "user":
            out.append((index, text, ""))
        elif role == "assistant" and out and not out[-1][2]:
            start, human, _ = out[-1]
            out[-1] = (start, human, text)
        elif role == "assistant":
            out.append((index, "", text))
    return out


def to_exchanges(turns: Sequence[Any]) -> list[tuple[str, str]]:
    """``(human, ai)`` exchanges from any history shape.

    Accepts ``(human, ai)`` pairs, objects with ``human``/``ai`` attributes (stored turns),
    LangChain messages and ``(role, text)`` pairs (a pair whose first element is a role
    name such as ``"human"`` or ``"assistant"``). System messages are ignored.

    Example:
        >>> to_exchanges([("user", "Salut"), ("assistant", "Bonjour"), ("user", "Ça va ?")])
        [('Salut', 'Bonjour'), ('Ça va ?', '')]
    """
    if isinstance(turns, str):
        raise InvalidInputError("turns must be a sequence of exchanges or messages, not a string")
    return [(h, a) for _, h, a in _parse(list(turns))]


def _exchange_starts(items: Sequence[Any]) -> list[int]:
    return [start for start, _, _ in _parse(items)]


def detect_topic_change(
    previous_turns: Sequence[Any], question: str, embeddings: Any = None
) -> TopicChange:
    """Does ``question`` change the subject? (:meth:`TopicTracker.detect` with defaults).

    Example:
        >>> turns = [("Je cherche le Dell XPS 15", "Il coûte 1599 €.")]
        >>> detect_topic_change(turns, "Quelle est sa garantie ?").changed
        False
        >>> detect_topic_change(turns, "By the way, do you deliver to Belgium?").reasons
        ("marker 'by the way'",)
    """
    return TopicTracker(embeddings).detect(previous_turns, question)


def history_since_topic_start(
    history: Sequence[Any], question: str | None = None, embeddings: Any = None
) -> list[Any]:
    """The part of ``history`` that belongs to the current topic (a suffix, same shape).

    Meant for a query rewriter: with ``question``, an empty list comes back when the
    question opens a new subject, so the previous topic cannot leak into its rewrite.

    Example:
        >>> history = [("human", "Quels sont les horaires du cours de Pilates ?"),
        ...            ("ai", "Mardi 12h30 et jeudi 19h.")]
        >>> history_since_topic_start(history, "Et pour le samedi ?") == history
        True
        >>> history_since_topic_start(history, "Quelle est la garantie du Dell XPS 15 ?")
        []
    """
    return TopicTracker(embeddings).history_since_topic_start(history, question)
