"""The deterministic rewrite used when the model is off, fails or is not trusted.

The referent (the most recent candidate name that the question does not already contain;
for "he"/"she", preferably one shaped like a person's name) replaces the first pronoun or
possessive it can ("How long did he stay?" → "How long did Phil Lesh stay?", "Quelle est sa
garantie ?" → "Quelle est la garantie de Dell XPS 15 ?"); otherwise it is appended in
parentheses, so retrieval still sees it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memory_chains.evaluation.metrics import fold
from memory_chains.rewrite._detect import detect_language
from memory_chains.rewrite._history import Turn

_PERSON = re.compile(r"^[A-Z][\w'.-]*(\s+[A-Z][\w'.-]*){1,3}$")
_EN_PERSON_PRONOUN = re.compile(r"\b(he|she|him|his|her)\b", re.IGNORECASE)
_EN_AFTER_OBJECT = re.compile(r"^\s*($|[.?!,]|(to|in|on|at|for|with|and|from|about)\b)", re.I)
_FR_POSSESSIVE = re.compile(
    r"\b(sa|son|ses)\s+([\wà-ÿ'-]+(?:\s+[a-zà-ÿ]+(?:ique|iques|ale|ales|elle|elles|ive|ives|"
    r"aire|aires|ée|ées))?)\b",
    re.IGNORECASE,
)
_FR_INVERTED = re.compile(r"-(t-)?(il|elle)\b", re.IGNORECASE)
_FR_SUBJECT = re.compile(r"\b(il|elle)\b(?!\s+(y\s+a|faut|pleut)\b)", re.IGNORECASE)
_FR_THERE = re.compile(r"\blà-bas\b", re.IGNORECASE)
_EN_SUBJECT = re.compile(r"\b(he|she|they|him|her|them|it)\b", re.IGNORECASE)
_EN_POSSESSIVE = re.compile(r"\b(his|her|their|its)\b(?=\s+\w)", re.IGNORECASE)
_ELLIPSIS = re.compile(r"^\s*(et|and|what about|how about)\b", re.IGNORECASE)
_INNER_NAME = re.compile(r"(?<!^)\b[A-Z][\w-]+|\b[^\W\d_]+\d\w*\b")
_VOWEL = re.compile(r"^[aeiouyhàâéèêëîïôöùûü]", re.IGNORECASE)


def choose_referent(question: str, candidates: Sequence[str], turns: Sequence[Turn] = ()) -> str:
    """The candidate the question most likely refers to ("" when there is none).

    The most recent candidate not already in the question; for "he"/"she", the
    person-shaped name whose last word recurs most in the conversation (people are
    referred to by their surname), most recent first among equals.
    """
    folded = fold(question)
    usable = [c for c in candidates if fold(c) not in folded]
    if not usable:
        return ""
    if _EN_PERSON_PRONOUN.search(question):
        people = [c for c in usable if _PERSON.match(c)]
        if people:
            text = fold(" ".join(t for _, t in turns))

            def mentions(name: str) -> int:
                return len(re.findall(rf"\b{re.escape(fold(name.split()[-1]))}\b", text))

            return max(people, key=mentions)  # max keeps the first (most recent) of ties
    return usable[0]


def _substitute(question: str, name: str) -> str | None:
    if detect_language(question) == "fr":
        m = _FR_POSSESSIVE.search(question)
        if m:
            det, noun = m.group(1).lower(), m.group(2)
            article = (
                "les "
                if det == "ses"
                else ("l'" if _VOWEL.match(noun) else ("la " if det == "sa" else "le "))
            )
            of = f"d'{name}" if _VOWEL.match(name) else f"de {name}"
            return question[: m.start()] + f"{article}{noun} {of}" + question[m.end() :]
        m = _FR_INVERTED.search(question)
        if m:
            return question[: m.start()] + f" {name}" + question[m.end() :]
        m = _FR_THERE.search(question)
        if m:
            return question[: m.start()] + f"à {name}" + question[m.end() :]
        m = _FR_SUBJECT.search(question)
        if m:
            return question[: m.start()] + name + question[m.end() :]
        return None
    possessive = _EN_POSSESSIVE.search(question)
    subject = _EN_SUBJECT.search(question)
    if possessive and possessive.group(1).lower() == "her":
        rest = question[possessive.end() :]
        if _EN_AFTER_OBJECT.match(rest):
            possessive = None
    if possessive and (subject is None or possessive.start() < subject.start()):
        return question[: possessive.start()] + f"{name}'s" + question[possessive.end() :]
    if subject:
        return question[: subject.start()] + name + question[subject.end() :]
    return None


def fallback_rewrite(question: str, candidates: Sequence[str], turns: Sequence[Turn]) -> str:
    """The question with its most likely referent put in, without a model.

    Without any candidate name, the last user turn is appended instead.

    Example:
        >>> fallback_rewrite("Et la carte graphique ?", ["ASUS ROG Strix G15"], [])
        'Et la carte graphique ? (ASUS ROG Strix G15)'
        >>> fallback_rewrite("Quelle est sa garantie ?", ["Dell XPS 15"], [])
        'Quelle est la garantie de Dell XPS 15 ?'
        >>> story = [("assistant", "Lesh joined the Sixth Army; Lesh left it in 1945.")]
        >>> fallback_rewrite("How long did he stay?", ["Sixth Army", "Phil Lesh"], story)
        'How long did Phil Lesh stay?'
        >>> turns = [("user", "Quelle est la garantie du Dell XPS 15 ?"), ("assistant", "2 ans.")]
        >>> fallback_rewrite("Et celle du Lenovo ?", ["Dell XPS 15"], turns)
        'Et celle du Lenovo ? (Quelle est la garantie du ?)'
    """
    q = question.strip()
    last_user = next((text for role, text in reversed(turns) if role == "user"), "")
    if last_user and _ELLIPSIS.match(q) and _names_own_subject(q, candidates):
        # "Et celle du Lenovo ?": the name is there, what is missing is what was asked
        # before; other names are removed from it so they do not pull retrieval away.
        context = last_user
        for other in candidates:
            context = re.sub(re.escape(other), "", context, flags=re.IGNORECASE)
        context = " ".join(context.split())
        if context and fold(context) not in fold(q):
            return f"{q} ({context})"
    name = choose_referent(q, candidates, turns)
    if name:
        substituted = _substitute(q, name)
        if substituted is not None:
            return " ".join(substituted.split())
        return f"{q} ({name})"
    if not last_user or fold(last_user) in fold(q):
        return q
    return f"{q} ({last_user})"


def _names_own_subject(question: str, candidates: Sequence[str]) -> bool:
    folded = fold(question)
    return any(fold(c) in folded for c in candidates) or bool(_INNER_NAME.search(question))
