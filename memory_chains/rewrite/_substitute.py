"""Writing a referent into a question, in place of what stands for it.

:func:`_substitute` puts a name in place of a pronoun or a possessive ("sa garantie" → "la
garantie de Dell XPS 15", "How long did he stay?" → "How long did Phil Lesh stay?"), of
"là-bas" / "y" ("Quel temps fait-il à Porto ?"); a pronoun that resumes a noun phrase of
the question itself is left alone and the name completes that noun phrase ("Et la version
express, elle coûte combien ?" → "Et la version express de X, elle coûte combien ?"), and
so is an impersonal "il" / "it". ``None`` when there is nothing to put the name in place of.
Used by the fallback and by the templates.
"""

from __future__ import annotations

import re

from memory_chains.rewrite._detect import detect_language

# "d'" / "l'" before a vowel or an h, not before a "y" sounded as a consonant ("de yoga").
_VOWEL = re.compile(r"^(?:[aeiouhàâéèêëîïôöùûü]|y(?![aeiouàâéèêëîïôöùûü]))", re.IGNORECASE)
_FR_POSSESSIVE = re.compile(
    r"\b(sa|son|ses)\s+([\wà-ÿ'-]+(?:\s+[a-zà-ÿ]+(?:ique|iques|ale|ales|elle|elles|ive|ives|"
    r"aire|aires|ée|ées))?)\b",
    re.IGNORECASE,
)
# A subject pronoun, inverted ("pèse-t-il") or not ("il pèse", "s'il", "qu'elle").
_FR_PRONOUN = re.compile(
    r"(?P<verb>\w+)-(?:t-)?(?P<inv>il|elle|ils|elles)\b(?![-'])"
    r"|(?<![\w'-])(?P<elided>\w*qu'|s')?(?P<pre>il|elle|ils|elles)\b(?![-'])",
    re.IGNORECASE,
)
_FR_DET = (
    r"(?:l'|(?:le|la|les|un|une|des|ce|cet|cette|ces|son|sa|ses|mon|ma|mes|ton|ta|tes|notre|"
    r"nos|votre|vos|leur|leurs)\s+)"
)
# What a determiner tells of its noun: m(asculine), f(eminine), p(lural); s(ingular) else.
_FR_DET_AGREEMENT = {
    **dict.fromkeys(("le", "ce", "cet", "un"), "m"),
    **dict.fromkeys(("la", "cette", "une", "ma", "ta", "sa"), "f"),
    **dict.fromkeys(("les", "ces", "des", "mes", "tes", "ses", "nos", "vos", "leurs"), "p"),
}
_FR_PRONOUN_AGREEMENT = {"il": "ms", "elle": "fs", "ils": "p", "elles": "p"}
# Noun phrases that need no name ("votre boutique") …
_FR_OWN = frozenset(
    ["mon", "ma", "mes", "ton", "ta", "tes", "notre", "nos", "votre", "vos", "leur", "leurs"]
)
# … or that only a listing resolves ("le premier").
_FR_ORDINAL = re.compile(
    r"premier|première|second|seconde|deuxième|troisième|dernier|dernière|autre", re.I
)
# "Et la version express, elle …", "Si la batterie lâche, elle …": a noun phrase before the
# first comma, which a pronoun after it may resume.
_FR_TOPIC = re.compile(
    r"^(?:(?:et|mais|alors|donc|sinon|ensuite|puis|bon|ok|d'accord)\b[\s,]*)*"
    r"(?P<intro>(?:si|quand|lorsque|pour|avec|sans|dans|sur|pendant|après|avant|depuis|"
    r"comme|puisque|côté|concernant)\s+)?"
    rf"(?P<np>{_FR_DET}[\w-]+(?P<tail>[^,?!.;:]*?))\s*,\s*(?P<rest>\S.*)$",
    re.IGNORECASE,
)
_FR_HEAD = re.compile(
    rf"{_FR_DET}[\w-]+(?:\s+[a-zà-ÿ]+(?:ique|iques|ale|ales|elle|elles|ive|ives|aire|aires|"
    r"ée|ées)\b)?",
    re.IGNORECASE,
)
_NAMED = re.compile(r"\b[A-Z]|\d")
_FR_FINITE = re.compile(r"\b(?:est|sont|a|ont|était|fait|font|peut|peuvent|va|vont|doit)\b", re.I)
# The subject of a complex inversion ("la batterie tient-elle") and a noun phrase dislocated
# to the end ("a-t-il, ce portable ?").
_FR_NP_BEFORE_VERB = re.compile(
    rf"(?:^|(?<=\s))(?P<np>{_FR_DET}[\w-]+(?:\s+[\w'-]+){{0,4}})\s+$", re.IGNORECASE
)
_FR_NP_AT_END = re.compile(
    rf"^[^,]*,\s*(?P<np>{_FR_DET}[\w-]+(?:\s+[\w'-]+){{0,4}})\s*[?!.]*\s*$", re.IGNORECASE
)
_FR_WH = re.compile(
    r"\b(?:qu|que|quel|quelle|quels|quelles|combien|où|quand|comment|qui|quoi|lequel|"
    r"laquelle)\b",
    re.IGNORECASE,
)
# Impersonal "il" ("il faut", "quel temps fait-il", "y a-t-il"): there is no one to name.
_FR_IMPERSONAL = re.compile(
    r"faut|fallait|faudra|faudrait|pleut|pleuvait|pleuvra|pleuvrait|neige|neigeait|neigera|"
    r"gèle|grêle|suffit|suffira|suffirait|importe|convient"
)
_FR_WEATHER = re.compile(
    r"\s*(?:(?:très|trop|plus|moins|assez|si|aussi|vraiment|encore|souvent|toujours|pas)\s+)*"
    r"(?:chaud|froid|beau|bon|doux|frais|mauvais|gris|humide|sec|lourd|nuit|jour|soleil|"
    r"combien\s+de\s+degrés|\d+\s*(?:°|degrés))\b",
    re.IGNORECASE,
)
_FR_QUANTITY = re.compile(
    r"\s*(?:(?:encore|plus|pas|toujours)\s+)*(?:des|du|de|d'|un|une|assez|peu|beaucoup|"
    r"quelques?|plusieurs|combien|\d)",
    re.IGNORECASE,
)
_FR_IMPERSONAL_BE = re.compile(
    r"\s*(?:quelle\s+heure|tôt|tard|midi|minuit|\d"
    r"|(?:(?:très|trop|plus|moins|vraiment|pas)\s+)*(?:possible|impossible|nécessaire|interdit|"
    r"obligatoire|conseillé|déconseillé|recommandé|préférable|utile|permis|difficile|facile|"
    r"temps|question|prévu|vrai|important)\s+(?:de\s|d'(?!accès|utilisation|usage|emploi)|que|"
    r"qu'))",
    re.IGNORECASE,
)
_FR_CLITICS_BEFORE = re.compile(r"((?:ne\s+|n'|y\s+|en\s+|s')*)$", re.IGNORECASE)
_FR_CLITICS_AFTER = re.compile(r"\s*((?:ne\s+|n'|y\s+|en\s+|s')*)(\w+)", re.IGNORECASE)
_FR_THERE = re.compile(r"\blà-bas\b", re.IGNORECASE)
# The pronoun "y" ("on peut y manger", "j'y vais"), not "il y a" nor "y compris".
_FR_Y = re.compile(
    r"(?:\b(?P<elided>[jnsmlt])')?\by\s+"
    r"(?!(?:en\s+)?(?:a|avait|aura|aurait|ait|eut|eu)\b|compris\b)",
    re.IGNORECASE,
)
_FR_Y_VERB = re.compile(r"\w+(?:er|ir|re)\b(?!-)|\w+-(?:t-)?(?:il|elle|on|ils|elles)\b", re.I)
_EN_SUBJECT = re.compile(r"\b(he|she|they|him|her|them|it)\b", re.IGNORECASE)
_EN_POSSESSIVE = re.compile(r"\b(his|her|their|its)\b(?=\s+\w)", re.IGNORECASE)
_EN_AFTER_OBJECT = re.compile(r"^\s*($|[.?!,]|(to|in|on|at|for|with|and|from|about)\b)", re.I)
_EN_TOPIC = re.compile(
    r"^(?:(?:and|so|but|well|ok|okay)\b[\s,]*)*"
    r"(?P<np>(?P<det>the|this|that|these|those|its|his|her|their|a|an)\s+[^,?!.;:]+?)"
    r"\s*,\s*(?P<rest>\S.*)$",
    re.IGNORECASE,
)
# "these …, they", "this …, it"; "the" and the possessives go with either.
_EN_NUMBER = dict.fromkeys(("these", "those"), "they") | dict.fromkeys(
    ("this", "that", "a", "an"), "it"
)
_EN_FINITE = re.compile(r"\b(?:is|are|was|were|has|have|does|do|did|can|will|would)\b", re.I)
# Impersonal "it" ("is it cold there", "how long does it take", "what time is it").
_EN_IMPERSONAL = re.compile(
    r"(?:'s|\s+(?:is|was|will\s+be|gets|got|be))?\s+(?:(?:very|so|too|really|usually|always|"
    r"often|still|not)\s+)*(?:cold|hot|warm|cool|mild|sunny|rainy|windy|humid|chilly|"
    r"freezing|dark|raining|snowing|(?:possible|necessary|safe|allowed|true|likely|common|"
    r"usual)\s+(?:to|that)\b)"
    r"|\s+(?:rains?|rained|raining|snows?|snowed|snowing)\b"
    r"|\s+(?:takes?|took)\s+(?:me|you|him|her|us|them|about|around|more|less|long|an?|\d)\b",
    re.IGNORECASE,
)


