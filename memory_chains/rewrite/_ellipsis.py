"""Completing an elliptic follow-up from the question it continues.

"Et pour les produits électroniques ?" only makes sense as a variant of the previous
question: the standalone question is that previous question, completed with the new
constituent ("Quelle est votre politique de retour pour les produits électroniques ?"), or
with the new name in place of the old one ("Et pour le XPS 15 ?" after a question about the
ASUS ROG Strix G15). The small model often returns the previous question made standalone
but drops the new constituent: :func:`complete_ellipsis` puts it back.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memory_chains.evaluation.metrics import fold

__all__ = ["complete_ellipsis", "ellipsis_focus"]

_OPENER = re.compile(
    r"^\s*(?:et\s+(?P<fr_pour>pour\s+|concernant\s+|côté\s+|cote\s+|avec\s+)?"
    r"|and\s+(?:for\s+)?|what\s+about\s+|how\s+about\s+)(?P<rest>.+?)\s*[?!.]*\s*$",
    re.IGNORECASE,
)
_DETERMINER = re.compile(r"^(?:le|la|les|l'|l’|du|de la|des|un|une|the|a|an)\s*", re.IGNORECASE)
_NAME = re.compile(r"[A-Z]|\d")
_MAX_FOCUS_WORDS = 6


def ellipsis_focus(question: str) -> tuple[str, str] | None:
    """``(connector, constituent)`` of an elliptic follow-up, or None.

    Example:
        >>> ellipsis_focus("Et pour les produits électroniques ?")
        ('pour', 'les produits électroniques')
        >>> ellipsis_focus("What about Seoul?")
        ('', 'Seoul')
        >>> ellipsis_focus("Et la carte graphique ?")
        ('', 'la carte graphique')
        >>> ellipsis_focus("Quelle est sa garantie ?") is None
        True
    """
    m = _OPENER.match(question)
    if not m:
        return None
    rest = m.group("rest").strip()
    if not rest or len(rest.split()) > _MAX_FOCUS_WORDS:
        return None
    connector = (m.group("fr_pour") or "").strip().lower()
    return connector, rest


def complete_ellipsis(
    question: str, base: str, referents: Sequence[str], *, french: bool
) -> str | None:
    """The elliptic ``question`` made standalone from ``base``, the question it continues.

    When the constituent is a name and one of ``referents`` appears in ``base``, the name
    replaces it; otherwise the constituent is added at the end of ``base``. Returns None when
    ``question`` is not elliptic or ``base`` already contains the constituent.

    Example:
        >>> complete_ellipsis("Et pour les produits électroniques ?",
        ...                   "Quelle est votre politique de retour ?", [], french=True)
        'Quelle est votre politique de retour pour les produits électroniques ?'
        >>> complete_ellipsis("Et pour le XPS 15 ?",
        ...                   "Quelle est la carte graphique de l'ASUS ROG Strix G15 ?",
        ...                   ["ASUS ROG Strix G15"], french=True)
        "Quelle est la carte graphique de l'XPS 15 ?"
        >>> flight = "How long is the flight from London to Tokyo?"
        >>> complete_ellipsis("What about Seoul?", flight, ["Tokyo"], french=False)
        'How long is the flight from London to Seoul?'
    """
    focus = ellipsis_focus(question)
    base = " ".join(base.split())
    if focus is None or not base:
        return None
    connector, constituent = focus
    if fold(constituent) in fold(base):
        return None
    bare = _DETERMINER.sub("", constituent).strip()
    if _NAME.search(bare):
        for referent in referents:
            if referent and fold(bare) not in fold(referent):
                hit = re.search(re.escape(referent), base, re.IGNORECASE)
                if hit:
                    return base[: hit.start()] + bare + base[hit.end() :]
    stem = base.rstrip(" ?!.")
    if french:
        joiner = f" {connector} " if connector else " — "
        return f"{stem}{joiner}{constituent} ?"
    return f"{stem} — {constituent}?"
