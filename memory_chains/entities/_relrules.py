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
from memory_chains.entities._types import Entity, Mention, RelationMention

__all__ = ["HOUSE", "fits", "implied_relations", "rule_relations", "speaks_for"]

USER = "USER"
#: The target of a ``WORKS_AT`` whose organization is the one the assistant speaks for,
#: when the turn does not name it ("Karim, notre technicien, …" two turns after "Chez
#: Vitrafix, nous…"): the entity state resolves it.
HOUSE = "@house"
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
    r"your address|vous habitez|you live|je viens de|i come from|applying from|"
    r"vous etes bien au|vous etes bien a|vous etes au|vous etes a|you're at|you are at|"
    r"you're in|you are in|chez vous a|chez vous au"
)
_USER_OWNS = _cue(
    r"mon|ma|mes|my|notre|nos|our|j'ai|i have|i've got|i own|i bought|j'ai achete|je possede|"
    r"i'm on|je suis sur|we're on|abonne\w* a|"
    r"subscribed to|client\w* (?:de|chez)"
)
_YOUR = re.compile(r"(?:^|\W)(?:votre|vos|your)(?:\s+[\w'-]+){0,2}\s*$")
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
    r"intrigued by|keen on|inscri\w*|sign up|enrol\w*|apply|postuler|candidater|book|reserver|"
    r"applying for|apply for|applied for|applying to|applied to|signing up for|sign up for|"
    r"register for|tickets? for|tables? for|seats? for|places? pour|billets? pour|"
    r"je postule|j'ai postule|candidature pour|candidat\w* a|au sujet de|concernant|about"
)
_PREFERS_AFTER = re.compile(
    r"^\W*(?:then\b|alors\b|ca me va|me va|me convient|suits me|works for me|sounds good|"
    r"it is|it's|c'est mieux|c'est bon|for me|pour moi|est mon choix|is my choice)"
)
_INTERESTED_AFTER = re.compile(
    r"^\W*(?:m'interesse|nous interesse|me tente|m'attire|looks interesting|sounds interesting|"
    r"interests me|appeals to me|looks good|me plait|a l'air bien)"
)
_COMPARE = _cue(
    r"compar\w*|vs\.?|versus|ou|or|entre|between|plutot que|rather than|contre|against|"
    r"difference|mieux|better|cheaper|moins cher|plus cher|instead of|au lieu de|ou bien"
)
_JOINED = re.compile(r"^\W*(?:et|and|avec|with|,)(?:\W+(?:le|la|les|l'|the|un|une|a|an))?\W*$")
_MADE = _cue(r"de|d'|du|by|from|of|chez|par|signe\w*|propose\w*|offers?|made by|developpe\w*")
_MADE_BY = _cue(
    r"(?:fabrique\w*|made|built|edite\w*|developpe\w*|produit\w*|concu\w*|designed|"
    r"developed|published|sold|vendu\w*|distribue\w*|propose\w*|offered|provided|fourni\w*)"
    r" (?:par|by)|du laboratoire|de la marque|of the brand|from the makers of"
)
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
        _pairs(text, sentence.start(), inside, rel)
        _from_user(text, sentence.start(), inside, by_user, rel)
    if assistant_at >= 0:
        _for_the_house(text, [s for s in spots if s.start > assistant_at], rel)
    _made_by(mentions, rel)
    return tuple(out)


# The assistant speaking for its organization: "Chez Linguaverse, nous…", "At X we…".
_HOUSE_BEFORE = re.compile(
    r"(?:^|\W)(?:chez|ici|at|here at|welcome to|bienvenue chez|bienvenue a|de la part de|"
    r"au nom de|on behalf of|pour)\W*$"
)
# A greeting that names the house: "you've reached X", "ici la X", "vous êtes bien chez X".
_REACHED = re.compile(
    r"(?:^|\W)(?:you've reached|you have reached|vous etes bien chez|vous etes chez|"
    r"bienvenue chez|welcome to|ici(?: la| le| l'| les)?)\W*$"
)
_HOUSE_AFTER = re.compile(r"^\s*,?\s*(?:nous|on|we|our|notre|nos|vous propose|offers?)\b")
# People the assistant introduces as its own: "ici Nadia", "notre conseillère Keiko",
# "our housing solicitor, Sam", "I'm Sam"; or presents after the name: "Karim, notre
# technicien", "Sam, one of our nurses", "Sam from our sales team", "Keiko, qui enseigne
# chez nous". The possessive says it, whatever the role noun.
_STAFF_BEFORE = re.compile(
    r"(?:^|\W)(?:je suis|ici|moi c'est|je m'appelle|i'm|i am|this is|my name is|"
    r"(?:mon|ma|notre|nos|my|our)(?:\s+[\w'-]+){1,3}\s*,?)\s*$"
)
_STAFF_AFTER = re.compile(
    r"^\s*(?:,\s*(?:(?:notre|nos|our|mon|ma|my)\b|(?:l'une?|un|une|one) (?:de nos|des notres|"
    r"of our)\b)|,?\s*(?:from|de) (?:our|notre)\b|,\s*(?:qui|who)\b[^.,;]{0,40}"
    r"\b(?:chez nous|with us|for us|here)\b)"
)
# Sites of the house: "notre entrepôt de Bondoufle", "our Stockport depot".
_SITE_BEFORE = re.compile(
    r"(?:notre|nos|our) (?:entrepot|site|agence|showroom|depot|bureau|bureaux|office|"
    r"branch|campus|centre|center|magasin|boutique|store|atelier|garage|clinique|clinic|"
    r"cabinet|siege|headquarters|hq|usine|plant|warehouse|hub)s?\W+(?:de |d'|du |in |at |a )?$"
)
_SITE_AFTER = re.compile(
    r"^\W*(?:entrepot|site|agence|showroom|depot|office|branch|campus|centre|center|"
    r"store|warehouse|hub|clinic|garage)\b"
)