def _of(name: str) -> str:
    """French "de" + name, elided before a vowel ("d'ASUS ROG Strix G15", "de yoga")."""
    return f"d'{name}" if _VOWEL.match(name) else f"de {name}"


def _det_of(np: str) -> str:
    return "l'" if np.lower().startswith("l'") else np.split()[0]


def _agrees(np: str, pronoun: str) -> bool:
    """True when the noun phrase ``np`` can be what ``pronoun`` stands for."""
    told = _FR_DET_AGREEMENT.get(_det_of(np).lower(), "s")
    accepted = _FR_PRONOUN_AGREEMENT[pronoun.lower()]
    return told in accepted


def _clause_start(question: str, end: int) -> int:
    return max(question.rfind(c, 0, end) for c in ",;:") + 1


def _fr_impersonal(question: str, m: re.Match[str]) -> bool:
    """True when the pronoun ``m`` found is an impersonal "il" ("il faut", "fait-il froid")."""
    if (m.group("inv") or m.group("pre")).lower() != "il":
        return False
    if m.group("inv"):
        before, verb, after = question[: m.start("verb")], m.group("verb"), question[m.end() :]
        found = _FR_CLITICS_BEFORE.search(before)
        clitics = found.group(1) if found else ""
    else:
        before, after = question[: m.start()], question[m.end() :]
        if m.group("elided") and re.match(r"\s*(?:vous|te)\s+plaît", after, re.IGNORECASE):
            return True
        words = _FR_CLITICS_AFTER.match(after)
        if words is None:
            return False
        clitics, verb, after = words.group(1), words.group(2), after[words.end() :]
    verb, clitics = verb.lower(), clitics.lower().replace("'", "' ").split()
    if _FR_IMPERSONAL.fullmatch(verb) or (verb == "agit" and "s'" in clitics):
        return True
    if "y" in clitics and verb in ("a", "avait", "aura", "aurait", "ait", "eut"):
        return True
    if verb in ("vaut", "vaudrait"):
        return bool(re.match(r"\s*mieux\b", after, re.IGNORECASE))
    if verb in ("fait", "faisait", "fera", "ferait"):
        return bool(_FR_WEATHER.match(after) or re.search(r"\btemps\s+(y\s+)?$", before, re.I))
    if verb in ("est", "était", "sera", "serait"):
        if re.search(r"\bheure\s+$", before, re.I) and re.match(r"\s*(là-bas|[?!.,]|$)", after):
            return True  # "Quelle heure est-il ?", not "À quelle heure est-il ouvert ?"
        return bool(_FR_IMPERSONAL_BE.match(after))
    if verb in ("reste", "restait", "restera", "manque", "manquait", "existe", "existait"):
        return "en" in clitics or bool(_FR_QUANTITY.match(after))
    if verb in ("semble", "semblait", "paraît", "arrive", "arrivait"):
        return bool(re.match(r"\s*(?:que\b|qu'|[?!.,]|$)", after, re.IGNORECASE))
    return False


