"""The deterministic rewrite used when the model is off, fails or is not trusted.

The referent (the most recent candidate name that the question does not already contain;
for "he"/"she", the person the conversation mentions most) replaces the first pronoun or
possessive it can ("How long did he stay?" → "How long did Phil Lesh stay?", "Quelle est sa
garantie ?" → "Quelle est la garantie de Dell XPS 15 ?"; see
:mod:`memory_chains.rewrite._substitute`); otherwise it is appended in parentheses, so
retrieval still sees it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memory_chains.evaluation.metrics import fold
from memory_chains.rewrite._history import Turn, last_user_text
from memory_chains.rewrite._substitute import _substitute

_PERSON = re.compile(r"^[A-Z][\w'.-]*(\s+[A-Z][\w'.-]*){1,3}$")
_EN_PERSON_PRONOUN = re.compile(r"\b(he|she|him|his|her)\b", re.IGNORECASE)
_ELLIPSIS = re.compile(r"^\s*(et|and|what about|how about)\b", re.IGNORECASE)
_INNER_NAME = re.compile(r"(?<!^)\b[A-Z][\w-]+|\b[^\W\d_]+\d\w*\b")


def choose_referent(question: str, candidates: Sequence[str], turns: Sequence[Turn] = ()) -> str:
    """The candidate the question most likely refers to ("" when there is none).

    The most recent candidate not already in the question; for "he"/"she", the
    person-shaped name whose last word recurs most in ``turns`` (people are referred to by
    their surname: pass the whole conversation, the person it is about recurs most), most
    recent first among equals.

    Example:
        >>> turns = [("user", "Harold Shipman"), ("assistant", "Shipman was a doctor."),
        ...          ("user", "Where did he die?"), ("assistant", "In Wakefield Prison.")]
        >>> choose_referent("What happened after his death?", ["Wakefield Prison",
        ...                 "Harold Shipman"], turns)
        'Harold Shipman'
    """
    folded = fold(question)
    usable = [c for c in candidates if fold(c) not in folded]
    if not usable:
        return ""
    if _EN_PERSON_PRONOUN.search(question):
        ranked = _people_by_mentions(usable, turns)
        if ranked:
            return ranked[0][1]
    return usable[0]


def salient_person(
    question: str, candidates: Sequence[str], turns: Sequence[Turn], margin: float = 1.5
) -> str:
    """The person "he"/"she"/"his"/"her" of ``question`` stands for, when it is clear.

    Clear means the person-shaped candidate whose surname recurs most in ``turns`` (the
    whole conversation) is mentioned at least twice and more than ``margin`` times as
    often as the next one: the person the conversation is about. "" otherwise, and for a
    question without such a pronoun (French "il"/"elle" also stand for things).

    Example:
        >>> turns = [("user", "Phil Lesh"), ("assistant", "Lesh joined the Sixth Army Band."),
        ...          ("user", "Who led it?"), ("assistant", "Lesh played with Jerry Garcia.")]
        >>> salient_person("How long did he stay?", ["Jerry Garcia", "Phil Lesh"], turns)
        'Phil Lesh'
        >>> salient_person("How long did it last?", ["Jerry Garcia", "Phil Lesh"], turns)
        ''
    """
    if not _EN_PERSON_PRONOUN.search(question):
        return ""
    folded = fold(question)
    ranked = _people_by_mentions([c for c in candidates if fold(c) not in folded], turns)
    if not ranked:
        return ""
    top = ranked[0][0]
    runner_up = ranked[1][0] if len(ranked) > 1 else 0
    return ranked[0][1] if top >= 2 and top > margin * runner_up else ""


def subject_person(question: str, subject: Sequence[str]) -> str:
    """The subject's first name when it is a person's and ``question`` says "he"/"she"…

    In a conversation about a person, "he"/"she"/"his"/"her" is that person even when the
    latest answer named someone else ("Did he regain power?" after an answer about his
    captors). French "il"/"elle"/"sa" also stand for things: they are left to other rules.

    Example:
        >>> subject_person("Who went with him?", ("Thor Heyerdahl", "Kon-Tiki"))
        'Thor Heyerdahl'
        >>> subject_person("Who went with them?", ("Thor Heyerdahl",))
        ''
    """
    if not subject or not _PERSON.match(subject[0]) or not _EN_PERSON_PRONOUN.search(question):
        return ""
    return "" if fold(subject[0]) in fold(question) else subject[0]


def _people_by_mentions(names: Sequence[str], turns: Sequence[Turn]) -> list[tuple[int, str]]:
    """The person-shaped ``names`` with how often their last word occurs in ``turns``.

    Most mentioned first; among equals, the order of ``names`` (most recent first) is kept.
    """
    text = fold(" ".join(t for _, t in turns))
    counted = [
        (len(re.findall(rf"\b{re.escape(fold(name.split()[-1]))}\b", text)), -k, name)
        for k, name in enumerate(names)
        if _PERSON.match(name)
    ]
    return [(count, name) for count, _, name in sorted(counted, reverse=True)]


def fallback_rewrite(
    question: str,
    candidates: Sequence[str],
    turns: Sequence[Turn],
    *,
    history: Sequence[Turn] | None = None,
    subject: Sequence[str] = (),
) -> str:
    """The question with its most likely referent put in, without a model.

    Without any candidate name, the last user turn of ``turns`` (the recent window) is
    appended instead. ``history``, the whole conversation when longer than ``turns``, is
    what a person's name is counted over (see :func:`choose_referent`).

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
    person = subject_person(question, subject)
    if person:
        candidates = (person, *(c for c in candidates if c != person))
    return with_subject(_fallback(question, candidates, turns, history), subject, question)


