"""Relations stated by a turn, found without a model: cue words between two typed names.

:func:`rule_relations` reads one turn (``User: …`` then ``Assistant: …``) and the typed
mentions found in it, sentence by sentence:

* ``WORKS_AT``: a person, then an organization, with a role or place-of-work cue between
  ("Nadia, conseillère chez Banque Aurelle", "Mei Ling from Kranji Freight");
* ``LOCATED_IN``: a name right before a place ("Kinsella College in Halifax", "rue Kéréon,
  Quimper"), or the user saying where they live;
* ``PART_OF``: a district of a place ("le quartier des Chartrons, à Bordeaux"), a product
  of a range ("l'Orthalis Teen, de la gamme Orthalis");
* ``MADE_BY``: a product whose name carries an organization's own word ("Maplestone Flex
  Card" and "Maplestone Bank"), or "X de / by Y";
* ``COMPARES_TO``: two names of one type with a comparison cue;
* ``OWNS``, ``PREFERS``, ``INTERESTED_IN``: from ``USER`` when the user says "mon / my",
  "je préfère / I'd rather", "je cherche / I'm interested in", or the assistant says
  "votre / your".

Example:
    >>> from memory_chains.entities._types import Mention
    >>> text = "Assistant: Je suis Nadia, conseillère chez Banque Aurelle à Lisbonne."
    >>> ms = [Mention("Nadia", "PERSON"), Mention("Banque Aurelle", "ORGANIZATION"),
    ...       Mention("Lisbonne", "LOCATION")]
    >>> [(r.source, r.kind, r.target) for r in rule_relations(text, ms)]
    [('Nadia', 'WORKS_AT', 'Banque Aurelle'), ('Banque Aurelle', 'LOCATED_IN', 'Lisbonne')]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memory_chains._folding import fold as fold_text
from memory_chains.entities._evidence import NAME_HEADS
from memory_chains.entities._fold import tokens
from memory_chains.entities._types import Mention, RelationMention

__all__ = ["rule_relations"]

USER = "USER"
_Rel = Callable[[str, str, str], None]
_RANGES = frozenset({"gamme", "range", "line", "series", "serie", "famille", "family"})
_THINGS = frozenset({"PRODUCT", "ORGANIZATION", "LOCATION", "CONCEPT", "PERSON"})
_PLACED = frozenset({"ORGANIZATION", "LOCATION", "PERSON"})


def _cue(pattern: str) -> re.Pattern[str]:
    return re.compile(rf"(?:^|\W)(?:{pattern})(?:\W|$)")


# Cues are matched on folded text (lower case, no accents).
_WORK = _cue(
    r"chez|at|from|of|with|de chez|travaille|travaillons|works?|working|conseill\w*|"
    r"gestionnaire|advis[eo]r|agent|manager|responsable|directeur|directrice|recrut\w*|"
    r"charge\w* de|head|lead|team|equipe|service|cabinet|here at|ici a|pour|for|de la|du|a la"
)
_NEAR_PLACE = _cue(
    r"a|au|aux|in|at|en|near|pres de|pres du|de|du|des|dans|on|sur|based in|located in|"
    r"situe\w* a|installe\w* a|quartier de|quartier du|quartier des|district of"
)
_DISTRICT = _cue(r"quartier|district|neighbou?rhood|arrondissement|area|secteur|faubourg")
_USER_PLACE = _cue(
    r"j'habite|habite|je vis|je vis a|je suis a|je suis base\w*|je rentre a|je demenage|"
    r"chez moi|mon adresse|notre adresse|je reside|i live|i'm based|i am based|i'm in|"
    r"i am in|i'm moving|we live|we're based|my address|our address|moving to|i'm from|"
    r"i'm currently in|je suis installe\w*|nous sommes a|nous habitons|votre adresse|"
    r"your address|vous habitez|you live"
)
_USER_OWNS = _cue(
    r"mon|ma|mes|my|notre|nos|our|j'ai|i have|i've got|i own|i bought|j'ai achete|je possede|"
    r"i'm on|je suis sur|i use|j'utilise|nous utilisons|we use|we're on|abonne\w* a|"
    r"subscribed to|client\w* (?:de|chez)"
)
_ASSISTANT_OWNS = _cue(r"votre|vos|your")
_PREFERS = _cue(
    r"je prefere|on prefere|nous preferons|je prends|je choisis|je vais prendre|je pars sur|"
    r"on part sur|va pour|i prefer|i'd prefer|we prefer|i'll take|i'll go with|let's go with|"
    r"we'll go with|i choose|i'd go for|i'll go for|plutot|rather|je retiens|je garde"
)
_NEGATED = _cue(r"pas|plutot pas|rather not|not|ne|n'|don't|won't|never|jamais")
_INTERESTED = _cue(
    r"je cherche|je recherche|je m'interesse|interesse\w* par|j'aimerais|je voudrais|"
    r"je souhaite|je pense a|j'envisage|envisage|tente\w* par|i'm interested|interested in|"
    r"i'm looking|looking for|looking at|i'd like|i want|i would like|tell me about|"
    r"considering|thinking about|curious about|infos? sur|renseignements? sur|"
    r"intrigued by|keen on|inscri\w*|sign up|enrol\w*|apply|postuler|candidater|book|reserver"
)
_COMPARE = _cue(
    r"compar\w*|vs\.?|versus|ou|or|entre|between|plutot que|rather than|contre|against|"
    r"difference|mieux|better|cheaper|moins cher|plus cher|instead of|au lieu de|ou bien"
)
_MADE = _cue(r"de|d'|du|by|from|of|chez|par|signe\w*|propose\w*|offers?|made by|developpe\w*")
_ORG_HEADS = NAME_HEADS["ORGANIZATION"]
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")


@dataclass(frozen=True)
class _Spot:
    start: int
    end: int
    mention: Mention


def _spots(text: str, mentions: Sequence[Mention]) -> list[_Spot]:
    """Where each mention occurs (longest names first; no overlaps)."""
    spots: list[_Spot] = []
    for m in sorted(mentions, key=lambda m: -len(m.name)):
        if m.type not in _THINGS:
            continue
        for hit in re.finditer(rf"(?i)(?<!\w){re.escape(m.name)}(?!\w)", text):
            if not any(s.start < hit.end() and hit.start() < s.end for s in spots):
                spots.append(_Spot(hit.start(), hit.end(), m))
    return sorted(spots, key=lambda s: s.start)


def _between(text: str, a: _Spot, b: _Spot) -> str:
    return fold_text(text[a.end : b.start].replace("’", "'"))


def _distinctive(name: str) -> set[str]:
    return {w for w in tokens(name) if len(w) >= 4 and w not in _ORG_HEADS}


def _is_street(m: Mention) -> bool:
    words = tokens(m.name)
    return bool(words) and (
        words[0].isdigit()
        or words[0] in NAME_HEADS["LOCATION"]
        or words[-1] in NAME_HEADS["LOCATION"]
    )


def rule_relations(text: str, mentions: Sequence[Mention]) -> tuple[RelationMention, ...]:
    """Relations the turn states between its mentions (and from the user)."""
    out: list[RelationMention] = []

    def rel(source: str, kind: str, target: str) -> None:
        r = RelationMention(source, kind, target)
        if source != target and r not in out:
            out.append(r)

    assistant_at = text.find("\nAssistant:")
    spots = _spots(text, mentions)
    for sentence in _SENTENCE.finditer(text):
        inside = [s for s in spots if sentence.start() <= s.start < sentence.end()]
        by_user = assistant_at < 0 or sentence.start() < assistant_at
        _pairs(text, inside, rel)
        _from_user(text, sentence.start(), inside, by_user, rel)
    _made_by(mentions, rel)
    return tuple(out)


def _pairs(text: str, inside: Sequence[_Spot], rel: _Rel) -> None:
    for i, a in enumerate(inside):
        for b in inside[i + 1 : i + 4]:
            gap = _between(text, a, b)
            if len(gap) > 60:
                break
            ta, tb = a.mention.type, b.mention.type
            if ta == "PERSON" and tb == "ORGANIZATION" and _WORK.search(gap):
                rel(a.mention.name, "WORKS_AT", b.mention.name)
            elif tb == "LOCATION" and ta in _PLACED and len(gap) <= 25 and (
                _NEAR_PLACE.search(gap) or gap.strip() in (",", "(", "-")
            ):
                kind = "LOCATED_IN"
                if ta == "LOCATION" and not _is_street(a.mention) and _DISTRICT.search(
                    fold_text(text[max(0, a.start - 20) : b.start])
                ):
                    kind = "PART_OF"
                rel(a.mention.name, kind, b.mention.name)
            elif (
                ta == "LOCATION"
                and tb == "LOCATION"
                and _is_street(b.mention)
                and not _is_street(a.mention)
                and gap.strip() in (",", "")
            ):
                rel(b.mention.name, "LOCATED_IN", a.mention.name)  # "Quimper, rue Kéréon"
            elif ta == tb and ta != "PERSON" and _COMPARE.search(gap) and len(gap) <= 30:
                rel(a.mention.name, "COMPARES_TO", b.mention.name)
            elif ta == "PRODUCT" and tb == "ORGANIZATION" and len(gap) <= 12 and _MADE.search(gap):
                rel(a.mention.name, "MADE_BY", b.mention.name)


def _from_user(
    text: str, offset: int, inside: Sequence[_Spot], by_user: bool, rel: _Rel
) -> None:
    last = offset
    for s in inside:
        before = fold_text(text[max(last, s.start - 40) : s.start].replace("’", "'"))
        kind = s.mention.type
        if kind == "LOCATION" and _USER_PLACE.search(before):
            rel(USER, "LOCATED_IN", s.mention.name)
        elif kind == "PRODUCT" and (
            (by_user and _USER_OWNS.search(before[-20:]))
            or (not by_user and _ASSISTANT_OWNS.search(before[-12:]))
        ):
            rel(USER, "OWNS", s.mention.name)
        elif by_user and kind != "PERSON" and _PREFERS.search(before) and not _NEGATED.search(
            before[-25:]
        ):
            rel(USER, "PREFERS", s.mention.name)
        elif by_user and kind in ("PRODUCT", "CONCEPT") and _INTERESTED.search(before):
            rel(USER, "INTERESTED_IN", s.mention.name)
        last = s.end


def _made_by(mentions: Sequence[Mention], rel: _Rel) -> None:
    orgs = [m for m in mentions if m.type == "ORGANIZATION"]
    products = [m for m in mentions if m.type == "PRODUCT"]
    ranges = [m for m in products if tokens(m.name)[:1] and tokens(m.name)[0] in _RANGES]
    for p in products:
        words = set(tokens(p.name))
        for r in ranges:
            if r is not p and _distinctive(r.name) - _RANGES & words:
                rel(p.name, "PART_OF", r.name)
        for o in orgs:
            if _distinctive(o.name) & words and tokens(o.name) != tokens(p.name):
                rel(p.name, "MADE_BY", o.name)
                break


