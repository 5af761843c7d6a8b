"""Checking the model's rewrite against hard facts, and repairing what can be repaired.

The model writes the standalone question; code does not second-guess its wording, only
what can be checked without understanding the conversation (:func:`verify`):

* it is a question (or a request), not an answer, and in the question's language;
* every word it adds comes from the conversation or the entity memory (no invented name,
  no fact from nowhere), and it adds no number the user did not give or the conversation
  does not name;
* it keeps the question's own names and most of its content words, and its grammatical
  person (the user's "je" / "I" does not become "vous" / "you");
* it reads as one question: a parenthesis or a pasted earlier question is cut off
  (repaired), an overlong rewrite is rejected.

:func:`read_question` gets the question out of the model's answer (JSON, fenced JSON,
prose around it, a bare line).

Example:
    >>> from memory_chains.rewrite._detect import analyse
    >>> turns = [("user", "Je regarde le Dell XPS 15.")]
    >>> q = "Quelle est sa garantie ?"
    >>> verify("Quelle est la garantie du Dell XPS 15 ?", q, analyse(q), turns).question
    'Quelle est la garantie du Dell XPS 15 ?'
    >>> verify("La garantie est de 3 ans.", q, analyse(q), turns).problem
    'an answer, not a question'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from memory_chains._folding import fold
from memory_chains._json import parse_json_object
from memory_chains._language import detect_language
from memory_chains._terms import QUESTION_WORDS, keywords, stem
from memory_chains.errors import MalformedOutputError
from memory_chains.rewrite._detect import Detection
from memory_chains.rewrite._ellipsis import reframe
from memory_chains.rewrite._history import Turn

__all__ = ["Verdict", "read_answer", "read_question", "verify"]

_KEYS = ("question", "standalone_question", "standalone", "rewrite", "rewritten")
_LABEL = re.compile(r"^\s*(json|question|standalone question|rewrite|réponse)\s*:\s*", re.I)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
_WORDS = re.compile(r"\w+")
_PAREN = re.compile(r"\s*\([^)]*\)?")
_SENTENCE = re.compile(r"[^?!.]+[?!.]*")
_INTERROGATIVE = re.compile(
    r"^\s*(qu|quel|quelle|quels|quelles|comment|combien|pourquoi|où|quand|est-ce|peut|"
    r"puis|faut|y a|a-t|lequel|laquelle|lesquels|lesquelles|entre|what|which|who|whom|"
    r"whose|where|when|why|how|is|are|was|were|do|does|did|can|could|should|would|will|"
    r"has|have|had|tell|give|list|describe|explain|compare|donne|dites|dis|indique|"
    r"explique|compare|montre)\b|-(t-)?(il|elle|ils|elles|on|je|vous|nous)\b",
    re.IGNORECASE,
)
# A rewrite needs a few words to name what the question left out; more is a paraphrase,
# an answer or a pasted turn.
_MAX_ADDED_WORDS = 14
# Words the rewrite adds that the conversation does not hold (a verb of the frame, a
# preposition's object) are tolerated up to this many.
_MAX_UNGROUNDED = 1


@dataclass(frozen=True)
class Verdict:
    """What :func:`verify` decided.

    Attributes:
        question: the rewrite to use (repaired when ``problem`` says so), or ``None`` when
            it was rejected.
        problem: why it was rejected, or what was repaired; ``None`` for a clean rewrite.

    Example:
        >>> Verdict("Quel est le prix ?", None).accepted
        True
    """

    question: str | None
    problem: str | None = None

    @property
    def accepted(self) -> bool:
        """True when :attr:`question` can be used."""
        return self.question is not None


def read_answer(raw: str) -> tuple[str, str]:
    """``(about, question)`` from the model's answer; ``about`` may be ``""``.

    Raises:
        MalformedOutputError: the answer holds no question (``raw`` is kept on the error).

    Example:
        >>> read_answer('{"about": "Carte Ambre", "question": "La Carte Ambre est gratuite ?"}')
        ('Carte Ambre', 'La Carte Ambre est gratuite ?')
        >>> read_answer('Question: Is Y big?')
        ('', 'Is Y big?')
    """
    text = (raw or "").strip()
    if "{" in text:
        value = parse_json_object(text)
        found_about = value.get("about")
        if isinstance(found_about, list):
            found_about = " ; ".join(str(a) for a in found_about if isinstance(a, str))
        about = " ".join(found_about.split()) if isinstance(found_about, str) else ""
        for key in _KEYS:
            found = value.get(key)
            if isinstance(found, str) and found.strip():
                return about, " ".join(found.split())
        raise MalformedOutputError("the model's JSON holds no question", raw=raw)
    line = next((ln for ln in text.splitlines() if ln.strip()), "")
    line = _LABEL.sub("", line).strip().strip("\"'«» ").strip()
    if not line:
        raise MalformedOutputError("the model's answer is empty", raw=raw)
    return "", line


def read_question(raw: str) -> str:
    """The standalone question in the model's answer (see :func:`read_answer`).

    Example:
        >>> read_question('```json\\n{"question": "Quel est le prix du X ?"}\\n```')
        'Quel est le prix du X ?'
    """
    return read_answer(raw)[1]


# Words that stand for the referent: a rewrite replaces them by its name.
_REFERENCE_WORDS = frozenset(
    (
        "premier", "premiere", "second", "seconde", "deuxieme", "troisieme", "dernier",
        "derniere", "1er", "2e", "3e", "2eme", "3eme", "first", "third", "last", "latter",
        "former", "one", "ones", "other", "autre", "bas",
    )
)  # fmt: skip


def _content(text: str) -> list[str]:
    return [w for w in keywords(text) if w not in QUESTION_WORDS and not w.isdigit()]


def _own(text: str) -> list[str]:
    """The question's content words a rewrite must keep (not the words of its reference)."""
    return [w for w in _content(text) if w not in _REFERENCE_WORDS]


