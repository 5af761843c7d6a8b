"""Patterns and small word lists of the rule extractor (ids, amounts, dates, addresses,
product names, capitalised names) and the few gazetteers it still uses as evidence.

The gazetteers are general (big cities and countries, well-known brands, common first
names); names of the evaluation sets never go here. Typing rests on sentence evidence
(:mod:`memory_chains.entities._evidence`); a gazetteer hit is one more piece of it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from memory_chains._calendar import (
    MONTH_ABBREVIATIONS_EN,
    MONTHS_EN,
    MONTHS_FR,
    WEEKDAYS_EN,
    WEEKDAYS_FR,
    alternation,
)
from memory_chains.entities._evidence import FULL_STOP
from memory_chains.entities._fold import _words, fold

BRANDS = _words(
    "Dell Lenovo Apple Samsung HP Asus Acer Sony Google Microsoft Xiaomi Huawei Nintendo "
    "Canon Nikon Bose Dyson Philips LG Garmin Fitbit Logitech Razer MSI Toshiba Nokia OnePlus "
    "Oppo Tesla Renault Peugeot Citroën Bosch Whirlpool Nespresso DeLonghi iRobot GoPro JBL "
    "Motorola Honor Fairphone Kobo Amazon Sennheiser Sonos Epson Brother Panasonic Fujifilm "
    "Toyota Volkswagen BMW Audi Ikea Miele Seb Moulinex Rowenta Krups Thermomix Withings"
)
PRODUCT_LINES = _words(
    "iPhone iPad MacBook iMac AirPods Galaxy Pixel ThinkPad IdeaPad Yoga XPS Inspiron "
    "Latitude Surface PlayStation Xbox Switch Kindle ZenBook VivoBook ROG Aspire Swift "
    "Pavilion EliteBook Spectre Envy Chromebook Watch Echo Zoe Clio Model Roomba Vertuo Redmi "
    "Mate Legion Predator Alienware Precision Nitro Bravia Freebox Livebox"
)
ORGS = _words(
    "Fnac Darty Boulanger Amazon Cdiscount Carrefour Leclerc Auchan Decathlon Orange SFR "
    "Bouygues Free Airbnb Booking Expedia Uber SNCF Ouigo Eurostar Lufthansa Ryanair easyJet "
    "KLM Delta Emirates Qatar Google Microsoft Apple Meta Netflix Spotify PayPal Stripe Visa "
    "Mastercard Chronopost Colissimo DHL UPS FedEx Hertz Avis Europcar Sixt Accor Ibis "
    "Novotel Hilton Marriott Capgemini Sopra Atos Thales Airbus Renault Michelin BNP "
    "LCL Revolut Salesforce Oracle IBM Deloitte Accenture Doctolib Blablacar Vinted "
    "Leboncoin Zalando Sephora Ikea Lidl Aldi Monoprix Zara Nike Adidas"
)
ORG_PHRASES = (
    "Air France",
    "Air Canada",
    "British Airways",
    "Société Générale",
    "La Poste",
    "Mondial Relay",
    "Crédit Agricole",
    "Banque Populaire",
)
ORG_SUFFIX = re.compile(
    r"\b(?:Inc|Corp|Ltd|LLC|SA|SAS|SARL|GmbH|Group|Groupe|Bank|Banque|Airlines|Labs|Telecom|"
    r"Technologies|Consulting|University|Université|École|School)\b\.?"
)
PLACES = _words(
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
PLACE_PHRASES = (
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
# The phrases above, typed, found in one pass ("Air France", "New York").
PHRASE_TYPES = {
    **{phrase: "ORGANIZATION" for phrase in ORG_PHRASES},
    **{phrase: "LOCATION" for phrase in PLACE_PHRASES},
}
PHRASES_RE = re.compile(
    r"\b(?:" + "|".join(re.escape(p) for p in sorted(PHRASE_TYPES, key=len, reverse=True)) + r")\b"
)
FIRST_NAMES = _words(
    "Marie Jean Pierre Paul Sophie Julie Camille Léa Emma Lucas Hugo Louis Nicolas Thomas "
    "Antoine Claire Isabelle Nathalie Sarah Laura Chloé Manon Inès Karim Mehdi Youssef Fatima "
    "Amina Olivier Julien Maxime Alexandre Céline Aurélie Élodie Mathieu Vincent John Jane "
    "Tom Mike Michael David James Robert Mary Anna Emily Jessica Chris Sam Alex Daniel Laura "
    "Kevin Brian Lisa Linda Peter Mark Paula Sarah Priya Raj Wei Yuki Kenji Carlos Maria Ana "
    "Lucia Marco Luca Giulia Hans Lars Olga Ivan Fatou Moussa Omar Ali"
)
SKILLS = _words(
    "Python Java JavaScript TypeScript SQL NoSQL PostgreSQL MySQL MongoDB Excel PowerPoint "
    "Kubernetes Docker Terraform AWS Azure GCP React Angular Vue Node.js Django Flask Spark "
    "Hadoop Kafka Tableau PowerBI Photoshop Figma Scrum Agile SAP Salesforce Git Linux C++ C# "
    "Go Rust Kotlin Swift PHP Ruby Scala Matlab TensorFlow PyTorch Jira"
)
POSITIONS = (
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

_MONTHS_FR = alternation(MONTHS_FR)
_MONTHS_EN = alternation((*MONTHS_EN, *MONTH_ABBREVIATIONS_EN))
_DAYS = alternation((*WEEKDAYS_FR, *WEEKDAYS_EN))

_TIME = r"(?:\d{1,2}\s?h(?:\s?\d{2})?|\d{1,2}(?::\d{2})?\s?(?:am|pm|a\.m\.|p\.m\.)|\d{1,2}:\d{2})"
_TIME_STRICT = (
    r"(?:\d{1,2}h\d{2}|\d{1,2}h(?=\s|$|[.,;!?])|\d{1,2}(?::\d{2})?\s?(?:am|pm)|\d{1,2}:\d{2})"
)
_ZONE = r"(?-i:(?:\s+(?:CET|CEST|GMT|UTC|BST|EST|PST|ET|PT)\b)?)"
_TIME_RANGE = rf"(?:\s+(?:de|from|entre|between)\s+{_TIME}\s+(?:à|to|et|and|-)\s+{_TIME}{_ZONE})"
_TIME_AT = rf"(?:,?\s+(?:à|at|vers|around)\s+{_TIME}{_ZONE})"
_TIME_TAIL = rf"(?:{_TIME_RANGE}|{_TIME_AT})?"
_TIME_TAIL_REQUIRED = rf"(?:{_TIME_RANGE}|{_TIME_AT})"
_CURRENCY_PREFIX = r"(?:C|A|US|NZ|HK|S)?\$|€|£"
_PER = (
    r"(?:\s+(?:HT|TTC|brut|net|hors taxes))?"
    r"(?:\s+(?:par|per|a|an|/)\s*(?:mois|an|année|semaine|jour|personne|commande|palette|nuit|"
    r"heure|utilisateur|licence|month|year|week|day|person|night|hour|user|seat|head|order)"
    r"(?:\s+et\s+par\s+(?:mois|an|semaine|jour|personne))?)?"
    r"(?:\s+plus\s+VAT|\s+\+\s*TVA|\s+HT|\s+TTC)?"
)
_PER_OPT = _PER
PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
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
            rf"(?:(?:{_CURRENCY_PREFIX})\s?\d[\d\s.,]*\d(?:\s?[kK])?|(?:{_CURRENCY_PREFIX})\s?\d)"
            rf"(?:{_PER})?"
            r"|\b(?:EUR|USD|GBP|CHF|CAD|AUD|JPY|ISK|SEK|NOK|DKK|MAD|XOF)\s?\d[\d\s.,]*\d\b"
            r"|\b\d[\d\s.,]*(?:\s?[kK])?\s?(?:€|euros?|EUR|\$|dollars?|USD|£|livres?|GBP|CHF|k€)"
            rf"(?![\w]){_PER_OPT}"
        ),
    ),
    (
        "DATE",
        re.compile(
            rf"(?i:\b(?:(?:{_DAYS})\s+)?(?:le\s+)?(?:1er|\d{{1,2}})\s+(?:{_MONTHS_FR})"
            rf"(?:\s+\d{{4}})?\b{_TIME_TAIL})"
            rf"|(?i:\b(?:(?:{_DAYS})\s+)?(?:{_MONTHS_EN})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?"
            rf"(?:,?\s+\d{{4}})?\b{_TIME_TAIL})"
            rf"|(?i:\b(?:(?:{_DAYS}),?\s+)?\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTHS_EN})"
            rf"(?:\s+\d{{4}})?\b{_TIME_TAIL})"
            r"|\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b"
            rf"|(?i:\b(?:next|this|last)\s+(?:{_DAYS})\b|\b(?:{_DAYS})\s+(?:prochain|dernier)\b)"
            r"|(?i:\b(?:en|in|fin|début|end of|early|late)\s+"
            rf"(?:{_MONTHS_FR}|{_MONTHS_EN})(?:\s+\d{{4}})?\b)"
            rf"|(?i:\b(?:l'|l’)?(?:été|hiver|printemps|automne|summer|winter|spring|autumn|fall)"
            r"\s+\d{4}\b)"
            r"|\b(?:Black Friday|Cyber Monday|Noël|Christmas(?: Eve| Day)?|Pâques|Easter|"
            r"Toussaint|Nouvel An|New Year(?:'s (?:Day|Eve))?|Thanksgiving|Halloween|"
            r"Saint-Valentin|Valentine's Day|Ramadan|Aïd|Hanukkah|Diwali)\b"
            r"|(?i:\b(?:premier|deuxième|second|troisième|quatrième|first|second|third|fourth)"
            r"\s+(?:trimestre|semestre|quarter)\s+(?:de\s+)?\d{4}\b)"
            rf"|(?i:\b(?:{_DAYS})(?:\s+(?:matin|soir|après-midi|morning|afternoon|evening))?"
            rf"{_TIME_TAIL_REQUIRED})"
            rf"|(?i:\b(?:de|from|entre|between)\s+{_TIME}\s+(?:à|to|et|and|-)\s+{_TIME})"
            rf"|(?i:(?<![\w:]){_TIME_STRICT}(?![\w:]))"
        ),
    ),
)
_BRAND_RE = "|".join(re.escape(b) for b in sorted(BRANDS, key=len, reverse=True))
_LINE_RE = "|".join(re.escape(b) for b in sorted(PRODUCT_LINES, key=len, reverse=True))
_MODEL_TOKEN = (
    r"(?:[A-Z][\w+-]*|[a-z]?\d[\w+-]*|[a-z]+\d[\w-]*|Pro|Max|Ultra|Plus|Mini|Air|Carbon|Lite)"
)
PRODUCT_RE = re.compile(
    rf"\b(?:(?:{_BRAND_RE})\s+)?(?:{_LINE_RE})(?!\w)(?:\s+{_MODEL_TOKEN}){{0,3}}"
    rf"|\b(?:{_BRAND_RE})(?:\s+{_MODEL_TOKEN}){{1,3}}"
    r"|\b[A-Z][a-zA-Z.]+\s+(?:[A-Z]{0,3}\d{1,4}(?:\.\d+)*[a-zA-Z]{0,3})(?:\s+(?:Pro|Max|Ultra|Plus|Mini|Lite))?\b"
    r"(?!\s*(?:/|%|°|days?|jours?|ans?|years?|mois|months?|weeks?|semaines?|h\b|heures?|hours?|"
    r"minutes?|min\b|km|kg|m²|m2|points?|pts?|places?|personnes?|people|ppl))"
)
# Street addresses: "7 montée de la Grande-Côte", "rue Kéréon", "112 Curtain Road".
_STREETS_FR = (
    "rue|avenue|boulevard|bd|allée|impasse|chemin|route|place|quai|cours|montée|passage|"
    "square|faubourg|esplanade|parvis|promenade|voie"
)
_STREETS_EN = (
    "Street|St|Road|Rd|Avenue|Ave|Lane|Drive|Way|Boulevard|Blvd|Square|Place|Terrace|Close|"
    "Crescent|Row|Parade|Mews|Gardens|Quay|Wharf|Hill"
)
_CAP = r"[A-ZÀ-Ý][\w'’-]*"
ADDRESS_RE = re.compile(
    rf"(?:\b\d{{1,4}}(?:\s?(?:bis|ter))?,?\s+)?\b(?:{_STREETS_FR})\s+"
    rf"(?:(?:de la|de l'|de l’|du|des|de|d'|d’)\s*)?{_CAP}"
    rf"(?:\s+(?:de\s+|du\s+|des\s+|la\s+)?{_CAP})*"
    rf"|\b\d{{1,5}}\s+(?:{_CAP}\s+){{1,3}}(?:{_STREETS_EN})\b"
)
# A commercial noun that is part of the name in French: "la gamme Orthalis", "l'offre Pro
# Solo", "la formule Flexi", "la loi ALUR".
HEADED_RE = re.compile(
    rf"\b(?P<head>gamme|offre|formule|forfait|pack|loi|option|programme)\s+"
    rf"(?P<name>{_CAP}(?:\s+(?:to\s+|de\s+|du\s+)?{_CAP})*)"
)
# A French institution's name: a capitalised head noun after a determiner, one or two
# lower-case adjectives, then its proper name ("la Clinique dentaire Saint-Aubin", "au
# Lycée professionnel Jean-Moulin", "le Centre hospitalier de Cornouaille"). The adjectives
# are recognised by their endings, so no verb ("la Banque propose …") is taken in.
_ADJECTIVE = (
    r"[a-zà-ÿ][\w-]*(?:aire|al|ale|aux|ier|ière|ique|if|ive|el|elle|eur|eure|ien|ienne|ois|"
    r"oise|ais|aise|é|ée|ain|aine|ine)s?"
)
INSTITUTION_RE = re.compile(
    rf"(?i:\b(?:la|le|l['’]|au|du|les|aux|des|à la|à l['’]|de la|de l['’]))\s*"
    rf"(?P<name>(?P<head>[A-ZÀ-Ý][\w-]*)(?:\s+{_ADJECTIVE}\b){{1,2}}\s+"
    rf"(?:(?:de la|de l['’]|des|du|de|d['’])\s*)?{_CAP}(?:\s+(?:de\s+|du\s+|des\s+|d['’])?{_CAP})*)"
)
# Software names written the way code is: "@scope/pkg", "orbilo-py", "next.js", "ggplot2".
CODE_RE = re.compile(
    r"(?<![\w@/.-])(?:@[a-z0-9][\w.-]*/[\w.-]+|[A-Za-z][a-z0-9]*\.js"
    r"|[a-z][a-z0-9]*-(?:py|js|ts|sdk|cli|api|core|client|server|lib|rs|go|node|react|vue|ui)"
    r"|[a-z]{3,}\d+[a-z]*)(?:\s+\d+(?:\.\d+)*)?(?![\w@/-])"
)
# Right after these, a lower-case word is a package name ("pip install httpx").
INSTALL_RE = re.compile(
    r"(?i)\b(?:pip install|npm install|npm i|yarn add|poetry add|gem install|cargo add|go get)\s+"
    r"(?P<v>[a-z][\w.-]*[a-z0-9])"
)
CAPS_RE = re.compile(
    r"\b[A-ZÀ-Ý][\w'’-]*(?:\s+(?:de\s+|du\s+|des\s+|la\s+|of\s+|&\s+|d['’])?[A-ZÀ-Ý][\w'’-]*)*"
)
SKILL_RE = re.compile(
    r"(?<![\w+#])(?:"
    + "|".join(re.escape(s) for s in sorted(SKILLS, key=len, reverse=True))
    + r")(?![\w+#])"
)
POSITION_RE = re.compile(rf"\b{POSITIONS}\b", re.IGNORECASE)
SENTENCE_START = re.compile(
    rf"(?:^|(?:{FULL_STOP}|[!?:\n])\s*|\b(?:User|Assistant|AI|Human)\s*:\s*)$"
)
STOP_CAPS = frozenset(
    fold(w)
    for w in _words(
        "Je J Il Elle On Nous Vous Ils Elles Le La Les Un Une Des Mon Ma Mes Ce Cette Ces Quel "
        "Quelle Quels Quelles Est Et Mais Ou Donc Car Oui Non Bonjour Bonsoir Salut Merci Pouvez "
        "Pourriez Puis Peux Avez Auriez Voici Voilà Parfait Super Très Bien D'accord Désolé "
        "Attendez Alors Combien Comment Pourquoi Quand Où Qui Que Dans Pour Sur Avec I You He She "
        "We They It The A An My Your Our Their This That These Those What Which Who When Where "
        "Why How Is Are Can Could Would Should Will Do Does Did Hi Hello Hey Thanks Thank Please "
        "Sorry Yes No Ok Okay Sure Great Perfect Also And But Or So If User Assistant AI Human "
        "Let Here There Just Dear Good Bonne Madame Monsieur Mr Mrs Ms Dr Mme Mlle M. Me "
        "Chère Cher Lundi Mardi "
        "Mercredi Jeudi Vendredi Samedi Dimanche Monday Tuesday Wednesday Thursday Friday "
        "Saturday Sunday Today Tomorrow Aujourd'hui Demain Enfin Ensuite Puis Sinon Actually Also "
        "Well Then Now Maintenant Votre Notre Leur Your I've I'm I'll I'd Sur En Environ At "
        "Around About Après Avant Vers Depuis Entre Chaque Tous Toutes Après "
        "Concrètement Intéressant Absolument Exactement Effectivement Certes Justement "
        "Ensemble Comptez Sachez Notez Pensez Apportez Prévoyez Vérifiez Envoyez Gardez "
        "Absolutely Exactly Sounds Got Noted Note Keep Bring Check Send Remember Yep Nope "
        "Cool Awesome Congrats Welcome Bienvenue Félicitations Avec Sans Selon Comme Grâce "
        "Côté Niveau Question Pour Parce Lorsque Quand Si Depuis Pendant During Since After "
        "Before Between Until Per For With Without From Into Both Each Every Any Some All "
        "Chez Au Aux À Du De Près Via Par Sauf Sous Dès Contre Through Near In On To By Of "
        "Off Over Under Like Unlike Regarding Concerning Ici Voilà Voila"
    )
)
# Acronyms of everyday language, not names.
COMMON_ACRONYMS = frozenset(
    _words(
        "API SDK SMS MMS VAT TVA HT TTC PDF URL FAQ GPS USB RIB IBAN BIC OK CV TV PC ID PIN "
        "IT RH HR CEO CTO CFO COO AG KM EUR USD GBP CB SAV DM RDV TGV 4G 5G WIFI WiFi SIM "
        "ASAP FYI PS NB UK US EU UE IA AI ML CSV JSON XML HTML CSS SQL QR SEPA TTC VIP "
        "CDI CDD ETA PM AM"
    )
)
FOLDED_PLACES = {fold(p) for p in (*PLACES, *PLACE_PHRASES)}
FOLDED_ORGS = {fold(o) for o in (*ORGS, *BRANDS, *ORG_PHRASES)}
FOLDED_FIRST = {fold(n) for n in FIRST_NAMES}
WARRANTY = re.compile(
    r"(?i)(?:garantie|warranty)[^.\n]{0,30}?(\d+\s*(?:ans?|years?|mois|months?))"
    r"|(\d+[- ](?:ans?|years?|mois|months?))[- ](?:de )?(?:garantie|warranty)"
)

SPACY_LABELS = {
    "PER": "PERSON",
    "PERSON": "PERSON",
    "ORG": "ORGANIZATION",
    "LOC": "LOCATION",
    "GPE": "LOCATION",
}
# Fallbacks when a domain does not configure the type the rules produce.
FALLBACK: Mapping[str, tuple[str, ...]] = {
    "ORGANIZATION": ("COMPANY", "BRAND", "ORG"),
    "LOCATION": ("CITY", "PLACE", "DESTINATION", "COUNTRY"),
    "MONEY": ("PRICE", "AMOUNT"),
    "PRODUCT": ("ITEM", "DEVICE"),
    "PERSON": ("NAME", "CONTACT", "CUSTOMER"),
    "ORDER_ID": ("ID",),
    "TICKET_ID": ("ID",),
    "BOOKING_ID": ("ID", "ORDER_ID"),
    # The default types have no SKILL or POSITION: a language, library or tool is a
    # product one uses, a job title used as a title a concept.
    "SKILL": ("PRODUCT",),
    "POSITION": ("CONCEPT",),
}
TICKET_WORDS = re.compile(r"(?i)\b(?:ticket|case|dossier|incident|demande|request|claim|rma)\b")
BOOKING_WORDS = re.compile(r"(?i)\b(?:booking|réservation|reservation|pnr)\b")
TITLE_BEFORE = re.compile(
    r"(?:\b(?:Madame|Monsieur|Mme|Mlle|M\.|Mr\.?|Mrs\.?|Ms\.?|Dr\.?|Pr\.?|Me)\s+)$"
)


ACRONYM_RE = re.compile(r"^[A-Z]{2,6}\d?$")
