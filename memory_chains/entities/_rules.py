"""Entity extraction without any model call: patterns, sentence evidence, optional spaCy.

:class:`RuleEntityExtractor` finds e-mails, order / ticket / booking ids, amounts (with
their "par mois" / "a month"), dates and times, street addresses, commercial names headed
by a noun ("la gamme Orthalis", "la loi ALUR"), software written as code ("orbilo-py",
``@scope/pkg``), product names (a line name followed by model tokens), and capitalised
names. Every name is typed from the evidence of its sentence and its own words
(:mod:`~memory_chains.entities._evidence`); general gazetteers (big cities, well-known
brands, common first names) and spaCy's ``fr_core_news_sm`` (``pip install
memory-chains[nlp]``) add one more vote each. It also recognises names the memory already
knows, so later mentions ("le XPS") are counted, and states relations
(:mod:`~memory_chains.entities._relrules`). It makes zero model calls.

Example:
    >>> x = RuleEntityExtractor(use_spacy=False).extract(
    ...     "User: Le Dell XPS 15 coûte 1599 € chez Boulanger ?", ["PRODUCT", "MONEY"])
    >>> [(m.name, m.type) for m in x.mentions], x.model_calls
    ([('Dell XPS 15', 'PRODUCT'), ('1599 €', 'MONEY')], 0)
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from typing import Any

from memory_chains.entities import _lexicon as lx
from memory_chains.entities._evidence import MEDIUM, NAME_HEADS, best_type, type_evidence
from memory_chains.entities._fold import fold, is_alias, tokens
from memory_chains.entities._names import shared_name_typer
from memory_chains.entities._relrules import rule_relations, speaks_for
from memory_chains.entities._types import Extraction, Mention

__all__ = ["RuleEntityExtractor", "rule_type_scores"]

log = logging.getLogger("memory_chains.entities")

SPACY_WEIGHT = 1.0  # measured on dev: as a full vote (2.0) it costs type accuracy
_EVIDENCE_TYPES = ("PERSON", "ORGANIZATION", "LOCATION", "PRODUCT", "CONCEPT")
_HEAD_TYPES = {"loi": "CONCEPT", "programme": "CONCEPT"}  # the others head products
_Add = Callable[[int, int, str, str], None]


def rule_type_scores(
    text: str, name: str, spacy_types: dict[str, str] | None = None
) -> dict[str, float]:
    """Evidence for each type of ``name`` in ``text``: sentence, name, gazetteers, spaCy.

    Example:
        >>> s = rule_type_scores("Rendez-vous à Wazemmes.", "Wazemmes")
        >>> max(s, key=s.__getitem__)
        'LOCATION'
    """
    scores = type_evidence(text, name)
    key = fold(name)

    def vote(etype: str) -> None:
        scores[etype] = scores.get(etype, 0.0) + MEDIUM

    if key in lx.FOLDED_PLACES:
        vote("LOCATION")
    if key in lx.FOLDED_ORGS or lx.ORG_SUFFIX.search(name):
        vote("ORGANIZATION")
    words = key.split()
    if words and words[0] in lx.FOLDED_FIRST and len(words) <= 3:
        vote("PERSON")
    if spacy_types and key in spacy_types:
        scores[spacy_types[key]] = scores.get(spacy_types[key], 0.0) + SPACY_WEIGHT
    if not scores:
        # "Ranelagh and Stoneybatter": a name coordinated with another shares its type.
        for other in _coordinated(text, name):
            for etype, weight in type_evidence(text, other).items():
                scores[etype] = scores.get(etype, 0.0) + weight / 2
    return scores


_CAP_NAME = r"[A-ZÀ-Ý][\w'’-]*(?:\s+[A-ZÀ-Ý][\w'’-]*)*"
_AND = r"\s*(?:,|\bet\b|\band\b|\bou\b|\bor\b)\s*(?:(?:le|la|les|l'|the)\s+)?"


def _coordinated(text: str, name: str) -> list[str]:
    """Capitalised names joined to ``name`` by "et", "and", "ou", "or" or a comma."""
    escaped = re.escape(name)
    before = re.findall(rf"({_CAP_NAME}){_AND}{escaped}(?!\w)", text)
    after = re.findall(rf"(?<!\w){escaped}{_AND}({_CAP_NAME})", text)
    return [n for n in (*before, *after) if fold(n) not in lx.STOP_CAPS][:2]


class RuleEntityExtractor:
    """Extract entities with patterns and sentence evidence; zero model calls.

    Args:
        use_spacy: add a vote from spaCy's ``fr_core_news_sm`` (the ``nlp`` extra):
            ``False`` (default: measured on the dev split it costs F1 and type accuracy,
            see ``docs/entities.md``), ``None`` to use it when importable, ``True`` to
            require it (:class:`~memory_chains.errors.ConfigurationError` otherwise).
        name_typer: types a capitalised name its sentence says nothing about: by default
            one :class:`~memory_chains.entities.NameTyper` per process (the nearest
            labelled example names by the offline embeddings, loaded on the first such
            name); another ``NameTyper``; or ``None`` for a guess from the name's shape.

    Example:
        >>> x = RuleEntityExtractor(use_spacy=False).extract(
        ...     "User: order #A-55812 via ticket TCK-2207, contact tom@x.com", ["ORDER_ID",
        ...     "TICKET_ID", "EMAIL"])
        >>> sorted((m.type, m.name) for m in x.mentions)
        [('EMAIL', 'tom@x.com'), ('ORDER_ID', 'A-55812'), ('TICKET_ID', 'TCK-2207')]
    """

    model_calls = 0

    def __init__(self, *, use_spacy: bool | None = False, name_typer: Any = "default") -> None:
        self.name_typer = shared_name_typer() if name_typer == "default" else name_typer
        self._nlp: Any = None
        if use_spacy is not False:
            self._nlp = _load_spacy(required=bool(use_spacy))

    @property
    def uses_spacy(self) -> bool:
        """True when a spaCy pipeline votes on the type of capitalised names."""
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

        self._patterns(text, add)
        caps = [(m.start(), m.end()) for m in lx.CAPS_RE.finditer(text)]
        for name in known:
            if len(fold(name)) >= 3:
                for m in re.finditer(rf"(?i)(?<!\w){re.escape(name)}(?!\w)", text):
                    if (
                        any(
                            s <= m.start()
                            and m.end() <= e
                            and e - s > len(name) + 1
                            and not text[s:e].startswith(m.group(0)[:1].upper() + "'")
                            for s, e in caps
                        )
                        and m.group(0)[:1].isupper()
                    ):
                        continue  # part of a longer name ("Keystone Shield Silver PPO")
                    add(m.start(), m.end(), m.group(0), "")
        for m in lx.SKILL_RE.finditer(text):
            add(m.start(), m.end(), m.group(0), "SKILL")
        for m in lx.POSITION_RE.finditer(text):
            if m.group(0)[0].isupper() or "POSITION" in allowed:  # a title, not a job
                add(m.start(), m.end(), m.group(0), "POSITION")
        spacy_types = self._spacy_types(text)
        known_tokens = {w for n in known for w in fold(n).split() if len(w) >= 3}
        evidence_types = [t for t in _EVIDENCE_TYPES if _map_type(t, allowed)]
        for m in lx.CAPS_RE.finditer(text):
            self._caps(text, m, spacy_types, add, known, known_tokens, evidence_types)
        found = _people_by_part(found)
        # The same name written in lower case elsewhere in the turn ("banque sorel").
        for _, _, name, etype in list(found):
            if etype in _EVIDENCE_TYPES and len(name) >= 4 and name != name.lower():
                for m in re.finditer(rf"(?<!\w){re.escape(name.lower())}(?!\w)", text):
                    add(m.start(), m.end(), m.group(0), etype)

        found.sort()
        mentions: list[Mention] = []
        for _, _, name, etype in found:
            if etype == "":
                etype = "KNOWN"
            mapped = _map_type(etype, allowed)
            if mapped or etype == "KNOWN":
                mentions.append(Mention(name, mapped or "", {}))
        mentions = _attach_attributes(text, mentions)
        # A known name comes back untyped (the memory has its type); relations need one.
        typed = [
            m
            if m.type
            else Mention(m.name, best_type(rule_type_scores(text, m.name), evidence_types))
            for m in mentions
        ]
        house, stated = speaks_for(text, typed)
        return Extraction(
            tuple(mentions),
            rule_relations(text, typed),
            model_calls=0,
            house=house,
            house_stated=stated,
        )

    def type_scores(self, text: str, name: str) -> dict[str, float]:
        """The evidence this extractor has for each type of ``name`` in ``text``."""
        return rule_type_scores(text, name, self._spacy_types(text))

    def _patterns(self, text: str, add: _Add) -> None:
        for etype, pattern in lx.PATTERNS:
            if etype == "ID":
                etype = (
                    "TICKET_ID"
                    if lx.TICKET_WORDS.search(text)
                    else "BOOKING_ID"
                    if lx.BOOKING_WORDS.search(text)
                    else "ORDER_ID"
                )
            for m in pattern.finditer(text):
                if "v" in pattern.groupindex and m.group("v"):
                    add(m.start("v"), m.end("v"), m.group("v"), etype)
                else:
                    add(m.start(), m.end(), m.group(0), etype)
        for m in lx.ADDRESS_RE.finditer(text):
            add(m.start(), m.end(), m.group(0), "LOCATION")
        for m in lx.HEADED_RE.finditer(text):
            add(m.start(), m.end(), m.group(0), _HEAD_TYPES.get(m.group("head"), "PRODUCT"))
        for m in lx.INSTITUTION_RE.finditer(text):
            head = fold(m.group("head"))
            for etype in ("ORGANIZATION", "LOCATION"):
                if head in NAME_HEADS[etype]:
                    add(m.start("name"), m.end("name"), m.group("name"), etype)
        for m in lx.CODE_RE.finditer(text):
            add(m.start(), m.end(), m.group(0), "PRODUCT")
        for m in lx.INSTALL_RE.finditer(text):
            add(m.start("v"), m.end("v"), m.group("v"), "PRODUCT")
        for m in lx.PRODUCT_RE.finditer(text):
            words = m.group(0).split()
            if fold(words[0]) in lx.STOP_CAPS:
                continue
            while len(words) > 1 and fold(words[-1]) in lx.STOP_CAPS:
                words = words[:-1]
            name = " ".join(words)
            if fold(name) in lx.FOLDED_ORGS or fold(name) in lx.FOLDED_PLACES:
                continue
            add(m.start(), m.start() + len(name), name, "PRODUCT")
        for m in lx.PHRASES_RE.finditer(text):
            add(m.start(), m.end(), m.group(0), lx.PHRASE_TYPES[m.group(0)])

    def _caps(
        self,
        text: str,
        m: re.Match[str],
        spacy_types: dict[str, str],
        add: _Add,
        known: Sequence[str],
        known_tokens: set[str],
        evidence_types: Sequence[str],
    ) -> None:
        words = m.group(0).split()
        start = m.start()
        if words and re.match(r"^[LD]['’]\w", words[0]):
            if not words[0][2].isupper():
                return  # "L'opposition": an elided article at the start of a sentence
            words[0] = words[0][2:]  # "L'Intensive Été"
        # Drop capitalised sentence starters and function words at the front.
        article = False  # "The Blue Lantern", "Les Nuits Fauves": not a person's name
        while words and fold(words[0]) in lx.STOP_CAPS:
            article = article or fold(words[0]) in ("the", "le", "la", "les")
            start = text.index(words[0], start) + len(words[0])
            words = words[1:]
        while words and fold(words[-1]) in lx.STOP_CAPS:
            words = words[:-1]
        if not words:
            return
        name = re.sub(r"['’]s$", "", " ".join(words)).rstrip("'’")  # "Quillmark's"
        start = text.index(words[0], start)
        key = fold(name)
        if (len(words) == 1 and key in known_tokens) or any(
            len(tokens(name)) < len(tokens(k)) and is_alias(name, k) for k in known
        ):
            add(start, start + len(name), name, "")  # part of a known name: same entity
            return
        if len(key) < 3 or (len(words) == 1 and name in lx.COMMON_ACRONYMS):
            return
        scores = rule_type_scores(text, name, spacy_types)
        at_start = bool(lx.SENTENCE_START.search(text[:start]))
        if not scores and at_start and len(words) == 1:
            return  # a capitalised first word with nothing saying it is a name
        default = _default_type(words, name)
        if article and default == "PERSON":
            default = "ORGANIZATION"
        if not scores and self.name_typer is not None:
            default = best_type(self.name_typer.scores(name), evidence_types, default)
        etype = best_type(scores, evidence_types, default)
        add(start, start + len(name), name, etype)

    def _spacy_types(self, text: str) -> dict[str, str]:
        if self._nlp is None:
            return {}
        out: dict[str, str] = {}
        for ent in self._nlp(text).ents:
            label = lx.SPACY_LABELS.get(ent.label_)
            if label:
                out[fold(ent.text)] = label
        return out


def _people_by_part(found: list[tuple[int, int, str, str]]) -> list[tuple[int, int, str, str]]:
    """A single word that is part of a person's name in the same turn is that person."""
    parts = {w for _, _, n, t in found if t == "PERSON" for w in fold(n).split()[1:] or ()}
    parts |= {fold(n).split()[0] for _, _, n, t in found if t == "PERSON" and " " in n}
    return [
        (s, e, n, "PERSON" if t and " " not in n.strip() and fold(n) in parts else t)
        for s, e, n, t in found
    ]


def _default_type(words: Sequence[str], name: str) -> str:
    """The type of a capitalised name nothing else speaks for."""
    if len(words) == 1:
        return "CONCEPT" if lx.ACRONYM_RE.match(name) else "ORGANIZATION"
    lowered = [w.lower() for w in words]
    if lowered[0] in ("the", "les", "le", "la", "l'") or any(
        w in ("de", "du", "des", "of", "&", "and", "et") for w in lowered[1:]
    ):
        return "ORGANIZATION"
    return "PERSON" if len(words) <= 3 else "ORGANIZATION"


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
    for alt in lx.FALLBACK.get(etype, ()):
        if alt in allowed:
            return alt
    return ""


def _attach_attributes(text: str, mentions: list[Mention]) -> list[Mention]:
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
        w = lx.WARRANTY.search(sentence)
        if w:
            attrs["warranty"] = (w.group(1) or w.group(2)).strip()
        if attrs:
            m = out[products[0]]
            out[products[0]] = Mention(m.name, m.type, attrs)
    return out