def _stems(text: str) -> set[str]:
    return {stem(w)[:6] for w in keywords(text)}


def _one_question(rewrite: str, question: str) -> tuple[str, str | None]:
    """``rewrite`` without a parenthesis or a second question the question did not have."""
    note = None
    if "(" in rewrite and "(" not in question:
        rewrite = " ".join(_PAREN.sub(" ", rewrite).split())
        note = "parenthesis removed"
    if rewrite.count("?") > max(question.count("?"), 1):
        asked = set(_content(question))
        sentences = [s.strip() for s in _SENTENCE.findall(rewrite) if "?" in s]
        best = max(sentences, key=lambda s: len(asked & set(_content(s))))
        rewrite, note = best, "second question removed"
    return rewrite, note


def verify(
    rewrite: str,
    question: str,
    detection: Detection,
    turns: Sequence[Turn],
    names: Sequence[str] = (),
) -> Verdict:
    """Accept, repair or reject ``rewrite`` as the standalone form of ``question``.

    Args:
        rewrite: the model's standalone question.
        question: the question as asked.
        detection: what :func:`~memory_chains.rewrite.analyse` found in the question.
        turns: the whole conversation (what the rewrite may take words from).
        names: other names the rewrite may use (an entity memory's).

    Example:
        >>> from memory_chains.rewrite._detect import analyse
        >>> q = "Et pour annuler ?"
        >>> turns = [("user", "Le forfait Azur coûte combien ?"), ("assistant", "12 €.")]
        >>> verify("Comment annuler le forfait Azur ? (forfait Azur)", q, analyse(q), turns)
        Verdict(question='Comment annuler le forfait Azur ?', problem='parenthesis removed')
        >>> verify("Comment annuler le forfait Zénith ?", q, analyse(q), turns).problem
        'adds words the conversation does not hold (zenith)'
    """
    rewrite = " ".join(rewrite.split())
    if not rewrite:
        return Verdict(None, "empty rewrite")
    rewrite, note = _one_question(rewrite, question)
    words = rewrite.split()
    if len(words) > len(question.split()) + _MAX_ADDED_WORDS:
        return Verdict(None, f"too long ({len(words)} words)")
    if len(words) >= 4 and detect_language(rewrite) != detection.language:
        return Verdict(None, f"not in the question's language ({detection.language})")
    heard = fold(" ".join([question, *(text for _, text in turns), *names]))
    user_said = fold(" ".join([question, *(t for r, t in turns if r == "user"), *names]))
    asks = "?" in question or _INTERROGATIVE.search(question)
    # "Comparez le Dell XPS 15 à celui de Lenovo." is a request in the user's own words; a
    # statement bringing words only the assistant said is an answer.
    content = set(_content(rewrite))
    in_user_words = bool(content) and content <= set(_WORDS.findall(user_said)) | _stems(user_said)
    if asks and "?" not in rewrite and not _INTERROGATIVE.search(rewrite) and not in_user_words:
        return Verdict(None, "an answer, not a question")
    new_numbers = [n for n in _NUMBER.findall(rewrite) if n not in fold(question)]
    answered = [n for n in new_numbers if n not in user_said and not _in_a_name(n, names)]
    if answered and not all(n in heard for n in answered):
        return Verdict(None, f"adds numbers from nowhere ({', '.join(answered)})")
    if answered and "?" not in rewrite:
        return Verdict(None, "an answer, not a question")
    known = _stems(" ".join([question, *(text for _, text in turns), *names]))
    ungrounded = [
        w for w in _content(rewrite) if stem(w)[:6] not in known and w not in QUESTION_WORDS
    ]
    if len(ungrounded) > _MAX_UNGROUNDED or _ungrounded_name(rewrite, heard):
        return Verdict(None, f"adds words the conversation does not hold ({', '.join(ungrounded)})")
    flipped = _person_flip(rewrite, question)
    if flipped:
        return Verdict(None, f"changes who the question is about ({flipped})")
    copied = _copied_from_answer(rewrite, question, turns, names)
    if copied:
        return Verdict(None, f"copies the conversation's answer ({copied!r})")
    kept = _stems(rewrite)
    own = _own(question)
    lost = [w for w in own if stem(w)[:6] not in kept]
    if own and len(lost) * 2 > len(own):
        framed = _framed(rewrite, question, turns, names)
        if framed is None:
            return Verdict(None, f"drops the question's words ({', '.join(lost)})")
        rewrite, note = framed, "the question's complement put back in its frame"
    if "?" in question and not rewrite.endswith(("?", "?»", '?"')):
        rewrite = rewrite.rstrip(" .!") + (" ?" if detection.language == "fr" else "?")
    return Verdict(rewrite, note)


