"""Entity extraction without any model call: patterns, small gazetteers, optional spaCy.

:class:`RuleEntityExtractor` finds e-mails, order / ticket / booking ids, amounts, dates,
product names (a brand or product line followed by model tokens), skills and job titles,
and capitalised names typed by gazetteers — or by spaCy's ``fr_core_news_sm`` when it is
installed (``pip install memory-chains[nlp]``). It also recognises names the memory
already knows, so later mentions ("le XPS") are counted. It makes zero model calls.

Example:
    >>> x = RuleEntityExtractor(use_spacy=False).extract(
    ...     "User: Le Dell XPS 15 coûte 1599 € chez Boulanger ?", ["PRODUCT", "MONEY"])
    >>> [(m.name, m.type) for m in x.mentions], x.model_calls
    ([('Dell XPS 15', 'PRODUCT'), ('1599 €', 'MONEY')], 0)
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any

from memory_chains.entities._fold import _words, fold
from memory_chains.entities._types import Extraction, Mention, RelationMention

__all__ = ["RuleEntityExtractor"]

log = logging.getLogger("memory_chains.entities")

_BRANDS = _words(
    "Dell Lenovo Apple Samsung HP Asus Acer Sony Google Microsoft Xiaomi Huawei Nintendo "
    "Canon Nikon Bose Dyson Philips LG Garmin Fitbit Logitech Razer MSI Toshiba Nokia OnePlus "
    "Oppo Tesla Renault Peugeot Citroën Bosch Whirlpool Nespresso DeLonghi iRobot GoPro JBL "
    "Motorola Honor Fairphone Kobo Amazon Sennheiser Sonos Epson Brother Panasonic Fujifilm "
    "Toyota Volkswagen BMW Audi Ikea Miele Seb Moulinex Rowenta Krups Thermomix Withings"
)
_PRODUCT_LINES = _words(
    "iPhone iPad MacBook iMac AirPods Galaxy Pixel ThinkPad IdeaPad Yoga XPS Inspiron "
    "Latitude Surface PlayStation Xbox Switch Kindle ZenBook VivoBook ROG Aspire Swift "
    "Pavilion EliteBook Spectre Envy Chromebook Watch Echo Zoe Clio Model Roomba Vertuo Redmi "
    "Mate Legion Predator Alienware Precision Nitro Bravia Freebox Livebox"
)
_ORGS = _words(
    "Fnac Darty Boulanger Amazon Cdiscount Carrefour Leclerc Auchan Decathlon Orange SFR "
    "Bouygues Free Airbnb Booking Expedia Uber SNCF Ouigo Eurostar Lufthansa Ryanair easyJet "
    "KLM Delta Emirates Qatar Google Microsoft Apple Meta Netflix Spotify PayPal Stripe Visa "
    "Mastercard Chronopost Colissimo DHL UPS FedEx Hertz Avis Europcar Sixt Accor Ibis "
    "Novotel Hilton Marriott Capgemini Sopra Atos Thales Airbus Renault Michelin BNP "
    "LCL Revolut Salesforce Oracle IBM Deloitte Accenture Doctolib Blablacar Vinted "
    "Leboncoin Zalando Sephora Ikea Lidl Aldi Monoprix Zara Nike Adidas"
)
_ORG_PHRASES = (
    "Air France",
    "Air Canada",
    "British Airways",
    "Société Générale",
    "La Poste",
    "Mondial Relay",
    "Crédit Agricole",
    "Banque Populaire",
)
_ORG_SUFFIX = re.compile(
    r"\b(?:Inc|Corp|Ltd|LLC|SA|SAS|SARL|GmbH|Group|Groupe|Bank|Banque|Airlines|Labs|Telecom|"
    r"Technologies|Consulting|University|Université|École|School)\b\.?"
)
_PLACES = _words(
    "Paris Lyon Marseille Toulouse Nice Nantes Bordeaux Lille Rennes Strasbourg Montpellier "
    "Grenoble Brest Dijon Annecy Bruxelles Brussels Genève Geneva Lausanne Zurich Montréal "
    "Montreal Québec Quebec London Londres Berlin Madrid Barcelona Barcelone Rome Milan "
    "Milano Lisbonne Lisbon Amsterdam Vienna Vienne Prague Dublin Edinburgh Tokyo Kyoto Osaka "
    "Seoul Séoul Bangkok Singapore Singapour Sydney Melbourne Dubai Dubaï Marrakech "
    "Casablanca Tunis Dakar Abidjan Boston Chicago Seattle Austin Denver Miami Toronto "
    "Vancouver NYC Lima Rio France Belgique Belgium Suisse Switzerland Canada Espagne Spain "
    "Italie Italy Allemagne Germany Portugal Japon Japan Chine China Maroc Morocco Tunisie "
    "Grèce Greece Irlande Ireland Islande Iceland Norvège Norway Suède Sweden Mexique Mexico "
    "Brésil Brazil Pérou Peru Thaïlande Thailand Vietnam Inde India Australie Australia Bali "
    "Crète Corse Bretagne Provence Normandie Alsace Europe Asie Asia Afrique Africa USA "
    "Angleterre England Écosse Scotland Roissy Orly Heathrow"
)
_PLACE_PHRASES = (
    "New York",
    "San Francisco",
    "Los Angeles",
    "Le Caire",
    "Hong Kong",
    "Royaume-Uni",
    "United Kingdom",
    "États-Unis",
    "United States",
    "Charles de Gaulle",
    "Côte d'Azur",
    "La Rochelle",
    "Le Mans",
    "Saint-Malo",
    "Buenos Aires",
    "Cape Town",
    "Las Vegas",
    "Rio de Janeiro",
)
_FIRST_NAMES = _words(
    "Marie Jean Pierre Paul Sophie Julie Camille Léa Emma Lucas Hugo Louis Nicolas Thomas "
    "Antoine Claire Isabelle Nathalie Sarah Laura Chloé Manon Inès Karim Mehdi Youssef Fatima "
    "Amina Olivier Julien Maxime Alexandre Céline Aurélie Élodie Mathieu Vincent John Jane "
    "Tom Mike Michael David James Robert Mary Anna Emily Jessica Chris Sam Alex Daniel Laura "
    "Kevin Brian Lisa Linda Peter Mark Paula Sarah Priya Raj Wei Yuki Kenji Carlos Maria Ana "
    "Lucia Marco Luca Giulia Hans Lars Olga Ivan Fatou Moussa Omar Ali"
)
_SKILLS = _words(
    "Python Java JavaScript TypeScript SQL NoSQL PostgreSQL MySQL MongoDB Excel PowerPoint "
    "Kubernetes Docker Terraform AWS Azure GCP React Angular Vue Node.js Django Flask Spark "
    "Hadoop Kafka Tableau PowerBI Photoshop Figma Scrum Agile SAP Salesforce Git Linux C++ C# "
    "Go Rust Kotlin Swift PHP Ruby Scala Matlab TensorFlow PyTorch Jira"
)
_POSITIONS = (
    r"(?:d[ée]veloppeu(?:r|se)|developer|ing[ée]nieur|engineer|data scientist|data analyst|"
    r"data engineer|chef de projet|project manager|product manager|product owner|"
    r"scrum master|designer|comptable|accountant|responsable [a-zé]+|directeur [a-zé]+|"
    r"directrice [a-zé]+|consultant(?:e)?|technicien(?:ne)?|commercial(?:e)?|"
    r"sales manager|account manager|assistant(?:e)? de direction|stagiaire|intern|"
    r"devops|architecte [a-zé]+|analyste [a-zé]+|office manager|recruteu(?:r|se)|recruiter|"
    r"team lead|tech lead|lead developer|cto|cfo|ceo|rh|hr manager)"
    r"(?:\s+(?:senior|junior|full[- ]stack|front[- ]?end|back[- ]?end|mobile|cloud|"
    r"logiciel|software|python|java|web|data|marketing|commercial|financier|"
    r"des ventes|RH))*"
)

_MONTHS_FR = "|".join(
    _words(
        "janvier février fevrier mars avril mai juin juillet août aout septembre octobre "
        "novembre décembre decembre"
    )
)
_MONTHS_EN = "|".join(
    _words(
        "January February March April May June July August September October November "
        "December Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec"
    )
)
_DAYS = "|".join(
    _words(
        "lundi mardi mercredi jeudi vendredi samedi dimanche Monday Tuesday Wednesday "
        "Thursday Friday Saturday Sunday"
    )
)

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("EMAIL", re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")),
    (
        "TICKET_ID",
        re.compile(
            r"(?i:ticket|case|dossier|incident|demande|request|réclamation|claim)\s*"
            r"(?:n°|no\.?|num[ée]ro|number|#|:)?\s*#?\s*(?P<v>[A-Z]*-?\d[\w-]{2,})"
        ),
    ),
    (
        "ORDER_ID",
        re.compile(
            r"(?i:commande|order|cmd|colis|parcel|facture|invoice)\s*"
            r"(?:n°|no\.?|num[ée]ro|number|#|:)?\s*#?\s*(?P<v>[A-Z]*-?\d[\w-]{2,})"
        ),
    ),
    (
        "BOOKING_ID",
        re.compile(
            r"(?i:réservation|reservation|booking|PNR|confirmation)\s*"
            r"(?:n°|no\.?|num[ée]ro|number|code|#|:)?\s*#?\s*(?P<v>[A-Z0-9]*\d[A-Z0-9-]{3,}|[A-Z]{6})"
        ),
    ),
    ("TICKET_ID", re.compile(r"\b(?P<v>(?:TCK|TKT|INC|SR|CASE|SUP)-?\d{3,})\b")),
    ("ORDER_ID", re.compile(r"#(?P<v>[A-Z]{0,4}-?\d{4,})\b")),
    ("ID", re.compile(r"\b(?P<v>[A-Z]{1,5}-\d{3,}|\d{2,}-[A-Z]{2,}(?:-\d+)?)\b")),
    (
        "MONEY",
        re.compile(
            r"(?:[$€£]\s?\d[\d\s.,]*\d(?:\s?[kK])?|[$€£]\s?\d)"
            r"|\b(?:EUR|USD|GBP|CHF|CAD|AUD|JPY|ISK|SEK|NOK|DKK|MAD|XOF)\s?\d[\d\s.,]*\d\b"
            r"|\b\d[\d\s.,]*(?:\s?[kK])?\s?(?:€|euros?|EUR|\$|dollars?|USD|£|livres?|GBP|CHF|k€)(?![\w])"
        ),
    ),
    (
        "DATE",
        re.compile(
            rf"(?i:\b(?:(?:{_DAYS})\s+)?(?:1er|\d{{1,2}})\s+(?:{_MONTHS_FR})(?:\s+\d{{4}})?\b)"
            rf"|\b(?:{_MONTHS_EN})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?\b"
            rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTHS_EN})(?:\s+\d{{4}})?\b"
            r"|\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b"
            rf"|(?i:\b(?:next|this|last)\s+(?:{_DAYS})\b|\b(?:{_DAYS})\s+(?:prochain|dernier)\b)"
            r"|(?i:\b(?:en|in|fin|début|end of|early|late)\s+"
            rf"(?:{_MONTHS_FR}|{_MONTHS_EN})(?:\s+\d{{4}})?\b)"
        ),
    ),
)
_BRAND_RE = "|".join(re.escape(b) for b in sorted(_BRANDS, key=len, reverse=True))
_LINE_RE = "|".join(re.escape(b) for b in sorted(_PRODUCT_LINES, key=len, reverse=True))
_MODEL_TOKEN = (
    r"(?:[A-Z][\w+-]*|[a-z]?\d[\w+-]*|[a-z]+\d[\w-]*|Pro|Max|Ultra|Plus|Mini|Air|Carbon|Lite)"
)
_PRODUCT_RE = re.compile(
    rf"\b(?:(?:{_BRAND_RE})\s+)?(?:{_LINE_RE})(?:\s+{_MODEL_TOKEN}){{0,3}}"
    rf"|\b(?:{_BRAND_RE})(?:\s+{_MODEL_TOKEN}){{1,3}}"
    r"|\b[A-Z][a-zA-Z]+\s+(?:[A-Z]{0,3}\d{1,4}[a-zA-Z]{0,3})(?:\s+(?:Pro|Max|Ultra|Plus|Mini|Lite))?\b"
)
_CAPS_RE = re.compile(
    r"\b[A-ZÀ-Ý][\w'’-]*(?:\s+(?:de\s+|du\s+|des\s+|la\s+|of\s+)?[A-ZÀ-Ý][\w'’-]*)*"
)
_SKILL_RE = re.compile(
    r"(?<![\w+#])(?:"
    + "|".join(re.escape(s) for s in sorted(_SKILLS, key=len, reverse=True))
    + r")(?![\w+#])"
)
_POSITION_RE = re.compile(rf"\b{_POSITIONS}\b", re.IGNORECASE)
_SENTENCE_START = re.compile(r"(?:^|[.!?:\n]\s*|\b(?:User|Assistant|AI|Human)\s*:\s*)$")
_STOP_CAPS = frozenset(
    fold(w)
    for w in _words(
        "Je J Il Elle On Nous Vous Ils Elles Le La Les Un Une Des Mon Ma Mes Ce Cette Ces Quel "
        "Quelle Quels Quelles Est Et Mais Ou Donc Car Oui Non Bonjour Bonsoir Salut Merci Pouvez "
        "Pourriez Puis Peux Avez Auriez Voici Voilà Parfait Super Très Bien D'accord Désolé "
        "Attendez Alors Combien Comment Pourquoi Quand Où Qui Que Dans Pour Sur Avec I You He She "
        "We They It The A An My Your Our Their This That These Those What Which Who When Where "
        "Why How Is Are Can Could Would Should Will Do Does Did Hi Hello Hey Thanks Thank Please "
        "Sorry Yes No Ok Okay Sure Great Perfect Also And But Or So If User Assistant AI Human "
        "Let Here There Just Dear Good Bonne Madame Monsieur Mr Mrs Ms Dr Chère Cher Lundi Mardi "
        "Mercredi Jeudi Vendredi Samedi Dimanche Monday Tuesday Wednesday Thursday Friday "
        "Saturday Sunday Today Tomorrow Aujourd'hui Demain Enfin Ensuite Puis Sinon Actually Also "
        "Well Then Now Maintenant Votre Notre Leur Your I've I'm I'll I'd"
    )
)
_FOLDED_PLACES = {fold(p) for p in (*_PLACES, *_PLACE_PHRASES)}
_FOLDED_ORGS = {fold(o) for o in (*_ORGS, *_BRANDS, *_ORG_PHRASES)}
_FOLDED_FIRST = {fold(n) for n in _FIRST_NAMES}
_COMPARE = re.compile(
    r"(?i)\b(?:compar\w*|vs\.?|versus|plutôt|rather|ou bien|or the|ou le|ou la|entre|between)\b"
)
_PREFER = re.compile(
    r"(?i)\b(?:je préfère|je prefere|i prefer|i'd rather|je choisis|i choose|i'll take|je prends)\b"
)
_OWN = re.compile(
    r"(?i)\b(?:j'ai (?:un|une|le|la|acheté)|i (?:have|own|bought) (?:a|an|the|my)|mon |ma |my )"
)
_WARRANTY = re.compile(
    r"(?i)(?:garantie|warranty)[^.\n]{0,30}?(\d+\s*(?:ans?|years?|mois|months?))"
    r"|(\d+[- ](?:ans?|years?|mois|months?))[- ](?:de )?(?:garantie|warranty)"
)

_SPACY_LABELS = {
    "PER": "PERSON",
    "PERSON": "PERSON",
    "ORG": "ORGANIZATION",
    "LOC": "LOCATION",
    "GPE": "LOCATION",
}
# Fallbacks when a domain does not configure the type the rules produce.
_FALLBACK: Mapping[str, tuple[str, ...]] = {
    "ORGANIZATION": ("COMPANY", "BRAND", "ORG"),
    "LOCATION": ("CITY", "PLACE", "DESTINATION", "COUNTRY"),
    "MONEY": ("PRICE", "AMOUNT"),
    "PRODUCT": ("ITEM", "DEVICE"),
    "PERSON": ("NAME", "CONTACT", "CUSTOMER"),
    "ORDER_ID": ("ID",),
    "TICKET_ID": ("ID",),
    "BOOKING_ID": ("ID", "ORDER_ID"),
}
_TICKET_WORDS = re.compile(r"(?i)\b(?:ticket|case|dossier|incident|demande|request|claim|rma)\b")
_BOOKING_WORDS = re.compile(r"(?i)\b(?:booking|réservation|reservation|pnr)\b")
_TITLE_BEFORE = re.compile(
    r"(?:\b(?:Madame|Monsieur|Mme|Mlle|M\.|Mr\.?|Mrs\.?|Ms\.?|Dr\.?|Pr\.?|Me)\s+)$"
)


class RuleEntityExtractor:
    """Extract entities with patterns and gazetteers; zero model calls.

    Args:
        use_spacy: type capitalised names with spaCy's ``fr_core_news_sm`` when it is
            installed (``None``: use it if importable; ``False``: never; ``True``: require
            it and fail with :class:`~memory_chains.errors.ConfigurationError` otherwise).

    Example:
        >>> x = RuleEntityExtractor(use_spacy=False).extract(
        ...     "User: order #A-55812 via ticket TCK-2207, contact tom@x.com", ["ORDER_ID",
        ...     "TICKET_ID", "EMAIL"])
        >>> sorted((m.type, m.name) for m in x.mentions)
        [('EMAIL', 'tom@x.com'), ('ORDER_ID', 'A-55812'), ('TICKET_ID', 'TCK-2207')]
    """

    model_calls = 0

    def __init__(self, *, use_spacy: bool | None = None) -> None:
        self._nlp: Any = None
        if use_spacy is not False:
            self._nlp = _load_spacy(required=bool(use_spacy))

    @property
    def uses_spacy(self) -> bool:
        """True when a spaCy pipeline types capitalised names."""
        return self._nlp is not None

    def extract(self, text: str, types: Sequence[str], known: Sequence[str] = ()) -> Extraction:
        """Extract from one turn's text."""
        allowed = [t.upper() for t in types]
        found: list[tuple[int, int, str, str]] = []  # start, end, name, type
        taken: list[tuple[int, int]] = []

        def add(start: int, end: int, name: str, etype: str) -> None:
            name = name.strip(" .,;:!?'\"()’")
            if not name or any(s < end and start < e for s, e in taken):
                return
            taken.append((start, end))
            found.append((start, end, name, etype))

        for etype, pattern in _PATTERNS:
            if etype == "ID":
                etype = (
                    "TICKET_ID"
                    if _TICKET_WORDS.search(text)
                    else "BOOKING_ID"
                    if _BOOKING_WORDS.search(text)
                    else "ORDER_ID"
                )
            for m in pattern.finditer(text):
                if "v" in pattern.groupindex and m.group("v"):
                    add(m.start("v"), m.end("v"), m.group("v"), etype)
                else:
                    add(m.start(), m.end(), m.group(0), etype)
        for m in _PRODUCT_RE.finditer(text):
            words = m.group(0).split()
            while len(words) > 1 and fold(words[-1]) in _STOP_CAPS:
                words = words[:-1]
            name = " ".join(words)
            if fold(name) in _FOLDED_ORGS or fold(name) in _FOLDED_PLACES:
                continue
            add(m.start(), m.start() + len(name), name, "PRODUCT")
        for phrase in (*_ORG_PHRASES, *_PLACE_PHRASES):
            for m in re.finditer(rf"\b{re.escape(phrase)}\b", text):
                add(
                    m.start(),
                    m.end(),
                    phrase,
                    "ORGANIZATION" if phrase in _ORG_PHRASES else "LOCATION",
                )
        for name in known:
            if len(fold(name)) >= 3:
                for m in re.finditer(rf"(?i)(?<!\w){re.escape(name)}(?!\w)", text):
                    add(m.start(), m.end(), m.group(0), "")
        for m in _SKILL_RE.finditer(text):
            add(m.start(), m.end(), m.group(0), "SKILL")
        for m in _POSITION_RE.finditer(text):
            add(m.start(), m.end(), m.group(0), "POSITION")
        spacy_types = self._spacy_types(text)
        known_tokens = {w for n in known for w in fold(n).split() if len(w) >= 3}
        for m in _CAPS_RE.finditer(text):
            self._caps(text, m, spacy_types, add, known_tokens)

        found.sort()
        mentions: list[Mention] = []
        for _, _, name, etype in found:
            if etype == "":
                etype = "KNOWN"
            mapped = _map_type(etype, allowed)
            if mapped or etype == "KNOWN":
                mentions.append(Mention(name, mapped or "", {}))
        mentions = _attach_attributes(text, mentions, found)
        return Extraction(tuple(mentions), _relations(text, mentions), model_calls=0)

    def _caps(
        self,
        text: str,
        m: re.Match[str],
        spacy_types: Mapping[str, str],
        add: Any,
        known_tokens: set[str],
    ) -> None:
        words = m.group(0).split()
        start = m.start()
        # Drop capitalised sentence starters and function words at the front.
        while words and fold(words[0]) in _STOP_CAPS:
            start = text.index(words[0], start) + len(words[0])
            words = words[1:]
        while words and fold(words[-1]) in _STOP_CAPS:
            words = words[:-1]
        if not words:
            return
        name = " ".join(words).rstrip("'’")
        start = text.index(words[0], start)
        key = fold(name)
        at_start = bool(_SENTENCE_START.search(text[:start]))
        if len(words) == 1 and key in known_tokens:
            add(start, start + len(name), name, "")  # part of a known name: same entity
            return
        if _TITLE_BEFORE.search(text[:start]):
            add(start, start + len(name), name, "PERSON")
            return
        if key in _FOLDED_PLACES:
            etype = "LOCATION"
        elif key in _FOLDED_ORGS or _ORG_SUFFIX.search(name):
            etype = "ORGANIZATION"
        elif key.split()[0] in _FOLDED_FIRST:
            etype = "PERSON"
        elif key in spacy_types:
            etype = spacy_types[key]
        elif at_start or len(key) < 3 or (name.isupper() and len(words) == 1 and len(name) < 3):
            return
        elif len(words) >= 2:
            etype = "PERSON"
        else:
            etype = "ORGANIZATION"
        add(start, start + len(name), name, etype)

    def _spacy_types(self, text: str) -> dict[str, str]:
        if self._nlp is None:
            return {}
        out: dict[str, str] = {}
        for ent in self._nlp(text).ents:
            label = _SPACY_LABELS.get(ent.label_)
            if label:
                out[fold(ent.text)] = label
        return out


