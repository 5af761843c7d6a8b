"""Candidate referents, extracted deterministically from the conversation.

Capitalised names ("Frank Zappa", "Mothers of Invention") and product names with digits
("Dell XPS 15", "ROG Strix G15", "Box 4G Ardoise") are collected from the most recent turn
backwards, so the first candidate is the most recently mentioned one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from memory_chains._calendar import is_calendar_word
from memory_chains._folding import fold, has_word
from memory_chains._terms import STOP_WORDS
from memory_chains.rewrite._history import Turn

__all__ = ["candidate_entities", "names_in"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_TOKEN = re.compile(r"\b(?:[ldjmnstc]|qu)'(?=\w)|\w[\w'-]*|[.!?;:,()\"«»€$£%]", re.UNICODE | re.I)
# Words inside a name ("Mothers of Invention"); not "and" / "et", which join two names far
# more often than they sit in one ("the Brava card and Orla").
_CONNECTORS = frozenset({"of", "de", "du", "des", "the", "la", "le", "&", "von"})
_COMMON = _words(
    """
    le la les l un une des du de et est sont quel quelle quels quelles qui que quoi où
    comment combien pourquoi il elle ils elles je tu nous vous on son sa ses leur leurs ce
    cette ces pour avec dans sur pas oui non bonjour merci bien très c'est j'ai voici voilà
    aussi mais donc alors puis ensuite enfin si par chez en au aux y a avez pouvez peux
    est-ce qu'est-ce the a an and is are was were what which who where when how why does do
    did it its they them their this that these those he she his her for with in on to can
    could should would i you we my your yes no hello thanks sure also but so then if there
    here yes please ok okay après avant depuis pendant entre selon sinon aujourd'hui demain
    hier ma mon mes ta ton tes notre nos votre vos deux trois quatre belle bon bonne
    excellent excellente pensez compare comparez parlez voici good great up lovely very
    tell i'm we're it's we'll se ça à at from
    """
)
_UNITS = _words(
    """
    go mo to ko gb mb tb kb ghz mhz hz mah wh kg g cm mm km h min eur usd ram
    """
)
_MEASURES = _words("h l ans an mois jours jour euros euro dollars pounds years months days")
_MAX_TOKENS = 6
_DIGITS = frozenset("0123456789")  # not "²", which str.isdigit() takes for one
# A model code inside a name: "4G", "5G", "3D" ("Box 4G Ardoise"); not "12h", "200Go".
_CODE = re.compile(r"\d+[A-Z][A-Z\d]*")


def _is_name_token(tok: str) -> bool:
    if tok.lower() in _UNITS or tok[:1].isdigit() or tok.endswith("'"):
        return False
    return tok[:1].isupper() or (bool(_DIGITS & set(tok)) and any(c.isalpha() for c in tok))


def _continues_name(toks: Sequence[str], j: int) -> bool:
    """True when ``toks[j]`` goes on the name before it: a name word, a model number or
    code ("XPS 15", "Box 4G")."""
    tok = toks[j]
    if _is_name_token(tok) or _model_number(toks, j) or tok.upper() == "RAM":
        return True
    return bool(_CODE.fullmatch(tok)) and tok.lower() not in _UNITS


def _model_number(toks: Sequence[str], j: int) -> bool:
    """True for a number that is part of a name ("XPS 15"), not an amount or a measure
    after it ("2 099 €", "48 h", "40 L")."""
    if not toks[j].isdigit():
        return False
    after = toks[j + 1] if j + 1 < len(toks) else ""
    if after in (",", ".") and j + 2 < len(toks) and toks[j + 2].isdigit():
        return False  # "12,99 €": an amount
    return not (
        after.isdigit() or (after and after in "€$£%") or after.lower() in _UNITS | _MEASURES
    )


def names_in(text: str) -> list[str]:
    """The names ``text`` holds, in order ("Le Dell XPS 15 ou le Lenovo ?" → both).

    Example:
        >>> names_in("Je compare le Dell XPS 15 et le Lenovo ThinkPad.")
        ['Dell XPS 15', 'Lenovo ThinkPad']
        >>> names_in("The Orla Fund replied on Tuesday 4 June, as in March.")
        ['Orla Fund']
    """
    toks = _TOKEN.findall(text.replace("’", "'"))
    names: list[str] = []
    i = 0
    while i < len(toks):
        tok = toks[i]
        sentence_start = i == 0 or toks[i - 1] in {".", "!", "?", ":", "«", '"'}
        # A capitalised verb or function word opening a sentence ("Parlez-moi",
        # "Avez-vous", "Will I", "That's Nimbus Lite") starts no name.
        opener = sentence_start and (
            tok.lower() in _COMMON or "-" in tok or fold(tok).split("'")[0] in STOP_WORDS
        )
        if not _is_name_token(tok) or opener:
            i += 1
            continue
        run = [tok]
        j = i + 1
        while j < len(toks) and len(run) < _MAX_TOKENS:
            nxt = toks[j]
            if _continues_name(toks, j):
                run.append(nxt)
                j += 1
            elif (
                nxt.lower() in _CONNECTORS
                and j + 1 < len(toks)
                and toks[j + 1][:1].isupper()
                and toks[j + 1].lower() not in _COMMON
            ):
                run.extend([nxt, toks[j + 1]])
                j += 2
            else:
                break
        name = " ".join(run)
        single_common = len(run) == 1 and (tok.lower() in _COMMON or len(tok) < 2)
        # A lone capitalised word opening a sentence is usually just the sentence's first
        # word ("Déclarez le sinistre"); a name there shows itself by a digit or an inner
        # capital ("BioSèvre"), or by being named again mid-sentence.
        plain_opener = sentence_start and len(run) == 1 and tok[1:].islower()
        # "February", "Tuesday 4 June": a date, never what a question is about.
        a_date = all(is_calendar_word(t) or t.isdigit() for t in run)
        if not single_common and not plain_opener and not a_date:
            names.append(name)
        i = j
    return names


def candidate_entities(
    turns: Sequence[Turn],
    hints: Iterable[str] = (),
    limit: int = 6,
    *,
    always: Iterable[str] = (),
) -> tuple[str, ...]:
    """Names mentioned in ``turns``, most recent first, then the caller's ``hints``.

    A name contained in one already listed ("XPS 15" after "Dell XPS 15") is skipped; a
    longer name containing one already listed takes its place. At most ``limit`` names,
    then the ``always`` names the list does not cover yet (the conversation's opening
    names, which must not be cut by a window that names many things).

    Example:
        >>> turns = [("user", "Je cherche le Dell XPS 15"), ("assistant", "Le XPS 15 est fin.")]
        >>> candidate_entities(turns)
        ('Dell XPS 15',)
        >>> candidate_entities(turns, limit=0, always=["Dell XPS 15"])
        ('Dell XPS 15',)
    """
    found: list[str] = []

    def add(name: str) -> None:
        low = name.lower()
        for k, known in enumerate(found):
            # whole words: "xps 15" is in "dell xps 15", "us" is not in "nimbus"
            if has_word(known.lower(), low):
                return
            if has_word(low, known.lower()):
                found[k] = name
                return
        found.append(name)

    for _, text in reversed(turns):
        # Within a turn, the last mention is the most recent one.
        for name in reversed(names_in(text)):
            add(name)
    # The caller's hints (an entity memory) come after what the history shows: they reach
    # referents that left the window, but ahead of the history they drown the recent ones.
    for hint in hints:
        if hint.strip():
            add(" ".join(hint.split()))
    kept = found[:limit]
    covered = [fold(name) for name in kept]
    extra = [name for name in always if not any(fold(name) in c for c in covered)]
    return (*kept, *extra)