# The speaker ("je", "I", "nous") and the one spoken to ("vous", "you"), folded. The
# elided "j'" and "m'" count; a bare "m" or "t" (a unit, "a-t-il") does not.
_FIRST_PERSON = re.compile(
    r"(?<![\w'-])(?:je|j'|me|m'|moi|mon|ma|mes|nous|notre|nos|i|my|mine|myself|we|our|ours)"
    r"(?![\w-])",
)
_SECOND_PERSON = re.compile(
    r"(?<![\w'-])(?:vous|votre|vos|tu|toi|ton|ta|tes|you|your|yours|yourself)(?![\w'-])|"
    r"(?<!\brendez)-(?:vous|tu)\b",  # "pouvez-vous", not the noun "rendez-vous"
)


def _persons(text: str) -> tuple[bool, bool]:
    folded = fold(text).replace("’", "'")
    return bool(_FIRST_PERSON.search(folded)), bool(_SECOND_PERSON.search(folded))


def _person_flip(rewrite: str, question: str) -> str:
    """``"je → vous"`` when the rewrite speaks of the other person than the question did
    (the user's own situation turned into the assistant's), else ``""``.

    Example:
        >>> _person_flip("Quel est votre plafond ?", "Et mon plafond ?")
        'je → vous'
        >>> _person_flip("Le cabinet prend-il des rendez-vous le soir ?", "J'y vais le soir ?")
        ''
        >>> _person_flip("Quel est mon plafond pour la Carte Onyx ?", "Et mon plafond ?")
        ''
    """
    first, second = _persons(question)
    now_first, now_second = _persons(rewrite)
    if first and not second and now_second and not now_first:
        return "je → vous"
    if second and not first and now_first and not now_second:
        return "vous → je"
    return ""


# Added words in a row that an answer holds but no name covers: a clause of the answer.
_MAX_COPIED_RUN = 5


def _copied_from_answer(
    rewrite: str, question: str, turns: Sequence[Turn], names: Sequence[str]
) -> str:
    """The longest run of words the rewrite adds that an assistant turn says word for word
    and no name covers, when it is longer than :data:`_MAX_COPIED_RUN`; else ``""``."""
    asked = set(_WORDS.findall(fold(question)))
    said_by_user = fold(" ".join([question, *(t for r, t in turns if r == "user"), *names]))
    answers = [" ".join(_WORDS.findall(fold(t))) for r, t in turns if r != "user"]
    words = _WORDS.findall(fold(rewrite))
    run: list[str] = []
    longest: list[str] = []
    for word in [*words, ""]:
        extended = " ".join([*run, word])
        if word and word not in asked and any(extended in a for a in answers):
            run.append(word)
            continue
        if len(run) > len(longest) and " ".join(run) not in said_by_user:
            longest = run
        run = [word] if word and word not in asked and any(word in a for a in answers) else []
    if len(longest) <= _MAX_COPIED_RUN:
        return ""
    # "la garantie du Dell XPS 15" names what the user asked about in words they used: a
    # reference, not a copied clause. A clause brings content words only the answer said.
    user_words = set(_WORDS.findall(said_by_user))
    brought = [w for w in keywords(" ".join(longest)) if w not in user_words]
    return " ".join(longest) if len(brought) >= 2 else ""


def _framed(rewrite: str, question: str, turns: Sequence[Turn], names: Sequence[str]) -> str | None:
    """An elliptic question ("Et pour le samedi ?", "Et pour le Lenovo ?") put back into
    the earlier question the model returned as it was, else None (:func:`reframe`).

    Example:
        >>> turns = [("user", "Quels sont les horaires du cours de Pilates ?")]
        >>> _framed(turns[0][1], "Et pour le samedi ?", turns, [])
        'Quels sont les horaires du cours de Pilates pour le samedi ?'
        >>> _framed(turns[0][1], "Et pour le Yoga ?", turns, [])
        'Quels sont les horaires du cours de Yoga ?'
    """
    words = _WORDS.findall(fold(rewrite))
    if not any(words == _WORDS.findall(fold(t)) for r, t in turns if r == "user"):
        return None
    return reframe(rewrite, question, names)


def _in_a_name(number: str, names: Sequence[str]) -> bool:
    return any(number in name for name in names)


_CAPITALISED = re.compile(r"(?<![.?!]\s)(?<!^)\b[A-ZÀ-ÖØ-Þ][\w-]+")


def _ungrounded_name(rewrite: str, heard: str) -> bool:
    """True when the rewrite holds a capitalised word found nowhere in the conversation."""
    return any(fold(m.group(0)) not in heard for m in _CAPITALISED.finditer(rewrite))