def with_subject(rewrite: str, subject: Sequence[str], question: str = "") -> str:
    """``rewrite`` with the names of the conversation's subject it does not contain.

    They go into the parentheses the fallback appended, or into new ones (also when the
    rewrite ends with parentheses of the ``question`` itself: "le prix (TTC)").

    Example:
        >>> with_subject("Who went with Easter Island?", ("Thor Heyerdahl",))
        'Who went with Easter Island? (Thor Heyerdahl)'
        >>> with_subject("Et la carte graphique ? (ASUS ROG Strix G15)", ("Dell XPS 15",))
        'Et la carte graphique ? (ASUS ROG Strix G15; Dell XPS 15)'
        >>> with_subject("Did Lew Wallace finish school?", ("Lew Wallace", "Ben-Hur"))
        'Did Lew Wallace finish school? (Ben-Hur)'
        >>> with_subject("Son prix (TTC)", ("Dell XPS 15",), question="Son prix (TTC)")
        'Son prix (TTC) (Dell XPS 15)'
    """
    folded = fold(rewrite)
    missing = [name for name in subject if fold(name) not in folded]
    if not missing:
        return rewrite
    added = "; ".join(missing)
    if rewrite.endswith(")") and "(" in rewrite and not question.rstrip().endswith(")"):
        return f"{rewrite[:-1]}; {added})"
    return f"{rewrite} ({added})"


def _fallback(
    question: str, candidates: Sequence[str], turns: Sequence[Turn], history: Sequence[Turn] | None
) -> str:
    q = question.strip()
    last_user = last_user_text(turns)
    if last_user and _ELLIPSIS.match(q) and _names_own_subject(q, candidates):
        # "Et celle du Lenovo ?": the name is there, what is missing is what was asked
        # before; other names are removed from it so they do not pull retrieval away.
        context = last_user
        for other in candidates:
            context = re.sub(re.escape(other), "", context, flags=re.IGNORECASE)
        context = " ".join(context.split())
        if context and fold(context) not in fold(q):
            return f"{q} ({context})"
    name = choose_referent(q, candidates, turns if history is None else history)
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
