"""The entity extractor's prompt: instructions, type and relation definitions, examples.

The fixed part (system message and worked examples) is identical from call to call, so
llama.cpp reuses its KV cache and only the turn is processed. The examples are invented
for the prompt (no name of an evaluation set): they show the cases a name list gets wrong
(a district, a plan, a library in lower case, a job title, a company named after a person).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "CONFIDENCE_LEVELS",
    "RELATION_HINTS",
    "TYPE_HINTS",
    "examples",
    "instructions",
    "schema",
]

CONFIDENCE_LEVELS = (0.3, 0.6, 0.9)

TYPE_HINTS: Mapping[str, str] = {
    "PERSON": "a person, by full name, first name or title + name (Mme Quenehen, Dr Patel)",
    "PRODUCT": (
        "something bought, subscribed to or used: a device or vehicle model, a product "
        "range, software, an app, a programming library, a plan, offer, card, account or "
        "contract (Galaxy S24, forfait Zen 50, Gold Card, numpy)"
    ),
    "ORGANIZATION": (
        "a company, bank, shop, brand as a company, school, clinic, administration, team, "
        "association or band"
    ),
    "LOCATION": (
        "a country, city, district or neighbourhood, street, address, building, room, or a "
        "branch named by its place"
    ),
    "DATE": "a specific date, day, time or period (12 mars à 14h, next Monday, l'été 2025)",
    "MONEY": "an amount with its currency, with its 'per month' (1599 €, $25 a month)",
    "CONCEPT": (
        "another named thing: a programme, diploma or course, a law or regulation, a named "
        "procedure, a job title used as a title (Head of Data), a show or exhibition"
    ),
    "ORDER_ID": "an order number",
    "TICKET_ID": "a support ticket or case number",
    "BOOKING_ID": "a booking or reservation reference",
    "EMAIL": "an e-mail address",
    "ISSUE": "the problem the customer reports (écran noir, battery drain)",
    "POSITION": "a job title or role",
    "SKILL": "a skill, language or tool a person knows",
    "EDUCATION": "a degree, diploma or school",
}

RELATION_HINTS: Mapping[str, str] = {
    "WORKS_AT": "person -> organization they work for",
    "LOCATED_IN": "organization, place or person (or USER) -> the place it is in",
    "OWNS": "USER or person or organization -> a product they have",
    "COMPARES_TO": "thing <-> another thing the user weighs against it",
    "PART_OF": "product -> its range, district -> its city, team -> its company",
    "PREFERS": "USER -> the thing they choose",
    "INTERESTED_IN": "USER -> a thing they ask about or consider",
    "MADE_BY": "product -> the organization that makes or sells it",
}

_INSTRUCTIONS = """You extract the named things of one turn of a conversation (the user's \
message and the assistant's reply) for a memory. Answer with JSON only.

Entity types:
{types}

