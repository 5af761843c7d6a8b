"""Reading the model's answer and deciding whether to trust it.

:func:`parse_answer` repairs what it can (code fences, text around the JSON object, a bare
string) and raises :class:`~memory_chains.errors.MalformedOutputError` otherwise;
:func:`check_rewrite` returns why a parsed rewrite is rejected, or ``None``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from memory_chains.errors import MalformedOutputError
from memory_chains.evaluation.metrics import fold
from memory_chains.rewrite._detect import Detection, detect_language
from memory_chains.rewrite._history import Turn


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_LABEL = re.compile(r"^\s*(json|question|standalone question|rewrite|réponse)\s*:\s*", re.I)
_QUESTION_KEYS = ("standalone_question", "question", "standalone", "rewrite", "rewritten")
_WORD = re.compile(r"\w+", re.UNICODE)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
_INTERROGATIVE = re.compile(
    r"^\s*(qu|quel|quelle|quels|quelles|comment|combien|pourquoi|où|est-ce|peut|puis|"
    r"faut|y a|a-t|what|which|who|whom|whose|where|when|why|how|is|are|was|were|do|does|"
    r"did|can|could|should|would|will|has|have|had)\b|-(t-)?(il|elle|ils|elles|on|je|vous|"
    r"nous)\b",
    re.IGNORECASE,
)
# Words that carry no focus: function words, pronouns, question words.
_LIGHT = _words(
    """
    quel quelle quels quelles comment combien pourquoi est-ce quoi qui que sont était elle
    elles celui celle ceux celles cette leur leurs aussi avec dans pour sans plus moins
    alors peut puis faut what which where when does have about with there their them they
    this that these those also other another then from into more less
    """
)


def parse_answer(raw: str) -> tuple[str, str]:
    """Return ``(referent, question)`` from the model's raw text.

    Raises:
        MalformedOutputError: nothing usable was found (``raw`` is kept on the error).

    Example:
        >>> parse_answer('```json\\n{"referent": "X", "question": "Quel est X ?"}\\n```')
        ('X', 'Quel est X ?')
        >>> parse_answer('Sure: {"question": "Is Y big?"} hope it helps')
        ('', 'Is Y big?')
    """
    text = raw.strip()
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1).strip()
    decoder = json.JSONDecoder()
    starts = [m.start() for m in re.finditer(r"{", text)]
    if text.startswith('"'):
        starts.insert(0, 0)  # the whole answer may be one JSON string
    for start in starts:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        found = _from_json(value)
        if found is not None:
            return found
    if "{" in text:
        raise MalformedOutputError("the model's answer holds no valid JSON object", raw=raw)
    line = next((ln for ln in text.splitlines() if ln.strip()), "")
    line = _LABEL.sub("", line).strip().strip("\"'«» ").strip()
    if not line:
        raise MalformedOutputError("the model's answer is empty", raw=raw)
    return "", line


def _from_json(value: Any) -> tuple[str, str] | None:
    if isinstance(value, str):
        return ("", value.strip()) if value.strip() else None
    if not isinstance(value, dict):
        return None
    referent = value.get("referent")
    for key in _QUESTION_KEYS:
        question = value.get(key)
        if isinstance(question, str) and question.strip():
            return (referent.strip() if isinstance(referent, str) else "", question.strip())
    return None


def focus_words(question: str) -> list[str]:
    """Content words of ``question`` (folded), which a faithful rewrite keeps."""
    return [w for w in _WORD.findall(fold(question)) if len(w) >= 4 and w not in _LIGHT]


# Names inside a question: a capitalised word that does not start it, or a word with a digit.
_NAME_TOKEN = re.compile(r"(?<!^)(?<![.?!]\s)\b[A-Z][\w-]+|\b[^\W\d_]*\d[\w-]*")


def _names(question: str) -> list[str]:
    """Folded names of ``question`` ("XPS 15" → ["xps", "15"]), which a rewrite must keep."""
    found = [fold(m.group(0)) for m in _NAME_TOKEN.finditer(question.strip())]
    return [n for n in found if n]


def _kept(word: str, text: str) -> bool:
    stem = word[:5]
    return any(w.startswith(stem) for w in _WORD.findall(text))


def check_rewrite(
    rewrite: str, question: str, detection: Detection, turns: Sequence[Turn]
) -> str | None:
    """Why ``rewrite`` must not be used for ``question``, or ``None`` when it is acceptable.

    Example:
        >>> from memory_chains.rewrite._detect import analyse
        >>> q = "Quelle est sa garantie ?"
        >>> check_rewrite("La garantie est de 3 ans.", q, analyse(q), [("user", "Le Dell XPS 15")])
        'looks like an answer, not a question'
    """
    words = _WORD.findall(rewrite)
    q_words = _WORD.findall(question)
    if not words:
        return "empty rewrite"
    limit = max(3 * len(q_words), len(q_words) + 25)
    if len(words) > limit:
        return f"rewrite too long ({len(words)} words for a {len(q_words)}-word question)"
    if len(words) >= 4 and detect_language(rewrite) != detection.language:
        return f"rewrite switched language (question is {detection.language})"
    if "?" in question and "?" not in rewrite and not _INTERROGATIVE.search(rewrite):
        return "looks like an answer, not a question"
    context = fold(question + " " + " ".join(text for _, text in turns))
    new_numbers = [n for n in _NUMBER.findall(rewrite) if n not in context]
    if new_numbers:
        return f"rewrite adds facts not in the conversation ({', '.join(new_numbers)})"
    focus = focus_words(question)
    folded = fold(rewrite)
    lost_names = [n for n in _names(question) if n not in folded]
    if lost_names:
        return f"rewrite lost the question's focus words ({', '.join(lost_names)})"
    lost = [w for w in focus if not _kept(w, folded)]
    if focus and len(lost) * 2 > len(focus):
        return f"rewrite lost the question's focus words ({', '.join(lost)})"
    return None