def _fr_antecedent(question: str, m: re.Match[str]) -> tuple[int, int] | None:
    """Where the noun phrase of ``question`` that the pronoun ``m`` resumes is, if any.

    Dislocated to the left ("Et la version express, elle coûte combien ?"), in a clause
    before ("Si la batterie lâche, elle …"), the subject of a complex inversion ("La
    livraison est-elle gratuite ?") or dislocated to the right ("A-t-il, ce portable ?").
    """
    pronoun = m.group("inv") or m.group("pre")
    topic = _FR_TOPIC.match(question)
    if topic and m.start() >= topic.start("rest") and _agrees(topic.group("np"), pronoun):
        if not topic.group("intro") and not _FR_FINITE.search(topic.group("tail")):
            return topic.start("np"), topic.end("np")
        head = _FR_HEAD.match(topic.group("np"))
        if m.start() == topic.start("rest") and head:  # "la batterie" of "la batterie lâche"
            return topic.start("np"), topic.start("np") + head.end()
    if m.group("inv"):
        start = _clause_start(question, m.start("verb"))
        subject = _FR_NP_BEFORE_VERB.search(question[start : m.start("verb")])
        if subject and _agrees(subject.group("np"), pronoun):
            return start + subject.start("np"), start + subject.end("np")
    after = _FR_NP_AT_END.match(question[m.end() :])
    if after and _agrees(after.group("np"), pronoun):
        return m.end() + after.start("np"), m.end() + after.end("np")
    return None


