"""Typing a name from the sentence around it, not from a list of names.

:func:`type_evidence` scores each entity type for one name from what surrounds it and how
it is built:

* the name's own head noun ("Banque …", "… Solicitors", "rue …", "… Road", "gamme …",
  "… Card", "loi …", "… Programme"), its shape (a model number, a code-like ``orbilo-py``
  or ``@scope/pkg``, an address number, an acronym);
* the words just before it: a preposition ("à X", "in X", "chez X", "at X"), a title
  ("Mme X", "Dr X"), a self-introduction ("je suis X", "this is X"), a greeting ("Bonjour
  X,"), a kinship or role noun ("mon cousin X", "my advisor X"), a product noun ("l'offre
  X", "the X app"), a verb of use ("j'utilise X", "pip install x");
* the words just after it (", conseillère chez …", "… app", "… branch").

The name's own words come first: when they give a type, the sentence is not read.
Otherwise scores add up over every occurrence of the name in the turn; :func:`best_type`
picks the winner among the configured types. The cue words are the grammar of French and
English (determiners, prepositions, common nouns), never names of things.

Example:
    >>> text = "Je rentre à Wazemmes chez Ravalco avec Mme Berthier."
    >>> [best_type(type_evidence(text, n)) for n in ("Wazemmes", "Ravalco", "Berthier")]
    ['LOCATION', 'ORGANIZATION', 'PERSON']
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from memory_chains._folding import fold as fold_text

__all__ = ["NAME_HEADS", "best_type", "type_evidence"]

STRONG, MEDIUM, WEAK = 3.0, 2.0, 1.0


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Common nouns that head a name and say what it names (folded: no accents, lower case).
NAME_HEADS: Mapping[str, frozenset[str]] = {
    "ORGANIZATION": _set(
        "banque caisse cabinet clinique college lycee ecole universite institut garage musee "
        "fondation mutuelle boulangerie pharmacie hopital agence societe groupe association "
        "syndic assurances laboratoire laboratoires labo atelier entreprise entreprises "
        "tribunal mairie prefecture ministere compagnie transports immobilier habitat "
        "automobiles avocats notaires restaurant hotel club federation academie studio "
        "conseil cooperative centre editions services bank college university school academy "
        "institute clinic hospital care health solicitors lawyers law lettings estates "
        "properties realty software systems technologies tech labs lab analytics digital "
        "mobile wireless telecom telecoms networks freight logistics shipping deposits "
        "insurance group holdings partners associates consulting solutions foundation trust "
        "museum gallery theatre theater company co inc ltd llc plc gmbh sa sas sarl motors "
        "automotive media pharma bakery council agency office firm ventures capital energy "
        "airlines airways band orchestra ensemble choir team collective"
    ),
    "LOCATION": _set(
        "rue avenue boulevard bd allee impasse chemin route place quai cours montee passage "
        "square parc quartier zone lieu faubourg esplanade gare aeroport salle batiment "
        "residence porte pont ile plage street st road rd ave lane drive way square park "
        "hall room building tower terrace close crescent row gardens quay wharf station "
        "airport district village heights hill floor gate bridge mews parade "
        "plaza piazza calle strasse"
    ),
    "PRODUCT": _set(
        "gamme offre formule forfait abonnement pack carte compte contrat pret livret "
        "application appli app logiciel modele version option pass box kit serie edition "
        "plan card account package bundle tier model series range subscription policy "
        "cover sdk library plugin extension console"
    ),
    "CONCEPT": _set(
        "loi decret reglement article programme master licence bachelor msc mba bts bac "
        "diplome brevet certificat certification bootcamp track cursus parcours formation "
        "module bourse procedure dispositif regime statut label norme act law regulation "
        "directive program course degree diploma certificate scheme scholarship"
    ),
}
# Words inside a name that mark a product or an offer ("Stockéo Flex", "Halden Pro 2").
_PRODUCT_WORDS = _set(
    "pro plus premium max mini lite ultra basic standard essential essentiel business "
    "enterprise starter edition gold platinum"
)
# Job titles used as titles (CONCEPT in the default types).
_ROLE_WORDS = _set(
    "responsable directeur directrice head chief manager engineer developer developpeur "
    "ingenieur lead officer analyst analyste consultant designer architect architecte "
    "charge chargee coordinateur coordinatrice"
)
_SENIORITY = _set("senior junior principal staff lead")

# Words before the name: (folded words, ending right before the name) -> type, weight.
_BEFORE: tuple[tuple[str, str, float], ...] = (
    # French
    (r"(?:a|a la|a l'|au|aux)", "LOCATION", MEDIUM),
    (r"(?:en|vers|pres de|pres du|depuis|quartier|quartier de|quartier du)", "LOCATION", WEAK),
    (
        r"(?:habite a|habite au|vis a|vit a|installe a|installee a|base a|basee a)",
        "LOCATION",
        STRONG,
    ),
    (
        r"(?:agence de|agence d'|succursale de|antenne de|ville de|region de|entrepot de|"
        r"entrepot d'|site de|site d'|centre de|centre d'|usine de|siege de|magasin de|"
        r"boutique de|bureau de|bureaux de|campus de|depot de|showroom de|viens de|vient de|"
        r"originaire de|venant de|arrive de|rentre de|retour de|quartier des|quartier de la)",
        "LOCATION",
        STRONG,
    ),
    (
        r"(?:chez|client de|cliente de|client chez|cliente chez|travaille chez|travaille pour)",
        "ORGANIZATION",
        MEDIUM,
    ),
    (
        r"(?:m|mme|mlle|monsieur|madame|mademoiselle|me|maitre|dr|docteur|pr|professeur)"
        r"(?: le| la| de| du| van| von| ben| el)?",
        "PERSON",
        STRONG,
    ),
    (
        r"(?:je suis|ici|je m'appelle|c'est|moi c'est|de la part de|demandez|contactez|"
        r"bonjour|merci|salut|bonsoir|avec)",
        "PERSON",
        WEAK,
    ),
    (
        r"(?:mon|ma|notre|votre|une|un|son|sa) (?:amie|ami|cousin|cousine|fils|fille|frere|"
        r"soeur|mari|femme|conjoint|"
        r"conjointe|collegue|conseiller|conseillere|medecin|avocat|avocate|ami|amie|pere|mere|"
        r"voisin|voisine|fille|enfant|manager|responsable|contact|interlocuteur|interlocutrice)",
        "PERSON",
        STRONG,
    ),
    (
        r"(?:j'utilise|utilise|utiliser|installe|installer|install|acheter|achete|souscrire a|"
        r"souscrit a|commander|louer|telecharger|migrer vers|passer a|passer sur|import|"
        r"pip install|npm install|avec la lib|using|use|uses|used|with|upgrade to|"
        r"switch to|bought|buy|subscribe to|download|run|runs|running)",
        "PRODUCT",
        WEAK,
    ),
    (r"(?:le poste de|poste de|en tant que|comme)", "CONCEPT", STRONG),
    (r"(?:mon|ma|mes|my|notre|our|nos)", "PRODUCT", WEAK),  # "mon Orvane Kesta"
    # English
    (r"(?:in|near|around|outside|across|from central|downtown)", "LOCATION", MEDIUM),
    (r"(?:applying from|apply from|based out of|relocating to|relocate to)", "LOCATION", STRONG),
    (
        r"(?:to|come from|comes from|i'm from|we're from|visiting|flying to|travel to|"
        r"travelling to|traveling to|between)",
        "LOCATION",
        WEAK,
    ),
    (
        r"(?:live in|lives in|living in|based in|moving to|move to|moved to|located in|"
        r"branch in|office in|city of|town of|flat in|house in|apartment in)",
        "LOCATION",
        STRONG,
    ),
    (r"(?:at|with|from|by|of|for)", "ORGANIZATION", WEAK),
    (
        r"(?:work at|works at|working at|work for|works for|job at|customer of|member of|"
        r"account at|account with|bank with|banking with|the team at)",
        "ORGANIZATION",
        STRONG,
    ),
    (r"(?:mr|mrs|ms|miss|dr|prof|sir|dame|mx)(?: de| van| von| le| la| o')?", "PERSON", STRONG),
    (
        r"(?:i'm|i am|this is|my name is|name's|hi|hello|hey|thanks|thank you|dear|ask|ask for|"
        r"contact|speak to|talk to|call)",
        "PERSON",
        WEAK,
    ),
    (
        r"(?:my|our|your) (?:cousin|son|daughter|brother|sister|husband|wife|partner|colleague|"
        r"advisor|adviser|doctor|lawyer|friend|father|mother|mom|mum|dad|neighbour|neighbor|"
        r"manager|boss|landlord|contact|kid|child)",
        "PERSON",
        STRONG,
    ),
    (r"(?:the|a|an) (?:role of|position of|title of)", "CONCEPT", STRONG),
    (r"(?:as a|as an|as|role of|position of|title of|job title)", "CONCEPT", WEAK),
)
# Words after the name.
_AFTER: tuple[tuple[str, str, float], ...] = (
    (
        r"(?:, )?(?:conseiller|conseillere|gestionnaire|responsable|directeur|directrice|"
        r"agent|advisor|adviser|manager|consultant|consultante|avocat|avocate|medecin|"
        r"docteur|recruteur|recruteuse|recruiter|coordinator|coordinatrice|specialist|"
        r"specialiste|engineer|ingenieur|head|lead|from|de chez|who|qui)",
        "PERSON",
        MEDIUM,
    ),
    (
        r", (?:notre|votre|mon|ma|son|sa|our|your|my|his|her) [a-z]*(?:rice|eur|euse|iste|"
        r"ier|iere|ien|ienne|ant|ante|er|or|ist|ere)\b",
        "PERSON",
        MEDIUM,
    ),
    (
        r"(?: a dit| m'a dit| said| says| told| recommande| recommends| suggests| wrote|"
        r" a ecrit| est en conge| is away| travaille| travaillait| works| worked)",
        "PERSON",
        MEDIUM,
    ),
    (
        r"(?: app| application| appli| plan| card| account| library| package| pass| api| sdk|"
        r" plugin| subscription| model| range)",
        "PRODUCT",
        MEDIUM,
    ),
    (r"(?: role| position| poste| job| title| vacancy| opening)", "CONCEPT", MEDIUM),
    (
        r"(?: branch| office| area| district| neighbourhood| neighborhood| campus| station|"
        r" depot| showroom| site| warehouse| hub| location| premises)",
        "LOCATION",
        MEDIUM,
    ),
    (r"(?: inc| ltd| llc| plc| gmbh| sa| sas| sarl| group| groupe)", "ORGANIZATION", STRONG),
    (
        r"(?: propose| proposent| offers| offer| sells| vend| vendent| facture| charges|"
        r" emploie| employs| recrute| hires| is hiring)",
        "ORGANIZATION",
        WEAK,
    ),
)
# Nouns that say what the next name is without being part of it ("le fournisseur X",
# "the vendor X"); with the head nouns, "le syndic X", "la banque X", "the clinic X".
_LEAD_NOUNS: Mapping[str, frozenset[str]] = {
    "ORGANIZATION": _set(
        "marque startup editeur fournisseur transporteur prestataire magasin boutique site "
        "provider carrier vendor store shop brand"
    ),
    "PRODUCT": _set("plateforme bibliotheque librairie offer"),
}
_DETERMINERS = r"(?:le|la|les|l'|du|au|aux|un|une|notre|votre|the|our|your|my|a|an)"


def _lead(etype: str) -> str:
    nouns = NAME_HEADS[etype] | _LEAD_NOUNS.get(etype, frozenset())
    return rf"{_DETERMINERS}\s?(?:{'|'.join(sorted(nouns, key=len, reverse=True))})"


# "l'offre X", "le syndic X", "the clinic X": a determiner and a noun that says the type.
_BEFORE += tuple((_lead(t), t, STRONG) for t in ("ORGANIZATION", "PRODUCT", "CONCEPT"))
_BEFORE_RE = [(re.compile(rf"(?:^|[\s(]){p}\s*$"), t, w) for p, t, w in _BEFORE]
_AFTER_RE = [(re.compile(rf"^{p}\b"), t, w) for p, t, w in _AFTER]
_CODE_SHAPE = re.compile(r"^(?:@[\w.-]+/[\w.-]+|[a-z][\w]*[-_.][\w.-]+|[a-z]+\d+[a-z\d]*)$")
_MODEL_NUMBER = re.compile(r"(?:^|\s)(?:[A-Z]{0,3}\d{1,4}[a-zA-Z]{0,3}|\d+(?:\.\d+)*)$")
_ADDRESS = re.compile(r"^\d{1,5}(?:\s*(?:bis|ter))?,?\s")
_ACRONYM = re.compile(r"^[A-Z]{2,6}$")
_ACRONYM_OF = re.compile(r"^[A-Z]{2,6}\s+(?:de\s+|du\s+|des\s+|d['’]|of\s+)[A-ZÀ-Ý]")
# A full stop that ends a sentence, not a title's ("M. Benhamou", "Dr. Shah", "St. Mary").
FULL_STOP = r"(?:(?<!\bM)(?<!\bMr)(?<!\bMrs)(?<!\bMs)(?<!\bDr)(?<!\bSt)(?<!\bPr)\.)"
_SENTENCE_END = re.compile(rf"{FULL_STOP}|[!?\n]")
_OF_NAMED = re.compile(r"[A-ZÀ-Ý][\w-]+\s+(?:de\s+|d['’])$")


def _words(text: str) -> list[str]:
    return re.findall(r"[\w'’-]+|@[\w./-]+", fold_text(text).replace("’", "'"))


def name_scores(name: str) -> dict[str, float]:
    """Evidence from the name alone: its head nouns and its shape.

    Example:
        >>> name_scores("Maplestone Flex Card")["PRODUCT"] > 0, name_scores("rue Kéréon")
        (True, {'LOCATION': 3.0})
    """
    scores: dict[str, float] = {}

    def add(etype: str, weight: float) -> None:
        scores[etype] = scores.get(etype, 0.0) + weight

    words = _words(name)
    if not words:
        return scores
    first, last = words[0], words[-1]
    if first in ("le", "la", "les", "l'", "the") and len(words) > 1:
        first = words[1]
    for etype, heads in NAME_HEADS.items():
        if len(words) > 1 and (first in heads or last in heads):
            add(etype, STRONG)
        elif len(words) > 2 and any(w in heads for w in words[1:-1]):
            add(etype, WEAK)
    if len(words) > 1 and any(w in _PRODUCT_WORDS for w in words[1:]):
        add("PRODUCT", MEDIUM + WEAK / 2)
    if (
        len(words) > 1
        and (first in _ROLE_WORDS or first in _SENIORITY)
        and any(w in _ROLE_WORDS for w in words[1:])
    ):
        add("CONCEPT", STRONG)
    raw = name.strip()
    if _ADDRESS.match(raw):
        add("LOCATION", STRONG)
    if _CODE_SHAPE.match(raw):
        add("PRODUCT", STRONG)
    elif len(words) > 1 and _MODEL_NUMBER.search(raw) and not _ADDRESS.match(raw):
        add("PRODUCT", MEDIUM)
    if re.search(r"[a-z][A-Z]", raw) and " " not in raw:  # MonAltimo, iPhone, SafePlace
        add("PRODUCT", WEAK)
    if _ACRONYM.match(raw):
        add("CONCEPT", WEAK)
    elif _ACRONYM_OF.match(raw):  # "CPAM d'Ille-et-Vilaine", "CCI du Rhône": a local office
        add("ORGANIZATION", MEDIUM)
    return scores


def context_scores(text: str, start: int, end: int) -> dict[str, float]:
    """Evidence from the words around one occurrence ``text[start:end]``."""
    scores: dict[str, float] = {}
    left = text[max(0, start - 40) : start]
    cut = max((m.end() for m in _SENTENCE_END.finditer(left)), default=0)
    before = " ".join(_words(left[cut:]))
    right = text[end : end + 40]
    # Folding trims the text; the cues after a name start with its space (" app", " Ltd").
    after = (" " if right[:1].isspace() else "") + fold_text(right).replace("’", "'")
    for pattern, etype, weight in _BEFORE_RE:
        if pattern.search(before):
            scores[etype] = scores.get(etype, 0.0) + weight
    if _OF_NAMED.search(left[cut:]):  # "la Fondation Aalders d'Utrecht": a place
        scores["LOCATION"] = scores.get("LOCATION", 0.0) + MEDIUM
    for pattern, etype, weight in _AFTER_RE:
        if pattern.search(after):
            scores[etype] = scores.get(etype, 0.0) + weight
    return scores


def type_evidence(text: str, name: str, spans: Sequence[tuple[int, int]] = ()) -> dict[str, float]:
    """Type scores for ``name`` from its own words, else from every place the turn
    writes it.

    A name's own words outrank its sentence: "à la Clinique Saint-Aubin" is an
    organization whatever the preposition says, so the context is read only for a name
    whose words say nothing.

    Args:
        text: the turn.
        name: the name to type.
        spans: where it occurs (found case-insensitively in ``text`` when empty).
    """
    scores = name_scores(name)
    if scores:
        return scores
    if not spans:
        pattern = re.compile(rf"(?i)(?<!\w){re.escape(name)}(?!\w)")
        spans = [(m.start(), m.end()) for m in pattern.finditer(text)]
    for start, end in spans:
        for etype, weight in context_scores(text, start, end).items():
            scores[etype] = scores.get(etype, 0.0) + weight
    return scores


def best_type(
    scores: Mapping[str, float], allowed: Sequence[str] | None = None, default: str = ""
) -> str:
    """The best-scored type among ``allowed`` (all when None), or ``default`` on no evidence.

    Example:
        >>> best_type({"PERSON": 1.0, "LOCATION": 2.0}, ["PERSON", "PRODUCT"], "PRODUCT")
        'PERSON'
    """
    pool = {t: s for t, s in scores.items() if s > 0 and (allowed is None or t in allowed)}
    if not pool:
        return default
    return max(pool, key=lambda t: (pool[t], t == default))
