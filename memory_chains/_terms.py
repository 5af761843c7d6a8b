"""Lexical normalisation shared by the episodic index and the summary's support check:
folding, stop words, light stemming.

:func:`terms` turns a text into the index terms BM25 counts: accents and case folded
(:func:`memory_chains._folding.fold`), English possessives dropped, French elisions
(``l'``, ``d'``, ``qu'`` …) split off, stop words of both languages removed, and a light
suffix stemmer applied so that "painting", "paints" and "painted" meet.
:func:`keywords` keeps the content words of a question (no stemming) for query
decomposition.

Example:
    >>> terms("Caroline's paintings of sunsets")
    ['carolin', 'paint', 'sunset']
    >>> terms("L'exposition d'Émilie à Paris")
    ['exposit', 'emili', 'pari']
"""

from __future__ import annotations

import re

from memory_chains._folding import fold

__all__ = [
    "ENGLISH_STOP_WORDS",
    "FRENCH_STOP_WORDS",
    "QUESTION_WORDS",
    "STOP_WORDS",
    "keywords",
    "stem",
    "terms",
]

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_ELISION = re.compile(r"^(?:l|d|j|m|n|s|t|c|qu|jusqu|lorsqu|puisqu)'(?=[a-z])")

# Function words, folded: the one list of each language. A module that needs more (the
# labels of a rendered history, chat requests) adds its own words to these, not a copy.
_ENGLISH = """
    a about after again all also am an and any are as at be been before being both but by
    can could did do does doing done during each few for from had has have having he her
    here hers herself him himself his how i if in into is it its itself just let like me
    more most my myself no nor not now of off on once only or other our ours out over own
    really same she should so some such than that the their theirs them themselves then
    there these they this those through to too under until up us very was we were what
    when where which while who whom why will with would yeah yes you your yours yourself
    oh hey hi wow lol thanks thank ok okay sure well get got go going gonna one
    less may might must onto shall whose without please
    """
_FRENCH = """
    au aux avec ce ces cette dans de des du elle elles en est et eux il ils je la le les
    leur leurs lui ma mais me meme mes moi mon ne nos notre nous on ou par pas pour qu que
    qui sa se ses son sur ta te tes toi ton tu un une vos votre vous y ete etre avoir ai as
    avons avez ont suis es sommes etes sont fait faire quoi quand comment pourquoi quel
    quelle quels quelles
    alors aussi autre autres bien car ceci cela celle celui cet ceux chaque chez combien
    comme deja donc dont encore entre etait eu ici jamais memes moins non oui peut peux
    pouvez puis plus rien sans soi sous tous tout toute toutes tres vers voici voila
    """
ENGLISH_STOP_WORDS: frozenset[str] = frozenset(_ENGLISH.split())
FRENCH_STOP_WORDS: frozenset[str] = frozenset(_FRENCH.split())
STOP_WORDS: frozenset[str] = ENGLISH_STOP_WORDS | FRENCH_STOP_WORDS
"""Folded function words of English and French (both: a conversation mixes them)."""

_QUESTION_TEXT = """
    quel quelle quels quelles lequel laquelle lesquels lesquelles combien comment pourquoi
    quand ou est-ce c'est entre peut peuvent puis pouvez faut doit dois devez existe possible
    concernant cote niveau ainsi aussi egalement alors donc apres avant depuis pendant chez
    sans sous vers deux celui celle ceux celles ci compare comparer comparez
    what which who whom whose where when why how is are was were do does did can could
    should would will shall may might must has have had there between compared versus vs
    than about regarding also else tell give list describe explain both two
    svp stp merci super top parfait bon bien accord daccord salut bonjour nice great cool
    alright hello perfect
    """
QUESTION_WORDS: frozenset[str] = frozenset(_QUESTION_TEXT.split()) | STOP_WORDS
"""Folded words that frame a question rather than say what it is about ("quel", "combien",
"which", "between"), chat fillers ("svp", "nice") and stop words: a rewrite may add or drop
them freely."""

# Longest first; each needs a stem of at least 3 characters left.
_SUFFIXES = (
    "ations", "ation", "ements", "ement", "ings", "ing", "ities", "ity", "ness", "ments",
    "ment", "ies", "ied", "ers", "er", "ed", "es", "s", "ly", "ions", "ion", "eux",
    "euse", "ees", "ee", "e", "x",
)  # fmt: skip


def stem(word: str) -> str:
    """Strip one common English/French inflectional suffix, keeping at least 3 characters.

    Example:
        >>> [stem(w) for w in ("painted", "paints", "painting", "families", "cats")]
        ['paint', 'paint', 'paint', 'famil', 'cat']
    """
    if len(word) <= 3 or word.isdigit():
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiou":
        word = word[:-1]  # running -> runn -> run
    return word


def _words(text: str) -> list[str]:
    out: list[str] = []
    for word in _WORD.findall(fold(text).replace("\u2019", "'")):
        word = _ELISION.sub("", word)
        if word.endswith("'s"):
            word = word[:-2]
        word = word.split("'", 1)[0]  # don't, can't -> don, can (then stop words)
        if word and word not in STOP_WORDS:
            out.append(word)
    return out


def terms(text: str) -> list[str]:
    """Index terms of ``text``: folded, stop words removed, lightly stemmed.

    Example:
        >>> terms("What did Melanie paint?")
        ['melani', 'paint']
    """
    return [stem(word) for word in _words(text)]


def keywords(text: str) -> list[str]:
    """Distinct content words of ``text`` in order (folded, not stemmed).

    Example:
        >>> keywords("When did Caroline and Melanie go to the museum with Caroline?")
        ['caroline', 'melanie', 'museum']
    """
    seen: dict[str, None] = {}
    for word in _words(text):
        seen.setdefault(word, None)
    return list(seen)