def _fr_complement(np: str, name: str) -> str | None:
    """The noun phrase ``np`` (determiner first) made to name ``name``; None if it cannot."""
    det = _det_of(np)
    noun, lowered = np[len(det) :].strip(), det.lower()
    if lowered in _FR_OWN or _FR_ORDINAL.fullmatch(noun):
        return None
    if lowered not in ("son", "sa", "ses", "ce", "cet", "cette", "ces"):
        return f"{np} {_of(name)}"  # "la version express de Colissimo"
    article = (
        "les "
        if lowered in ("ses", "ces")
        else ("l'" if _VOWEL.match(noun) else ("la " if lowered in ("sa", "cette") else "le "))
    )
    if det[:1].isupper():
        article = article.capitalize()
    if lowered in ("son", "sa", "ses") or not name[:1].isupper():
        return f"{article}{noun} {_of(name)}"  # "sa garantie" → "la garantie de Dell XPS 15"
    return f"{article}{noun} {name}"  # "ce portable" → "le portable HP Pavilion 14"


def _fr_replace(question: str, m: re.Match[str], name: str) -> str:
    """``question`` with ``name`` in place of the pronoun ``m`` found."""
    if m.group("pre"):
        elided = m.group("elided") or ""
        if elided.lower() == "s'":  # "s'il" → "si Dell XPS 15"
            elided = elided[0] + "i "
        elif elided and not _VOWEL.match(name):  # "qu'il" → "que Dell XPS 15"
            elided = elided[:-1] + "e "
        return question[: m.start()] + elided + name + question[m.end() :]
    after = question[m.end() :]
    lieu = re.match(r"\s+lieu\b", after, re.IGNORECASE)
    if lieu:  # "Quels jours a-t-elle lieu ?" → "Quels jours a lieu X ?"
        return question[: m.end("verb")] + lieu.group() + f" {name}" + after[lieu.end() :]
    start = m.start("verb")
    wh = _FR_WH.search(question[_clause_start(question, start) : start])
    if wh and (wh.group().lower() in ("qu", "que") or re.fullmatch(r"[\s?!.]*", after)):
        return question[: m.end("verb")] + f" {name}" + after  # "Combien pèse X ?"
    # Else the name goes before the inversion: "A-t-il une RTX ?" → "X a-t-il une RTX ?",
    # "À quelle heure est-il ouvert ?" → "À quelle heure X est-il ouvert ?"
    inverted = question[start : m.end()]
    if not question[:start].strip():
        inverted = inverted[:1].lower() + inverted[1:]
    return question[:start] + f"{name} {inverted}" + after


def _fr_there(question: str, name: str) -> str | None:
    """``question`` with "à" + ``name`` in place of "là-bas" or of the pronoun "y"."""
    m = _FR_THERE.search(question)
    if m:
        return question[: m.start()] + f"à {name}" + question[m.end() :]
    m = _FR_Y.search(question)
    if m is None:
        return None
    rest, elided = question[m.end() :], m.group("elided")
    if elided:  # "J'y vais" → "Je vais", "J'y ai droit" → "J'ai droit"
        kept = f"{elided}'" if _VOWEL.match(rest) else f"{elided}e "
    else:
        kept = ""
        if m.start() == 0:
            rest = rest[:1].upper() + rest[1:]
    text, at = question[: m.start()] + kept + rest, m.start() + len(kept)
    # Right after an infinitive or an inverted verb ("y aller" → "aller à Porto", "y fait-il"
    # → "fait-il à Porto"), else at the end of the clause ("il fait chaud en été à Porto").
    verb = _FR_Y_VERB.match(text, at)
    stop = re.search(r"\s*[,;:?!.]", text[at:])
    cut = verb.end() if verb else (at + stop.start() if stop else len(text.rstrip()))
    return text[:cut] + f" à {name}" + text[cut:]