Rules:
- name: the fullest form written in the text, copied exactly; amounts and dates as written.
- type: decide from the sentence, not from how the name sounds: "à X", "in X", "near X" \
are places; "chez X", "X Bank", "X Ltd" organizations; "Mme X", "I'm X" people; "l'offre \
X", "the X plan", "pip install x" products.
- confidence: 0.9 when the sentence makes the type clear, 0.6 when it is a guess, 0.3 when unsure.
- Named things only: never pronouns, durations (2 ans), or common nouns (laptop, livraison).
{relations}- Nothing to extract: {nothing}."""

_RELATIONS_RULE = """- relations: only those the text states, between extracted names; "USER" is \
the person chatting. Kinds:
{kinds}
"""

# (turn text, answer): invented for the prompt.
_EXAMPLES: tuple[tuple[str, dict[str, Any]], ...] = (
    (
        "User: bonjour, je suis cliente chez banque verlaine et j'aimerais passer au forfait "
        "Azur Plus. J'habite à Montbrison.\nAssistant: Bonjour, ici Loïc Daguerre, conseiller "
        "chez Banque Verlaine. Le forfait Azur Plus coûte 7,50 € par mois ; rendez-vous à "
        "notre agence du quartier Saint-Just, jeudi 4 juin à 11h ?",
        {
            "entities": [
                {"name": "Banque Verlaine", "type": "ORGANIZATION", "confidence": 0.9},
                {"name": "forfait Azur Plus", "type": "PRODUCT", "confidence": 0.9},
                {"name": "Montbrison", "type": "LOCATION", "confidence": 0.9},
                {"name": "Loïc Daguerre", "type": "PERSON", "confidence": 0.9},
                {"name": "7,50 € par mois", "type": "MONEY", "confidence": 0.9},
                {"name": "Saint-Just", "type": "LOCATION", "confidence": 0.9},
                {"name": "jeudi 4 juin à 11h", "type": "DATE", "confidence": 0.9},
            ],
            "relations": [
                {"source": "USER", "relation": "INTERESTED_IN", "target": "forfait Azur Plus"},
                {"source": "USER", "relation": "LOCATED_IN", "target": "Montbrison"},
                {"source": "Loïc Daguerre", "relation": "WORKS_AT", "target": "Banque Verlaine"},
                {"source": "forfait Azur Plus", "relation": "MADE_BY", "target": "Banque Verlaine"},
            ],
        },
    ),
    (
        "User: Our team uses tessera-sdk with polars. Is Tessera Cloud cheaper than the "
        "Ravenwood Suite?\nAssistant: Tessera Cloud is $40 a seat, Ravenwood is $55. Ask "
        "Ines Mbeki, our Head of Sales at Tessera Labs in Bristol.",
        {
            "entities": [
                {"name": "tessera-sdk", "type": "PRODUCT", "confidence": 0.9},
                {"name": "polars", "type": "PRODUCT", "confidence": 0.6},
                {"name": "Tessera Cloud", "type": "PRODUCT", "confidence": 0.9},
                {"name": "Ravenwood Suite", "type": "PRODUCT", "confidence": 0.9},
                {"name": "$40 a seat", "type": "MONEY", "confidence": 0.9},
                {"name": "$55", "type": "MONEY", "confidence": 0.9},
                {"name": "Ines Mbeki", "type": "PERSON", "confidence": 0.9},
                {"name": "Head of Sales", "type": "CONCEPT", "confidence": 0.9},
                {"name": "Tessera Labs", "type": "ORGANIZATION", "confidence": 0.9},
                {"name": "Bristol", "type": "LOCATION", "confidence": 0.9},
            ],
            "relations": [
                {"source": "Tessera Cloud", "relation": "COMPARES_TO", "target": "Ravenwood Suite"},
                {"source": "Ines Mbeki", "relation": "WORKS_AT", "target": "Tessera Labs"},
                {"source": "Tessera Labs", "relation": "LOCATED_IN", "target": "Bristol"},
                {"source": "Tessera Cloud", "relation": "MADE_BY", "target": "Tessera Labs"},
            ],
        },
    ),
)


def instructions(types: Sequence[str], relations: Sequence[str]) -> str:
    """The system message for these types and relation kinds."""
    type_lines = "\n".join(
        f"- {t}: {TYPE_HINTS.get(t, t.lower().replace('_', ' '))}" for t in types
    )
    if not relations:  # relations left to the rules: not asked of the model
        return _INSTRUCTIONS.format(types=type_lines, relations="", nothing='{"entities": []}')
    relation_lines = "\n".join(
        f"  - {r}: {RELATION_HINTS.get(r, r.lower().replace('_', ' '))}" for r in relations
    )
    return _INSTRUCTIONS.format(
        types=type_lines,
        relations=_RELATIONS_RULE.format(kinds=relation_lines),
        nothing='{"entities": [], "relations": []}',
    )


def examples(types: Sequence[str], relations: Sequence[str]) -> list[tuple[str, dict[str, Any]]]:
    """The worked examples, keeping only the configured types and relation kinds."""
    out: list[tuple[str, dict[str, Any]]] = []
    for text, answer in _EXAMPLES:
        kept = [e for e in answer["entities"] if e["type"] in types]
        names = {e["name"] for e in kept} | {"USER"}
        rels = [
            r
            for r in answer["relations"]
            if r["source"] in names and r["target"] in names and r["relation"] in relations
        ]
        out.append(
            (text, {"entities": kept, "relations": rels} if relations else {"entities": kept})
        )
    return out


def schema(types: Sequence[str], relations: Sequence[str]) -> dict[str, Any]:
    """The JSON schema the answer is constrained to (type and relation enums; no
    ``relations`` array when no kind is asked)."""
    out: dict[str, Any] = {
        "type": "object",
        "properties": {
            "entities": {
                "type": "array",
                "maxItems": 16,
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "minLength": 1, "maxLength": 80},
                        "type": {"type": "string", "enum": list(types)},
                        # Three levels, not a free number: a small model constrained to
                        # a number can spin on digits ("0.90000…") until max_tokens.
                        "confidence": {"enum": list(CONFIDENCE_LEVELS)},
                        "attributes": {
                            "type": "object",
                            "additionalProperties": {"type": "string", "maxLength": 80},
                        },
                    },
                    # confidence is asked for by the examples, not forced: a prompt
                    # built on this schema without it (long-term memory) stays valid.
                    "required": ["name", "type"],
                },
            },
            "relations": {
                "type": "array",
                "maxItems": 8,
                "items": {
                    "type": "object",
                    "properties": {
                        "source": {"type": "string"},
                        "relation": {"type": "string", "enum": list(relations)},
                        "target": {"type": "string"},
                    },
                    "required": ["source", "relation", "target"],
                },
            },
        },
        "required": ["entities", "relations"],
    }
    if not relations:
        del out["properties"]["relations"]
        out["required"] = ["entities"]
    return out