def _load_spacy(*, required: bool) -> Any:
    try:
        import spacy

        return spacy.load(
            "fr_core_news_sm",
            disable=["parser", "lemmatizer", "morphologizer", "attribute_ruler", "tagger"],
        )
    except (ImportError, OSError) as exc:
        if required:
            from memory_chains.errors import ConfigurationError

            raise ConfigurationError(
                "spaCy's fr_core_news_sm is not installed: pip install 'memory-chains[nlp]'"
            ) from exc
        log.debug("spaCy unavailable, rules only: %s", exc)
        return None


def _map_type(etype: str, allowed: Sequence[str]) -> str:
    if etype in allowed:
        return etype
    for alt in _FALLBACK.get(etype, ()):
        if alt in allowed:
            return alt
    return ""


def _attach_attributes(
    text: str, mentions: list[Mention], found: Sequence[tuple[int, int, str, str]]
) -> list[Mention]:
    """Attach a price or a warranty to the only product of the sentence that states it."""
    out = list(mentions)
    for sentence in re.split(r"(?<=[.!?\n])\s+", text):
        products = [i for i, m in enumerate(out) if m.type == "PRODUCT" and m.name in sentence]
        if len(products) != 1:
            continue
        attrs = dict(out[products[0]].attributes)
        money = [m.name for m in out if m.type in ("MONEY", "PRICE") and m.name in sentence]
        if len(money) == 1:
            attrs["price"] = money[0]
        w = _WARRANTY.search(sentence)
        if w:
            attrs["warranty"] = (w.group(1) or w.group(2)).strip()
        if attrs:
            m = out[products[0]]
            out[products[0]] = Mention(m.name, m.type, attrs)
    return out


def _relations(text: str, mentions: Sequence[Mention]) -> tuple[RelationMention, ...]:
    products = list(dict.fromkeys(m.name for m in mentions if m.type == "PRODUCT"))
    rels: list[RelationMention] = []
    if len(products) >= 2 and _COMPARE.search(text):
        rels.append(RelationMention(products[0], "COMPARES_TO", products[1]))
    people = [m.name for m in mentions if m.type == "PERSON"]
    if products and _PREFER.search(text):
        rels.append(RelationMention(people[0] if people else "user", "PREFERS", products[0]))
    return tuple(r for r in rels if r.source != "user")
