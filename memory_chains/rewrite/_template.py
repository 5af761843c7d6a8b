"""Writing the standalone question without a model, once the referent is known.

* :func:`ordinal_referent` resolves "le second", "du dernier", "the first one" against the
  most recent turn that listed several candidates;
* :func:`ellipsis_rewrite` turns "Et pour X ?", "Et celle du Lenovo ?", "What about Seoul?"
  into the previous user question with X put in, when that question stands alone;
* :func:`template_rewrite` puts a referent into the question: in place of an ordinal or a
  demonstrative ("ce modèle" → "le modèle HP Pavilion 14"), of a pronoun or a possessive
  (:func:`~memory_chains.rewrite._fallback.fallback_rewrite`'s substitutions), as the
  complement of an elliptic question ("Et côté garantie ?" → "Et côté garantie de Dell
  XPS 15 ?"), or else in parentheses at the end.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memory_chains.evaluation.metrics import fold
from memory_chains.rewrite._detect import analyse, detect_language
from memory_chains.rewrite._ellipsis import ellipsis_focus
from memory_chains.rewrite._entities import _names_in
from memory_chains.rewrite._history import Turn, last_user_text
from memory_chains.rewrite._substitute import _VOWEL, _of, _substitute

__all__ = ["ellipsis_rewrite", "focus_name", "ordinal_referent", "template_rewrite"]

_FR_ORDINAL = re.compile(
    r"\b(?P<det>le|la|du|au|de la)\s+(?P<ord>premier|première|second|seconde|deuxième|"
    r"troisième|dernier|dernière)\b(?:\s+(?:modèle|produit|cours|ville|abonnement))?",
    re.IGNORECASE,
)
_EN_ORDINAL = re.compile(
    r"\bthe\s+(?P<ord>first|second|third|last|former|latter)\b(?:\s+one\b)?", re.IGNORECASE
)
_INDEX = {
    "premier": 0,
    "premiere": 0,
    "first": 0,
    "former": 0,
    "second": 1,
    "seconde": 1,
    "deuxieme": 1,
    "troisieme": 2,
    "third": 2,
    "dernier": -1,
    "derniere": -1,
    "last": -1,
    "latter": -1,
}
_FR_DEMONSTRATIVE = re.compile(
    r"\b(?P<det>ce|cet|cette|ces)\s+(?P<noun>[a-zà-ÿ-]{3,})\b(?:-(?:ci|là))?", re.IGNORECASE
)
_FR_PRONOUN_DEMONSTRATIVE = re.compile(r"\b(celui|celle|ceux|celles)-(ci|là)\b", re.IGNORECASE)
_EN_DEMONSTRATIVE = re.compile(r"\b(this|that|these|those)\s+(one|ones)\b", re.IGNORECASE)
# "there" as a place, not the existential "there is" / "is there" / "there's".
_EN_THERE = re.compile(
    r"(?<!\bis\s)(?<!\bare\s)(?<!\bwas\s)(?<!\bwere\s)(?<!\bbe\s)\bthere\b"
    r"(?!\s+(?:is|are|was|were|will|would|be)\b|')",
    re.IGNORECASE,
)
_EN_TO_THERE = re.compile(r"\b(?:get|go|going|travel|fly|drive|walk|come|move|back)\s+$", re.I)
_OWNER = re.compile(
    r"^(?:celui|celle|ceux|celles|that|those|the one)\s+(?:de la |de l'|du |des |de |d'|of the "
    r"|of |from the |from )",
    re.IGNORECASE,
)
# "Et compare à celui de Lenovo ?", "Et comparé au Lenovo ?": a comparison with the previous
# question's referent asks the same question of the new name.
_COMPARE = re.compile(
    r"^(?:compar(?:e|ez|é|ée|er)|vs\.?|versus|compared?)\s+(?:(?:à|a|avec|to|with)\s+)?",
    re.IGNORECASE,
)
_DETERMINER = re.compile(
    r"^(?:(?:à|au|aux|en|in|to|at|for)\s+)?(?:(?:le|la|les|du|de la|des|the|a|an)\s+|l')?",
    re.IGNORECASE,
)
_NAME = re.compile(r"[A-Z]|\d")
# "de le cours" → "du cours" once a demonstrative became an article.
_CONTRACTED = {
    ("de", "le "): "du ",
    ("de", "les "): "des ",
    ("à", "le "): "au ",
    ("à", "les "): "aux ",
}
_BEFORE_ARTICLE = re.compile(r"\b(de|à)\s+$", re.IGNORECASE)


def _capitalised(text: str) -> str:
    text = " ".join(text.split())
    return text[:1].upper() + text[1:] if text else text


def _listed(turns: Sequence[Turn], candidates: Sequence[str]) -> list[str]:
    """Candidates in the order of the most recent turn that mentions two or more of them."""
    for _, text in reversed(turns):
        seen: list[str] = []
        for name in _names_in(text):
            full = next((c for c in candidates if fold(name) in fold(c)), name)
            if full not in seen:
                seen.append(full)
        if len(seen) >= 2:
            return seen
    return []


def ordinal_referent(question: str, turns: Sequence[Turn], candidates: Sequence[str]) -> str:
    """The candidate an ordinal designates ("" when the question has none or no list fits).

    Example:
        >>> turns = [("user", "Je compare le HP Pavilion 14 et le MacBook Air M2."),
        ...          ("assistant", "Le Pavilion est moins cher, le MacBook tient plus.")]
        >>> ordinal_referent("La garantie du second ?", turns, ["MacBook Air M2", "HP Pavilion 14"])
        'MacBook Air M2'
    """
    m = _FR_ORDINAL.search(question) or _EN_ORDINAL.search(question)
    if m is None:
        return ""
    index = _INDEX[fold(m.group("ord"))]
    listed = _listed(turns, candidates)
    if len(listed) < 2 or not -len(listed) <= index < len(listed):
        return ""
    return listed[index]


def _replace_ordinal(question: str, referent: str) -> str | None:
    m = _FR_ORDINAL.search(question)
    if m:
        det = m.group("det").lower()
        if det == "de la":
            named = _of(referent)
        else:
            named = {"du": "du ", "au": "au ", "le": "le "}.get(det, "") + referent
        return question[: m.start()] + named + question[m.end() :]
    m = _EN_ORDINAL.search(question)
    if m:
        return question[: m.start()] + "the " + referent + question[m.end() :]
    return None


def _replace_demonstrative(question: str, referent: str) -> str | None:
    m = _FR_PRONOUN_DEMONSTRATIVE.search(question)
    if m:
        return question[: m.start()] + referent + question[m.end() :]
    m = _FR_DEMONSTRATIVE.search(question)
    if m and fold(m.group("noun")) not in ("soir", "matin", "mois", "week-end", "annee"):
        det, noun = m.group("det").lower(), m.group("noun")
        article = (
            "les "
            if det == "ces"
            else ("l'" if _VOWEL.match(noun) else ("la " if det == "cette" else "le "))
        )
        before = question[: m.start()]
        preposition = _BEFORE_ARTICLE.search(before)
        if preposition and (preposition.group(1).lower(), article) in _CONTRACTED:
            before = before[: preposition.start()]
            article = _CONTRACTED[preposition.group(1).lower(), article]
        # a proper name in apposition ("le modèle HP Pavilion 14"), else a complement ("les
        # cours d'aquagym")
        named = referent if _NAME.match(referent) else _of(referent)
        return before + f"{article}{noun} {named}" + question[m.end() :]
    m = _EN_DEMONSTRATIVE.search(question)
    if m:
        return question[: m.start()] + f"the {referent}" + question[m.end() :]
    return None


def _replace_there(question: str, referent: str) -> str | None:
    """English "there" as a place: "get there" → "get to X" (French: see ``_substitute``)."""
    m = _EN_THERE.search(question)
    if m is None:
        return None
    preposition = "to" if _EN_TO_THERE.search(question[: m.start()]) else "in"
    return question[: m.start()] + f"{preposition} {referent}" + question[m.end() :]


def template_rewrite(question: str, referent: str) -> str:
    """``question`` with ``referent`` put in place of its reference, without a model.

    Example:
        >>> template_rewrite("Combien de temps dure la garantie du second ?", "MacBook Air M2")
        'Combien de temps dure la garantie du MacBook Air M2 ?'
        >>> template_rewrite("Ce modèle a quel processeur ?", "HP Pavilion 14")
        'Le modèle HP Pavilion 14 a quel processeur ?'
        >>> template_rewrite("Et côté garantie ?", "Dell XPS 15")
        'Et côté garantie de Dell XPS 15 ?'
        >>> template_rewrite("Can it borrow library books?", "Kobo Clara 2E")
        'Can Kobo Clara 2E borrow library books?'
    """
    q = " ".join(question.split())
    if not referent or fold(referent) in fold(q):
        return q
    french = detect_language(q) == "fr"
    for step in (
        lambda: _replace_ordinal(q, referent),
        lambda: None if french else _replace_there(q, referent),
        lambda: _substitute(q, referent),
        lambda: _replace_demonstrative(q, referent),
    ):
        done = step()
        if done is not None:
            return _capitalised(done)
    if french and ellipsis_focus(q) is not None:
        return f"{q.rstrip(' ?!.')} {_of(referent)} ?"
    return f"{q} ({referent})"


def focus_name(constituent: str) -> str:
    """The constituent of an elliptic question without "celle du", "à", articles.

    Example:
        >>> focus_name("celle du Lenovo"), focus_name("à Cracovie"), focus_name("the PocketBook")
        ('Lenovo', 'Cracovie', 'PocketBook')
    """
    return _DETERMINER.sub("", _OWNER.sub("", _COMPARE.sub("", constituent))).strip()


def ellipsis_rewrite(question: str, turns: Sequence[Turn], candidates: Sequence[str]) -> str | None:
    """The previous user question with the elliptic follow-up's constituent put in.

    Only when the constituent either replaces a name of the previous user question ("Et
    celle du Lenovo ?", "Et comparé au Lenovo ?") or is introduced by "pour" ("Et pour le
    samedi ?"), and that question stands alone, or its own reference is a pronoun or a
    possessive the new name can take ("Quelle est sa garantie ?" + "Et celle du
    Lenovo ?"); otherwise None (the model decides).

    Example:
        >>> turns = [("user", "Quelle est la garantie du Dell XPS 15 ?"), ("assistant", "2 ans.")]
        >>> ellipsis_rewrite("Et celle du Lenovo ?", turns, ["Dell XPS 15"])
        'Quelle est la garantie du Lenovo ?'
        >>> ellipsis_rewrite("Et pour les produits électroniques ?",
        ...                  [("user", "Quelle est votre politique de retour ?")], [])
        'Quelle est votre politique de retour pour les produits électroniques ?'
        >>> ellipsis_rewrite("Et compare à celui de Lenovo ?",
        ...                  [("user", "Quelle est sa garantie ?")], ["Dell XPS 15"])
        'Quelle est la garantie de Lenovo ?'
    """
    focus = ellipsis_focus(question)
    base = last_user_text(turns)
    if focus is None or not base:
        return None
    connector, constituent = focus
    if fold(constituent) in fold(base):
        return None
    bare = focus_name(constituent)
    if not analyse(base).standalone:
        # The previous question was itself a follow-up: the new name takes its reference.
        own = _substitute(base, bare) if _NAME.search(bare) else None
        return " ".join(own.split()) if own is not None else None
    if _NAME.search(bare):
        names = [*candidates, *_names_in(base)]
        for name in names:
            if name and fold(bare) not in fold(name) and fold(name) not in fold(bare):
                hit = re.search(re.escape(name), base, re.IGNORECASE)
                if hit:
                    return base[: hit.start()] + bare + base[hit.end() :]
    if connector == "pour":
        return f"{base.rstrip(' ?!.')} pour {constituent} ?"
    return None