def speaks_for(text: str, mentions: Sequence[Mention]) -> tuple[str, bool]:
    """The organization the assistant speaks for in this turn, and whether it says so.

    ``("X", True)`` when the assistant's part says it ("Chez X, nous…", "At X we…",
    "you've reached X"), ``("X", False)`` when X is the only organization it names,
    ``("", False)`` otherwise.

    Example:
        >>> ms = [Mention("Linguaverse", "ORGANIZATION")]
        >>> speaks_for("User: Salut\\nAssistant: Chez Linguaverse, nous avons un cours.", ms)
        ('Linguaverse', True)
    """
    assistant_at = text.find("\nAssistant:")
    if assistant_at < 0:
        return "", False
    spots = [s for s in _spots(text, mentions) if s.start > assistant_at]
    return _house(text, spots)


def _house(text: str, spots: Sequence[_Spot]) -> tuple[str, bool]:
    for s in spots:
        if s.mention.type != "ORGANIZATION":
            continue
        before = fold_text(text[max(0, s.start - 20) : s.start].replace("’", "'"))
        after = fold_text(text[s.end : s.end + 20].replace("’", "'"))
        if _HOUSE_BEFORE.search(before) and (_HOUSE_AFTER.match(after) or "chez" in before):
            return s.mention.name, True
        if _REACHED.search(before):
            return s.mention.name, True
    orgs = {s.mention.name for s in spots if s.mention.type == "ORGANIZATION"}
    return (orgs.pop(), False) if len(orgs) == 1 else ("", False)


def _for_the_house(text: str, spots: Sequence[_Spot], rel: _Rel) -> None:
    """Staff and sites of the organization the assistant speaks for. Staff go to
    :data:`HOUSE` when the turn does not say which organization that is: the entity
    state resolves it to the one an earlier turn named."""
    house, stated = _house(text, spots)
    for s in spots:
        before = fold_text(text[max(0, s.start - 40) : s.start].replace("’", "'"))
        if s.mention.type == "PERSON" and (
            _STAFF_BEFORE.search(before)
            or _STAFF_AFTER.match(fold_text(text[s.end : s.end + 60].replace("’", "'")))
        ):
            rel(s.mention.name, "WORKS_AT", house if stated else HOUSE)
        elif (
            house
            and s.mention.type == "LOCATION"
            and (
                _SITE_BEFORE.search(before)
                or (
                    re.search(r"(?:notre|nos|our)\W*$", before)
                    and _SITE_AFTER.match(fold_text(text[s.end : s.end + 15]))
                )
            )
        ):
            rel(house, "LOCATED_IN", s.mention.name)


def _pairs(text: str, start: int, inside: Sequence[_Spot], rel: _Rel) -> None:
    for i, a in enumerate(inside):
        for b in inside[i + 1 : i + 4]:
            gap = _between(text, a, b)
            if len(gap) > 60:
                break
            ta, tb = a.mention.type, b.mention.type
            if ta == "PERSON" and tb == "ORGANIZATION" and _WORK.search(gap):
                rel(a.mention.name, "WORKS_AT", b.mention.name)
            elif (
                tb == "LOCATION"
                and ta in _PLACED
                and len(gap) <= 25
                and (_NEAR_PLACE.search(gap) or gap.strip() in (",", "(", "-"))
            ):
                if ta != "LOCATION":
                    rel(a.mention.name, "LOCATED_IN", b.mention.name)
                    continue
                inner, outer = a, b
                if _is_street(b.mention) and not _is_street(a.mention):
                    inner, outer = b, a  # "Quimper, rue Kéréon"
                elif _DISTRICT.search(gap):
                    inner, outer = b, a  # "Berlin, dans le quartier de Kreuzberg"
                # A district is one name ("Headingley, Leeds"); a street or building is in.
                district = not _is_street(inner.mention) and len(tokens(inner.mention.name)) == 1
                kind = "PART_OF" if district else "LOCATED_IN"
                rel(inner.mention.name, kind, outer.mention.name)
            elif (
                ta == tb
                and ta in _THINGS
                and len(gap) <= 30
                and (
                    _COMPARE.search(gap)
                    or (
                        _JOINED.match(gap)
                        and _COMPARE.search(fold_text(text[start : a.start].replace("’", "'")))
                    )
                )
            ):
                rel(a.mention.name, "COMPARES_TO", b.mention.name)  # "entre X et Y"
            elif (
                ta == "PRODUCT"
                and tb == "ORGANIZATION"
                and (
                    (len(gap) <= 12 and _MADE.search(gap))
                    or (len(gap) <= 45 and _MADE_BY.search(gap))
                )
            ):
                rel(a.mention.name, "MADE_BY", b.mention.name)


