"""Putting a referent into a question without a model.

Used when the model is off, when its rewrite was rejected (with the referent it named in
``about``, when that name is in the conversation), and to repair a model rewrite that named
the referent in ``about`` but left it out of the question. Two families, each switched on
by name (``QueryRewriter(rules=...)``) so that an ablation can measure what it brings
(``memory-chains eval rewrite --rules …``; a family completing elliptic questions from the
previous one was measured and dropped: it paid nothing beside the model, one item without):

* ``"substitution"``: what stands for the referent is replaced by its name, with the
  determiner the conversation uses for it ("sa garantie" → "la garantie du Dell XPS 15",
  "elle couvre le vol ?" → "la Formule Nid couvre le vol ?", "le second" → "le Forfait
  Alizé", "Is it waterproof?" → "Is the Nikon Z6 waterproof?");
* ``"completion"``: a question with nothing to replace ("Y a un engagement ?") gets the
  referent as a complement ("Y a un engagement pour le Forfait Mistral ?").

Without a referent from the model, the referent is what an ordinal designates in the latest
list (:func:`~memory_chains.rewrite._ordinals.ordinal_referent`), else the most recent name
of the conversation.

Example:
    >>> rule_rewrite("Quelle est sa durée ?", [("user", "Le forfait Azur ?")], ["forfait Azur"])
    'Quelle est la durée du forfait Azur ?'
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from memory_chains._folding import fold
from memory_chains._language import detect_language
from memory_chains._terms import FRENCH_STOP_WORDS
from memory_chains.rewrite._detect import analyse
from memory_chains.rewrite._ellipsis import STARTS_WITH_VOWEL, moves_to_another_thing, reframe
from memory_chains.rewrite._history import Turn
from memory_chains.rewrite._ordinals import ordinal_phrase, ordinal_referent

__all__ = ["RULES", "name_phrase", "put_referent", "rule_rewrite"]

RULES = ("substitution", "completion")
"""The rule families, in the order they are tried."""

_I = re.IGNORECASE
# The determiner before a name, and in French the common noun between them that says what
# the name is ("la carte Ambre", "l'offre Essor"): a question names it with that noun too.
_DETERMINER = re.compile(
    r"(?:^|[\s(«\"])(?P<det>(?i:le|la|les|l'|l’|the))\s*(?:(?P<noun>[a-zà-öø-ÿ]{3,})\s+)?$"
)
_NOUN_DETERMINERS = frozenset({"le", "la", "l'"})

# "the cheaper one", "the other one", "that one"; "celui à 12,99 €", "celle des bénévoles".
_EN_ONE = re.compile(r"\b(?:the|that|this)\s+(?:\w+\s+)?one\b", _I)
_FR_DEMONSTRATIVE = re.compile(
    r"\b(?:celui|celle|ceux|celles)(?:-ci|-là|-la)?"
    r"(?:\s+(?:(?:à|a|des|du|de|avec|en|pour|sans)\s+(?:(?:la|le|les)\s+|l')?|d')"
    r"(?:\d+(?:[.,]\d+)?|[^\s,?!]+)(?:\s*[€$£%]|\s+euros?)?)?",
    _I,
)
# "compare à celui de Lenovo", "compared to the Lenovo one": the compared thing is missing.
_COMPARE_VERB = re.compile(
    r"\b(?P<verb>compare[sz]?|comparons|comparer|compare)\s+(?=(?:à|a|au|aux|avec|to|with)\b)", _I
)
_COMPARED = re.compile(
    r"\b(?P<verb>compar[ée]e?s?|compared)\s+(?=(?:à|a|au|aux|avec|to|with)\b)", _I
)
_LEAD_ONLY = re.compile(r"^\s*(?:(?:et|and|mais|but|alors|so)\b[\s,]*)?$", _I)
# "la résilier", "le prendre", "l'avoir signé": an object pronoun before an infinitive,
# after what takes one (a preposition, "peut", "veux", "faut", "comment"…), so that an
# article before a noun in -re or -ir ("l'autre offre", "le nombre", "le loisir") is not one.
_FR_OBJECT = re.compile(
    r"(?:\b(?:pour|de|d'|à|a|sans|après|comment|faut|peut|peux|pouvez|pouvons|peut-on|pourrai|"
    r"pourrais|pourra|veux|veut|voulez|voudrais|dois|doit|devez|devrai|vais|va|allez|"
    r"faire|puis-je|puis|préfère|préférerais|souhaite|souhaiterais|aimerais|compte|ne|n')\s*)"
    r"\b(?P<pro>le|la|les|l')\s*(?!premi[eè]re\b|derni[eè]re\b)"  # "la première" is no verb
    r"(?P<verb>avoir\s+[a-zà-ÿ]+[ée]s?|[a-zà-ÿ]+(?:er|ir|re))\b",
    _I,
)
_FR_POSSESSIVE = re.compile(
    r"\b(?P<det>sa|son|ses|leur|leurs)\s+(?P<noun>[^\W\d_][\w-]*(?![\w'’])(?:\s+(?!(?:de|du|des|"
    r"d|pour|par|en|à|au|aux|avec|sans|est|sont|a|ont|coûte|coûtent|vaut)\b)[a-zà-ÿ][\w-]*"
    r"(?![\w'’])){0,2}(?:(?:\s+de\s+|\s+d['’])[a-zà-ÿ][\w-]*)?)",
    _I,
)
# A subject pronoun ("elle couvre", "il a", "a-t-il", "est-elle"), not an impersonal one.
_FR_SUBJECT = re.compile(
    r"(?:^|(?<=[\s,]))(?<![\s-]t\s)(?P<p>il|elle|ils|elles)\s+(?!(?:y|faut|fait|pleut|reste|existe|"
    r"s'agit|me|te|nous|vous)\b)",
    _I,
)
# Typed without hyphens too ("que se passe t il"): the pronoun after a verb is inverted.
_FR_INVERTED = re.compile(r"(?P<verb>\b[\wà-ÿ]+)(?:-t-|\s+t\s+|-)(?P<p>il|elle|ils|elles)\b", _I)
_WH = re.compile(
    r"^\W*(?:combien|quand|où|ou|comment|quel|quelle|quels|quelles|que|qu'|pourquoi)\b", _I
)
_FR_THERE = re.compile(r"\blà-bas\b|\bla-bas\b", _I)
_EN_POSSESSIVE = re.compile(r"\b(?P<det>its|their)\s+(?P<noun>[^\W\d_][\w-]*)", _I)
_EN_PRONOUN = re.compile(r"\b(?P<p>it|they|them)\b(?!\s*'s)", _I)
_EN_THERE = re.compile(r"(?<!\bis )(?<!\bare )\bthere\b(?!\s+(?:is|are|was|were)\b)", _I)
_END = re.compile(r"\s*([?!.]*)\s*$")


def name_phrase(name: str, history: Sequence[Turn]) -> str:
    """``name`` with the determiner the conversation last put before it ("la Carte
    Cobalt", "the Flex Account"), and in French the common noun between them ("la carte
    Ambre"), or alone.

    Example:
        >>> name_phrase("Forfait Mistral", [("assistant", "Le Forfait Mistral coûte 12 €.")])
        'le Forfait Mistral'
        >>> name_phrase("Ambre", [("user", "La carte Ambre, c'est combien ?")])
        'la carte Ambre'
        >>> name_phrase("Kestrel Lite", [("assistant", "Kestrel Lite is $10.")])
        'Kestrel Lite'
    """
    for _, text in reversed(history):
        for found in reversed(list(re.finditer(re.escape(name), text, _I))):
            det = _DETERMINER.search(text[: found.start()])
            if det is None:
                return name
            word, noun = det.group("det").lower().replace("’", "'"), det.group("noun")
            if noun is not None:
                if word not in _NOUN_DETERMINERS or fold(noun) in FRENCH_STOP_WORDS:
                    return name  # "les cartes Ambre", "la plus Ambre": no determiner of the name
                name = f"{noun} {name}"
            return f"{word}{name}" if word == "l'" else f"{word} {name}"
    return name


def _of(phrase: str) -> str:
    """French "de" + ``phrase``: "du …", "des …", "de la …", "de l'…", "d'…"."""
    low = phrase.lower()
    if low.startswith("le "):
        return "du " + phrase[3:]
    if low.startswith("les "):
        return "des " + phrase[4:]
    if low.startswith(("la ", "l'")):
        return "de " + phrase
    return f"d'{phrase}" if STARTS_WITH_VOWEL.match(phrase) else f"de {phrase}"


def _to(phrase: str) -> str:
    """French "à" + ``phrase``: "au …", "aux …", "à la …"."""
    low = phrase.lower()
    if low.startswith("le "):
        return "au " + phrase[3:]
    if low.startswith("les "):
        return "aux " + phrase[4:]
    return "à " + phrase


def _capital(text: str, at_start: bool) -> str:
    return text[0].upper() + text[1:] if at_start and text else text


def _replace(question: str, match: re.Match[str], phrase: str) -> str:
    phrase = _capital(phrase, match.start() == 0 or question[: match.start()].strip() == "")
    return f"{question[: match.start()]}{phrase}{question[match.end() :]}"


_IMPERSONAL_VERBS = frozenset({"faut", "fait", "pleut", "agit", "reste", "existe", "semble"})


def _impersonal(question: str, match: re.Match[str]) -> bool:
    """ "faut-il", "y a-t-il", "que se passe-t-il": no one to name."""
    verb = fold(match.group("verb"))
    before = question[: match.start()]
    return verb in _IMPERSONAL_VERBS or bool(re.search(r"\b(?:y|se|s')\s*$", before, _I))


def _substitute(question: str, phrase: str, name: str, french: bool) -> str | None:
    """``question`` with ``phrase`` in place of what stands for it, or None."""
    verb = _COMPARE_VERB.search(question)
    compared = _COMPARED.search(question)
    # "Et compare à celui de Lenovo ?" → "Et compare le Dell XPS 15 à celui de Lenovo ?"
    if verb and _LEAD_ONLY.match(question[: verb.start()]):
        return f"{question[: verb.end('verb')]} {phrase}{question[verb.end('verb') :]}"
    # "And compared to the Lenovo one?" → "And the Dell XPS 15, compared to the Lenovo one?"
    if compared and _LEAD_ONLY.match(question[: compared.start()]):
        head = question[: compared.start()]
        return f"{head}{phrase}, {question[compared.start() :]}"
    ordinal = ordinal_phrase(question)
    if ordinal:
        det = ordinal.group(0).split()[0].lower()
        if french and det in ("du", "au"):
            phrase = _of(phrase) if det == "du" else _to(phrase)
        return _replace(question, ordinal, phrase)
    one = (_FR_DEMONSTRATIVE if french else _EN_ONE).search(question)
    if one:
        return _replace(question, one, phrase)
    if french:
        obj = _FR_OBJECT.search(question)
        if obj:  # "on peut la résilier" → "on peut résilier l'offre Horizon"
            start = obj.start("pro")
            return f"{question[:start]}{obj.group('verb')} {phrase}{question[obj.end() :]}"
        possessive = _FR_POSSESSIVE.search(question)
        if possessive:
            return _replace(question, possessive, f"{_definite(possessive)} {_of(phrase)}")
        inverted = next(
            (m for m in _FR_INVERTED.finditer(question) if not _impersonal(question, m)), None
        )
        if inverted and _WH.match(question):  # "Combien coûte-t-il ?" → "Combien coûte X ?"
            return f"{question[: inverted.end('verb')]} {phrase}{question[inverted.end() :]}"
        if inverted:  # "Est-elle remboursée ?" → "La Formule Nid est-elle remboursée ?"
            start = inverted.start()
            return _capital(phrase, True) + " " + question[start].lower() + question[start + 1 :]
        subject = _FR_SUBJECT.search(question)
        if subject:
            return _replace(question, subject, phrase + " ")
        there = _FR_THERE.search(question)
        if there:
            return _replace(question, there, "à " + name)
        return None
    possessive = _EN_POSSESSIVE.search(question)
    if possessive:
        return _replace(question, possessive, f"{phrase}'s {possessive.group('noun')}")
    pronoun = _EN_PRONOUN.search(question)
    if pronoun:
        return _replace(question, pronoun, phrase)
    there = _EN_THERE.search(question)
    if there:
        return _replace(question, there, "in " + name)
    return None


# "Et la carte graphique ?", "And the warranty?": a bare noun phrase, completed by "de"/"of".
_BARE_NP = re.compile(
    r"^\W*(?:et|and|what about)\s+(?:le|la|les|l'|l’|du|des|the)\s*[\w'’-]+(?:\s+[\w'’-]+){0,2}"
    r"\s*[?!.]*\s*$",
    _I,
)


def _complete(question: str, phrase: str, french: bool) -> str:
    """``question`` with the referent as a final complement ("… pour le Forfait Mistral ?",
    "Et la carte graphique de l'ASUS ?")."""
    end = _END.search(question)
    body, mark = question[: end.start()] if end else question, end.group(1) if end else ""
    if _BARE_NP.match(question):
        joint = f" {_of(phrase)}" if french else f" of {phrase}"
    else:
        joint = f" pour {phrase}" if french else f" for {phrase}"
    space = " " if french and mark.startswith("?") else ""
    return f"{body}{joint}{space}{mark}"


def _choice(question: str, phrases: Sequence[str], french: bool) -> str:
    """``question`` with the compared things as a final apposition ("…, A ou B ?")."""
    end = _END.search(question)
    body, mark = question[: end.start()] if end else question, end.group(1) if end else ""
    listed = ", ".join(phrases[:-1]) + (" ou " if french else " or ") + phrases[-1]
    space = " " if french and mark.startswith("?") else ""
    return f"{body}, {listed}{space}{mark}"


def _with_aspect(phrase: str, history: Sequence[Turn]) -> str:
    """``phrase`` headed by what the user last asked about it: an elliptic comparison ("Et
    compare à celui de Lenovo ?") compares that ("la garantie du Dell XPS 15").

    Example:
        >>> _with_aspect("le Dell XPS 15", [("user", "Quelle est sa garantie ?")])
        'la garantie du Dell XPS 15'
    """
    last = next((text for role, text in reversed(history) if role == "user"), "")
    possessive = _FR_POSSESSIVE.search(last)
    return phrase if possessive is None else f"{_definite(possessive)} {_of(phrase)}"


def _definite(possessive: re.Match[str]) -> str:
    """The possessive's noun with a definite article: "sa garantie" → "la garantie"."""
    noun = possessive.group("noun")
    det = {"sa": "la", "son": "le"}.get(possessive.group("det").lower(), "les")
    return f"l'{noun}" if det != "les" and STARTS_WITH_VOWEL.match(noun) else f"{det} {noun}"


# "le prêt", "la carte", "my account": a determiner before the common noun a name holds.
_HEAD_DETERMINER = (
    r"(?P<det>\b(?:le|la|les|du|au|aux|ce|cet|cette|mon|ma|mes|votre|vos|notre|the|this|"
    r"that|my|your|our)\s+|\bl'|\bl’)"
)


def _generic(question: str, phrase: str) -> str | None:
    """``question`` with the common noun it uses for the thing ("le prêt", "the account")
    completed into ``phrase``'s name ("le Prêt Azur", "the Nimbus Account"), or None.

    The noun, written in lower case, must open or close the name ("Prêt Azur", "carte
    Ambre", "Nimbus Account").

    Example:
        >>> _generic("Je peux rembourser le prêt en avance ?", "le Prêt Azur")
        'Je peux rembourser le Prêt Azur en avance ?'
        >>> _generic("Can I close my account online?", "the Nimbus Account")
        'Can I close my Nimbus Account online?'
        >>> _generic("Les résidences ont un parking ?", "les Résidences Lilas")
        'Les Résidences Lilas ont un parking ?'
        >>> _generic("La rue est calme ?", "le T2 rue des Lilas") is None
        True
        >>> _generic("What does the Nimbus Plus plan cost?", "Nimbus Max") is None
        True
    """
    body = re.sub(r"^(?:(?:les|le|la|the)\s+|l['’])", "", phrase, flags=_I)
    words = body.split()
    if len(words) < 2:
        return None
    heads = {w for w in (words[0], words[-1]) if len(w) >= 3 and not w[:1].isdigit()}
    for head in sorted(heads, key=len, reverse=True):
        pattern = rf"{_HEAD_DETERMINER}(?P<noun>{re.escape(head)})\b"
        match = next(
            # a common noun as written ("the plan"), not a word of another name ("the Kestrel")
            (m for m in re.finditer(pattern, question, _I) if m.group("noun")[0].islower()),
            None,
        )
        if match:
            det = match.group("det")
            return _replace(question, match, f"{det}{body}")
    return None


def put_referent(
    question: str,
    referent: str | Sequence[str],
    history: Sequence[Turn],
    rules: Collection[str] = RULES,
) -> str | None:
    """``question`` naming ``referent`` (substituted, else completed), or None.

    Several referents (a comparison) are named together at the end.

    Example:
        >>> put_referent("elle couvre le vol ?", "Formule Nid",
        ...              [("assistant", "La Formule Nid coûte 9 €.")])
        'La Formule Nid couvre le vol ?'
        >>> put_referent("Is there a limit on hotspotting?", "Kestrel Max", [])
        'Is there a limit on hotspotting for Kestrel Max?'
        >>> put_referent("Lequel a la 5G ?", ["Forfait Alizé", "Forfait Mistral"],
        ...              [("assistant", "Le Forfait Alizé et le Forfait Mistral.")])
        'Lequel a la 5G, le Forfait Alizé ou le Forfait Mistral ?'
    """
    french = detect_language(question) == "fr"
    if not isinstance(referent, str):
        missing = [r for r in referent if r and fold(r) not in fold(question)]
        if len(missing) < 2 or "completion" not in rules:
            return put_referent(question, missing[0], history, rules) if missing else None
        return _choice(question, [name_phrase(r, history) for r in missing], french)
    if not referent or fold(referent) in fold(question):
        return None
    phrase = name_phrase(referent, history)
    if french and _COMPARE_VERB.search(question):
        phrase = _with_aspect(phrase, history)
    if "substitution" in rules:
        written = _generic(question, phrase) or _substitute(question, phrase, referent, french)
        if written is not None:
            return " ".join(written.split())
    if "completion" in rules:
        return _complete(question, phrase, french)
    return None


def rule_rewrite(
    question: str,
    turns: Sequence[Turn],
    names: Sequence[str],
    rules: Collection[str] = RULES,
    *,
    referent: str | Sequence[str] = "",
) -> str | None:
    """The standalone question the ``rules`` can write, or ``None``.

    Args:
        question: the follow-up.
        turns: the conversation before it.
        names: the conversation's names, most recent first.
        rules: which families to try (see :data:`RULES`).
        referent: what the question is about, when known (the model's ``about``).
    """
    folded = fold(question)
    if moves_to_another_thing(question) and not referent:
        # "Et pour le Lenovo ?": the last question, asked of the Lenovo.
        frame = next((t for role, t in reversed(turns) if role == "user" and "?" in t), "")
        return reframe(frame, question, names) if frame else None
    chosen = referent or ordinal_referent(question, turns, names)
    if not chosen:
        compares = "comparison" in analyse(question).reasons
        if not compares and any(fold(n) in folded for n in names):
            return None  # "Et la garantie du Dell XPS 15 ?" names its subject
        # what the user spoke of before what the assistant mentioned in passing
        said = fold(" ".join(text for role, text in turns if role == "user"))
        ranked = sorted(names, key=lambda n: fold(n) not in said)
        chosen = next((n for n in ranked if fold(n) not in folded), "")
    return put_referent(question, chosen, turns, rules)
