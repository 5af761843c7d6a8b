"""Deciding, without a model, whether a question depends on the conversation.

:func:`analyse` returns a :class:`Detection`: the question's language and the reasons it
needs rewriting (an empty tuple means it is standalone and is left untouched, with no model
call). A question is standalone when it holds no reference (pronoun, possessive,
demonstrative, ordinal, location adverb), no comparison or choice ("lequel", "which one"),
does not open with an ellipsis ("Et …", "What about …"), is not a bare fragment, and names
what it is about (a proper or product name, or the business's own thing: "votre politique
de retour"). A question that names nothing may still lean on the conversation ("faut-il un
dépôt de garantie ?"): it is left to the model, which copies it when it stands alone.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from memory_chains._calendar import WEEKDAYS_FR
from memory_chains._language import WORD_RE, detect_language

__all__ = ["Detection", "analyse", "detect_language"]


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE | re.UNICODE)


_WEEKDAYS = "|".join(WEEKDAYS_FR)

# (reason, pattern) pairs, checked on the question with ’ normalised to '.
_FR_REFERENCES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("pronoun", _rx(r"(?<!-)\b(il|elle|ils|elles)\b(?!\s+(y\s+a|faut|pleut|existe)\b)")),
    # … not the impersonal "faut-il", "y a-t-il", "quel temps fait-il", "s'agit-il".
    (
        "pronoun",
        _rx(
            r"(?<!\bfaut)(?<!\bfait)(?<!\bagit)(?<!\by a)(?<!\by a-t)(?<!\breste)"
            r"-(il|elle|ils|elles|le|la|les|lui|leur|en|y)\b"
        ),
    ),
    ("pronoun", _rx(r"\b(lui|eux)\b")),
    ("possessive", _rx(r"\b(son|sa|ses|leur|leurs)\b")),
    ("demonstrative", _rx(r"\b(celui|celle|ceux|celles)(-ci|-là)?\b")),
    (
        "demonstrative",
        _rx(
            r"\b(ce|cet|cette|ces)\s+(?!(soir|matin|midi|week-end|weekend|mois|jour|"
            r"moment|que|qui|qu'|dont|sont|sera|serait)\b)[a-zà-ÿ]"
        ),
    ),
    ("location", _rx(r"\b(là-bas|là|y aller|s'y|j'y|on y|y trouve|sur place)\b")),
    ("location", _rx(r"\b(la|cette) ville\b")),
    (
        "object pronoun",
        _rx(r"(?<!-)\b(qui|que|qu'|combien|où|comment|je|on|vous|nous|ne|n')\s*en\s+[a-zà-ÿ]+"),
    ),
    (
        "ordinal",
        _rx(
            r"\b(le|la|les|du|au|des)\s+(premier|première|premiers|premières|second|seconde|"
            r"deuxième|troisième|dernier|dernière|derniers|autre|autres|même|mêmes)\b"
            r"(?!\s+(fois|jour|étage|mois|semaine|trimestre)\b)"
        ),
    ),
    (
        "object pronoun",
        _rx(
            r"\b(je|j'|tu|on|nous|vous|ne|n')\s*(le|la|les|l')\s*"
            rf"(?!(plus|moins|meilleur|meilleure|prix|même|matin|soir|week-end|{_WEEKDAYS})\b)"
            r"[a-zà-ÿ]+"
            r"(er|ir|re|ez|ons|e|es|ent|ai|a|it)\b"
        ),
    ),
    (
        # "pour la résilier", "comment le réserver": an infinitive after the pronoun.
        "object pronoun",
        _rx(
            r"\b(peux|peut|pouvez|puis|dois|doit|devez|faut|veux|voulez|faire|pour|comment|"
            r"où)\s*(le|la|les|l')\s*[a-zà-ÿ]+(er|ir|re)\b"
        ),
    ),
    ("object pronoun", _rx(r"\b(j'|n'|m'|t'|s')en\b|\ben\s+(reste|faut|existe|ai|avez|a)\b")),
    ("continuation", _rx(r"\b(aussi|également|d'autres|l'autre)\b")),
)
_EN_REFERENCES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("pronoun", _rx(r"\b(it|they|them|he|she|him|her|hers|theirs|itself|themselves)\b")),
    ("possessive", _rx(r"\b(its|their|his)\b")),
    ("demonstrative", _rx(r"\b(these|those)\b")),
    ("demonstrative", _rx(r"\b(this|that)\b(?!\s+(is|was)\s+(not\s+)?(a|an|the)\b)")),
    ("demonstrative", _rx(r"\b(one|ones)\s*\??$|\bthe\s+\w+\s+one\b|\bthe\s+one\b")),
    ("location", _rx(r"\bthe (city|town)\b")),
    ("location", _rx(r"(?<!is )(?<!are )(?<!was )(?<!were )\bthere\b(?!\s+(is|are|was|were)\b)")),
    (
        "ordinal",
        _rx(r"\bthe\s+(first|second|third|last|latter|former|other|same)\b(?!\s+time\b)"),
    ),
    ("continuation", _rx(r"\b(else|also|another|other|too|besides|again)\b")),
)
_FR_ELLIPSIS = _rx(r"^\s*(et|mais|ou|alors|puis|plutôt|ensuite)\b(?![-'])")
_EN_ELLIPSIS = _rx(r"^\s*(and|but|or|so|then|what about|how about|same|any other|anything else)\b")
# The user says the subject changes ("Autre question :", "Rien à voir, mais …", "Unrelated,
# but …"): what follows stands alone unless it holds an explicit reference.
_TOPIC_SHIFT = _rx(
    r"^\W*(?:\w+[.,!]?\s+){0,2}(autre chose|autre question|une autre question|rien à voir|"
    r"rien a voir|question différente|question differente|sans rapport|changement de sujet|"
    r"changeons de sujet|another question|different question|unrelated|something else|"
    r"on another note|changing the subject|different topic|new question)\b"
)
_IMPLICIT = frozenset({"ellipsis", "continuation", "no subject", "fragment"})
EXPLICIT = frozenset(
    {"pronoun", "possessive", "demonstrative", "location", "ordinal", "object pronoun"}
)
"""Reasons that point at something the question refers to (vs. one it only leaves out)."""
# A choice or a comparison between things the conversation named.
_FR_COMPARISON = _rx(
    r"\b(lequel|laquelle|lesquels|lesquelles|compar\w*|différence|les deux|"
    r"(le|la|les) (plus|moins) \w+|(le|la) meilleur\w*|mieux)\b"
)
_EN_COMPARISON = _rx(
    r"\b(which one|which of|which is|compar\w*|difference|both|the two|"
    r"(the )?(better|best|cheaper|cheapest|faster|longer|shorter|\w+er one))\b"
)
# A proper or product name not opening the question, or the business's own thing
# ("votre politique de retour"): the question says what it is about.
_NAME = re.compile(r"(?<!^)(?<![.?!]\s)\b[A-ZÀ-ÖØ-Þ][\w-]*|\b[^\W\d_]+\d\w*\b")
_OWN_SUBJECT = _rx(r"\b(votre|vos|your)\s+[^\W\d_]{3,}")


@dataclass(frozen=True)
class Detection:
    """What :func:`analyse` found in a question.

    Attributes:
        language: ``"fr"`` or ``"en"``.
        reasons: why the question needs rewriting; empty when it is standalone.

    Example:
        >>> Detection(language="en", reasons=()).standalone
        True
    """

    language: str
    reasons: tuple[str, ...]

    @property
    def standalone(self) -> bool:
        """True when nothing ties the question to the conversation."""
        return not self.reasons


def _names_subject(question: str) -> bool:
    return bool(_NAME.search(question.strip()) or _OWN_SUBJECT.search(question))


def analyse(question: str, language: str | None = None) -> Detection:
    """Find the references and ellipses that make ``question`` depend on the conversation.

    Args:
        question: the user's question.
        language: ``"fr"`` or ``"en"`` to skip language detection.

    Example:
        >>> analyse("Et la carte graphique ?").reasons
        ('ellipsis', 'no subject')
        >>> analyse("Quel est le prix du Dell XPS 15 ?").standalone
        True
    """
    if isinstance(question, str) and (language is None or isinstance(language, str)):
        return _analysed(question, language)
    return _analysed.__wrapped__(question, language)


# The topic policy asks again about every recent turn at each request: remembered.
@functools.lru_cache(maxsize=4096)
def _analysed(question: str, language: str | None) -> Detection:
    text = question.replace("’", "'").strip()
    lang = language or detect_language(text)
    words = WORD_RE.findall(text)
    reasons: list[str] = []
    if (_FR_ELLIPSIS if lang == "fr" else _EN_ELLIPSIS).search(text):
        reasons.append("ellipsis")
    for reason, pattern in _FR_REFERENCES if lang == "fr" else _EN_REFERENCES:
        if reason not in reasons and pattern.search(text):
            reasons.append(reason)
    if (_FR_COMPARISON if lang == "fr" else _EN_COMPARISON).search(text):
        reasons.append("comparison")
    if len(words) <= 3 and not _NAME.search(text):
        reasons.append("fragment")
    elif not _names_subject(text):
        reasons.append("no subject")
    if _TOPIC_SHIFT.search(text):
        reasons = [r for r in reasons if r not in _IMPLICIT]
    return Detection(language=lang, reasons=tuple(reasons))