def _from_user(text: str, offset: int, inside: Sequence[_Spot], by_user: bool, rel: _Rel) -> None:
    last = offset
    for s in inside:
        before = fold_text(text[max(last, s.start - 40) : s.start].replace("’", "'"))
        kind = s.mention.type
        if kind == "LOCATION" and _USER_PLACE.search(before):
            rel(USER, "LOCATED_IN", s.mention.name)
        elif kind == "PRODUCT" and (
            (by_user and _USER_OWNS.search(before[-20:])) or (not by_user and _YOUR.search(before))
        ):
            rel(USER, "OWNS", s.mention.name)
        elif (
            by_user
            and kind != "PERSON"
            and _PREFERS.search(before)
            and not _NEGATED.search(before[-25:])
        ):
            rel(USER, "PREFERS", s.mention.name)
        elif by_user and kind in ("PRODUCT", "CONCEPT") and _INTERESTED.search(before):
            rel(USER, "INTERESTED_IN", s.mention.name)
        elif by_user and kind != "PERSON":
            after = fold_text(text[s.end : s.end + 25].replace("’", "'"))
            if _PREFERS_AFTER.match(after):
                rel(USER, "PREFERS", s.mention.name)
            elif kind in ("PRODUCT", "CONCEPT") and _INTERESTED_AFTER.match(after):
                rel(USER, "INTERESTED_IN", s.mention.name)
        last = s.end


def _named(items: Sequence[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """``(key, kind, key)`` relations implied by names, over ``(key, name, type)`` items."""
    out: list[tuple[str, str, str]] = []
    orgs = [(k, n) for k, n, t in items if t == "ORGANIZATION"]
    products = [(k, n) for k, n, t in items if t == "PRODUCT"]
    ranges = [(k, n) for k, n in products if tokens(n)[:1] and tokens(n)[0] in _RANGES]
    for key, name in products:
        words = set(tokens(name))
        for rkey, rname in ranges:
            if rkey != key and _distinctive(rname) - _RANGES & words:
                out.append((key, "PART_OF", rkey))
        for okey, oname in orgs:
            if _distinctive(oname) & words and tokens(oname) != tokens(name):
                out.append((key, "MADE_BY", okey))
                break
    return out


def _made_by(mentions: Sequence[Mention], rel: _Rel) -> None:
    for source, kind, target in _named([(m.name, m.name, m.type) for m in mentions]):
        rel(source, kind, target)


def implied_relations(entities: Sequence[Entity]) -> list[tuple[str, str, str]]:
    """Relations that names imply, whichever turns they came from, by entity id: a product
    named after an organization is made by it ("Maplestone Flex Card", "Maplestone Bank"),
    a product named after a range is part of it ("Orthalis Teen", "gamme Orthalis").

    Example:
        >>> from memory_chains.entities._types import Entity
        >>> implied_relations([Entity("e1", "Maplestone Bank", "ORGANIZATION"),
        ...                    Entity("e2", "Maplestone Flex Card", "PRODUCT")])
        [('e2', 'MADE_BY', 'e1')]
    """
    return _named([(e.id, e.name, e.type) for e in entities])


_ENDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "WORKS_AT": (frozenset({"PERSON"}), frozenset({"ORGANIZATION"})),
    "LOCATED_IN": (
        frozenset({"ORGANIZATION", "LOCATION", "PERSON", USER, "PRODUCT"}),
        frozenset({"LOCATION"}),
    ),
    "OWNS": (frozenset({USER, "PERSON", "ORGANIZATION"}), frozenset({"PRODUCT"})),
    "MADE_BY": (frozenset({"PRODUCT"}), frozenset({"ORGANIZATION"})),
    "PREFERS": (frozenset({USER}), _THINGS),
    "INTERESTED_IN": (frozenset({USER}), _THINGS),
}


def fits(kind: str, source_type: str, target_type: str) -> bool:
    """Whether a relation kind may join ends of these types ("" = unknown: allowed).

    Example:
        >>> fits("WORKS_AT", "PERSON", "ORGANIZATION"), fits("PREFERS", "PERSON", "PRODUCT")
        (True, False)
    """
    if kind == "COMPARES_TO":
        return (
            not source_type
            or not target_type
            or (source_type == target_type and source_type in _THINGS)
        )
    if kind == "PART_OF":
        return not source_type or not target_type or source_type == target_type
    ends = _ENDS.get(kind)
    if ends is None:
        return True  # a kind of the application's own
    return (not source_type or source_type in ends[0]) and (
        not target_type or target_type in ends[1]
    )