def _substitute_fr(question: str, name: str) -> str | None:
    pronouns = [m for m in _FR_PRONOUN.finditer(question) if not _fr_impersonal(question, m)]
    for m in pronouns:
        span = _fr_antecedent(question, m)
        if span is None:
            continue
        # the name completes the noun phrase, the pronoun keeps standing for it; a noun
        # phrase with a name of its own ("Le Dell XPS 15 est-il léger ?") takes no other
        start, end = span
        np = question[start:end]
        if _NAMED.search(np[len(_det_of(np)) :]):
            return None
        named = _fr_complement(np, name)
        return None if named is None else question[:start] + named + question[end:]
    possessive = _FR_POSSESSIVE.search(question)
    if possessive:  # "sa garantie" → "la garantie de Dell XPS 15"
        named = _fr_complement(possessive.group(), name)
        if named is not None:
            return question[: possessive.start()] + named + question[possessive.end() :]
    singular = [m for m in pronouns if (m.group("inv") or m.group("pre")).lower() in ("il", "elle")]
    inverted = next((m for m in singular if m.group("inv")), None)
    if inverted:
        return _fr_replace(question, inverted, name)
    there = _fr_there(question, name)
    if there is not None:
        return there
    return _fr_replace(question, singular[0], name) if singular else None


def _en_impersonal(question: str, m: re.Match[str]) -> bool:
    if m.group(1).lower() != "it":
        return False
    if re.search(r"\bwhat\s+time\s+is\s+$", question[: m.start()], re.IGNORECASE):
        return True
    return bool(_EN_IMPERSONAL.match(question, m.end()))


def _substitute_en(question: str, name: str) -> str | None:
    subjects = [m for m in _EN_SUBJECT.finditer(question) if not _en_impersonal(question, m)]
    topic = _EN_TOPIC.match(question)
    if topic and not _EN_FINITE.search(topic.group("np")) and len(topic.group("np").split()) <= 6:
        # "The express version, how much is it?": "it" is the express version.
        det = topic.group("det")
        for m in subjects:
            word = m.group(1).lower()
            if m.start() < topic.start("rest") or word not in ("it", "they"):
                continue
            if _EN_NUMBER.get(det.lower(), word) != word:
                continue
            noun = topic.group("np")[len(det) :].strip()
            if _NAMED.search(noun):  # "The Kindle, how much is it?" names its subject
                return None
            if det.lower() in ("its", "his", "her", "their"):
                named = f"{name}'s {noun}"
            elif det.lower() in ("the", "a", "an"):
                named = f"{topic.group('np')} of {name}"
            else:
                named = f"{'The' if det[:1].isupper() else 'the'} {noun} of {name}"
            return question[: topic.start("np")] + named + question[topic.end("np") :]
    possessive = _EN_POSSESSIVE.search(question)
    subject = subjects[0] if subjects else None
    if possessive and possessive.group(1).lower() == "her":
        rest = question[possessive.end() :]
        if _EN_AFTER_OBJECT.match(rest):
            possessive = None
    if possessive and (subject is None or possessive.start() < subject.start()):
        return question[: possessive.start()] + f"{name}'s" + question[possessive.end() :]
    if subject is None:
        return None
    after = question[subject.end() :]
    if subject.group(1).lower() == "it" and after.lower().startswith("'s "):
        return question[: subject.start()] + f"{name} is" + after[2:]  # "it's" → "X is"
    return question[: subject.start()] + name + after


def _substitute(question: str, name: str) -> str | None:
    """``question`` with ``name`` put in place of its pronoun or possessive, or None.

    A pronoun that resumes a noun phrase of the question itself does not stand for
    ``name``: that noun phrase takes ``name`` as its complement. An impersonal "il" or
    "it" stays; "là-bas" or "y" takes ``name`` instead.

    Example:
        >>> _substitute("Combien pèse-t-il ?", "Dell XPS 15")
        'Combien pèse Dell XPS 15 ?'
        >>> _substitute("Et la version express, elle coûte combien ?", "Colissimo")
        'Et la version express de Colissimo, elle coûte combien ?'
        >>> _substitute("Quel temps fait-il là-bas ?", "Porto")
        'Quel temps fait-il à Porto ?'
        >>> _substitute("The express version, how much is it?", "Colissimo")
        'The express version of Colissimo, how much is it?'
    """
    if detect_language(question) == "fr":
        return _substitute_fr(question, name)
    return _substitute_en(question, name)
