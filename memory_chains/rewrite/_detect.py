"""Deciding, without a model, whether a question depends on the conversation.

:func:`analyse` returns a :class:`Detection`: the question's language and the reasons it
needs rewriting (an empty tuple means it is standalone and is left untouched). A question is
standalone when it holds no reference (pronoun, possessive, demonstrative, ordinal,
location adverb), does not open with an ellipsis ("Et …", "What about …"), is not a bare
fragment, and names its own subject (a proper or product name, a "de …"/"of …" complement,
or enough words).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memory_chains._language import WORD_RE, detect_language

__all__ = ["Detection", "analyse", "detect_language"]


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE | re.UNICODE)


# (reason, pattern) pairs, checked on the question with ’ normalised to '.
_FR_REFERENCES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("pronoun", _rx(r"\b(il|elle|ils|elles)\b(?!\s+(y\s+a|faut|pleut|existe)\b)")),
    ("pronoun", _rx(r"-(il|elle|ils|elles|le|la|les|lui|leur|en|y)\b")),
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
    ("location", _rx(r"\b(là-bas|là|y aller|s'y|j'y|on y|y a-t-il|y trouve|sur place)\b")),
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
            r"\b(je|j'|tu|on|nous|vous|ne|n'|peux|peut|pouvez|puis|dois|doit|devez|faut|"
            r"veux|voulez|faire|pour|comment|où)\s*(le|la|les|l')\s*"
            r"(?!(plus|moins|meilleur|meilleure|prix|même|matin|soir|week-end|samedi|"
            r"dimanche|lundi|mardi|mercredi|jeudi|vendredi)\b)[a-zà-ÿ]+"
            r"(er|ir|re|ez|ons|e|es|ent|ai|a|it)\b"
        ),
    ),
    ("object pronoun", _rx(r"\b(j'|n'|m'|t'|s')en\b|\ben\s+(reste|faut|existe|ai|avez|a)\b")),
    ("continuation", _rx(r"\b(aussi|également|d'autres|l'autre|autre chose)\b")),
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
_FR_ELLIPSIS = _rx(r"^\s*(et|mais|sinon|ou|alors|puis|plutôt|ensuite)\b(?![-'])")
_EN_ELLIPSIS = _rx(r"^\s*(and|but|or|so|then|what about|how about|same|any other|anything else)\b")
# Nouns naming an attribute of something ("la durée de la garantie"): a complement made of
# them does not name the question's subject.
_ATTRIBUTES = (
    "garantie|prix|tarif|tarifs|coût|durée|taille|poids|couleur|couleurs|autonomie|écran|"
    "batterie|horaire|horaires|adresse|capacité|dimensions|version|modèle|processeur|mémoire|"
    "stockage|note|avis|délai|délais|niveau|fréquence|"
    "warranty|price|cost|size|weight|color|colour|battery|screen|schedule|address|capacity|"
    "version|model|processor|memory|storage|rating|level|duration"
)
_FR_SUBJECT = _rx(
    r"(\b(de|du|des|à|au|aux|pour|chez|sur)\s+|\bd')(la\s+|le\s+|l'|les\s+)?"
    rf"(?!({_ATTRIBUTES}|quel|quelle|quels|quelles|quoi|qui|place|ville|partir)\b)[a-zà-ÿ]{{3,}}"
    r"|\b(votre|vos)\s+[a-zà-ÿ]{3,}"
)
_EN_SUBJECT = _rx(
    r"\b(of|for|at|in|on|about|from|to|with|by)\s+(the\s+|a\s+|an\s+)?"
    rf"(?!({_ATTRIBUTES}|which|what|whom|city|town|place)\b)[^\W\d_]{{3,}}"
    r"|\byour\s+\w{3,}"
)
_NAME = re.compile(r"(?<!^)(?<![.?!]\s)\b[A-Z][\w-]*|\b[^\W\d_]+\d\w*\b")


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


def _names_subject(question: str, words: list[str], language: str) -> bool:
    if _NAME.search(question.strip()):
        return True
    pattern = _FR_SUBJECT if language == "fr" else _EN_SUBJECT
    return bool(pattern.search(question)) or len(words) >= 9


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
    text = question.replace("’", "'").strip()
    lang = language or detect_language(text)
    words = WORD_RE.findall(text)
    reasons: list[str] = []
    if (_FR_ELLIPSIS if lang == "fr" else _EN_ELLIPSIS).search(text):
        reasons.append("ellipsis")
    for reason, pattern in _FR_REFERENCES if lang == "fr" else _EN_REFERENCES:
        if reason not in reasons and pattern.search(text):
            reasons.append(reason)
    if len(words) <= 3 and not _NAME.search(text):
        reasons.append("fragment")
    elif not _names_subject(text, words, lang):
        reasons.append("no subject")
    return Detection(language=lang, reasons=tuple(reasons))
