"""The rewrite prompt: fixed instructions and worked examples, then one conversation.

The instructions and the examples are the same for every call and come first, so llama.cpp
reuses their KV cache and only the conversation and the question are processed each time
(:func:`render_request` keeps that part short: the latest turns, answers clipped, older
names listed). The model answers ``{"about": "...", "question": "..."}``
(:data:`RESPONSE_FORMAT`): what the message is about, then the standalone question.

The examples are in domains the evaluation sets do not use (bicycles, cooking classes,
hotels, museums, a garden centre, pet food, astronomy, sailing); a test checks that none of
their sentences is in those sets.

Example:
    >>> messages = build_messages("Et sa garantie ?", [("user", "Le vélo Orbea Vibe ?")], [])
    >>> messages[-1].content.splitlines()[-1]
    'Message: Et sa garantie ?'
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from memory_chains.rewrite._entities import candidate_entities
from memory_chains.rewrite._history import Turn

__all__ = ["build_messages", "render_request", "response_format"]


def response_format(names: Sequence[str]) -> dict[str, Any]:
    """The JSON schema of the answer: ``about`` can only hold ``names``.

    Example:
        >>> response_format(["Forfait Alizé"])["json_schema"]["schema"]["properties"]["about"]
        {'type': 'array', 'items': {'type': 'string', 'enum': ['Forfait Alizé']}, 'maxItems': 3}
    """
    about: dict[str, Any] = {"type": "array", "maxItems": 3 if names else 0}
    if names:
        about = {"type": "array", "items": {"type": "string", "enum": list(names)}, "maxItems": 3}
    schema = {
        "type": "object",
        "properties": {"about": about, "question": {"type": "string", "maxLength": 300}},
        "required": ["about", "question"],
        "additionalProperties": False,
    }
    return {"type": "json_schema", "json_schema": {"name": "standalone_question", "schema": schema}}


# The model first says what the message is about ("about"), then writes the question: having
# named the referent, a small model leaves it out of the question far less often, and code
# can check the name against the conversation.
INSTRUCTIONS = """\
The user's last message is a follow-up in a conversation. Rewrite it as a standalone \
question that a search engine understands without the conversation.
1. "about": which of the listed names the message is about: the product, offer, place or \
person a pronoun, "celui-ci", "le second", "là-bas", "it", "the other one" stands for, or \
that an elliptic message ("Et pour …", "What about …", "Y a un engagement ?") leaves out. \
Every name compared when the message compares or chooses between things. [] when the \
message itself names what it is about, or moves to a new subject.
2. "question": the message rewritten so that it names "about", in the message's language, \
keeping the user's words. When "Et pour …" changes the aspect, ask the new aspect about \
the same thing. Never answer, no parentheses.
Reply with JSON only."""

# (turns, message, about, standalone question). None of these sentences is in an
# evaluation set (a test checks it).
_EXAMPLES: tuple[tuple[tuple[Turn, ...], str, list[str], str], ...] = (
    (
        (
            ("user", "Je regarde le vélo Orbea Vibe H30 et le Cube Touring Hybrid."),
            ("assistant", "Le Orbea Vibe H30 coûte 2 399 € et le Cube Touring Hybrid 2 099 €."),
        ),
        "Quelle est l'autonomie de la batterie du second ?",
        ["Cube Touring Hybrid"],
        "Quelle est l'autonomie de la batterie du Cube Touring Hybrid ?",
    ),
    (
        (
            ("user", "Vous avez encore des places pour l'atelier pâtisserie du jeudi ?"),
            ("assistant", "Oui, il reste trois places à l'atelier pâtisserie du jeudi, 65 €."),
        ),
        "Et pour annuler ?",
        [],
        "Comment annuler l'atelier pâtisserie du jeudi ?",
    ),
    (
        (
            ("user", "Bonjour, je voudrais réserver à l'hôtel Les Tilleuls à Colmar."),
            ("assistant", "Très bien, l'hôtel Les Tilleuls a des chambres libres en mars."),
            ("user", "Le petit-déjeuner est compris ?"),
            ("assistant", "Oui, il est inclus dans tous les tarifs."),
        ),
        "faut-il verser un acompte ?",
        ["Les Tilleuls"],
        "Faut-il verser un acompte pour l'hôtel Les Tilleuls ?",
    ),
    (
        (
            ("user", "Quelle est la différence entre le pass Ambre et le pass Topaze ?"),
            ("assistant", "Le pass Topaze inclut les transports en commun, pas le pass Ambre."),
        ),
        "Lequel est le moins cher pour une famille ?",
        ["Ambre", "Topaze"],
        "Lequel est le moins cher pour une famille, le pass Ambre ou le pass Topaze ?",
    ),
    (
        (
            ("user", "Je réserve une chambre double à l'hôtel Les Tilleuls."),
            ("user", "Quel est son prix ?"),
            ("assistant", "La chambre double des Tilleuls est à 95 € la nuit."),
        ),
        "Et par rapport à celle du Relais Fleuri ?",
        ["Les Tilleuls"],
        "Quel est le prix de la chambre double de l'hôtel Les Tilleuls par rapport à celle du "
        "Relais Fleuri ?",
    ),
    (
        (
            ("user", "Je cherche un terreau pour mes tomates."),
            ("assistant", "Le terreau Florabelle potager est à 8,90 € le sac de 40 L."),
        ),
        "il est bio ?",
        ["Florabelle"],
        "Le terreau Florabelle potager est-il bio ?",
    ),
    (
        (
            ("user", "Combien coûte le terreau universel Florabelle 40 L ?"),
            ("assistant", "Il est à 8,90 € le sac."),
        ),
        "Vous livrez à domicile ?",
        [],
        "Vous livrez à domicile ?",
    ),
    (
        (
            ("user", "My cat only eats the PurrFect Salmon kibble."),
            ("assistant", "PurrFect Salmon is grain-free and comes in 2 kg and 7 kg bags."),
        ),
        "ok is it suitable for kittens?",
        ["PurrFect Salmon"],
        "Is PurrFect Salmon kibble suitable for kittens?",
    ),
    (
        (
            ("user", "What is a refracting telescope?"),
            ("user", "How is it different from a reflecting telescope?"),
        ),
        "Which one is better for beginners?",
        [],
        "Which one is better for beginners, a refracting telescope or a reflecting telescope?",
    ),
    (
        (
            ("user", "Where are your sailing courses?"),
            ("assistant", "In Brest (five days), Lorient (three days) and Vannes (a weekend)."),
        ),
        "what about the last one, is lunch included?",
        ["Vannes"],
        "Is lunch included in the Vannes sailing course?",
    ),
    (
        (
            ("user", "What are the symptoms of hay fever?"),
            ("user", "Can it cause a fever?"),
        ),
        "How do antihistamines work?",
        [],
        "How do antihistamines work?",
    ),
)

_MAX_NAMES = 8
"""Names listed to the model (the conversation's, most recent first)."""
_USER_WORDS = 30
_LAST_ANSWER_WORDS = 32
_ANSWER_WORDS = 18


def _clip(text: str, words: int) -> str:
    parts = text.split()
    return text if len(parts) <= words else " ".join(parts[:words]) + " …"


def render_request(question: str, turns: Sequence[Turn], names: Sequence[str] = ()) -> str:
    """The variable part of the prompt: the conversation's names, its latest turns, the
    message.

    The last answer keeps more words than the earlier ones: it is what the message most
    often continues.

    Example:
        >>> print(render_request("Et le prix ?", [("user", "Le vélo Orbea ?"),
        ...                      ("assistant", "En stock.")], ["Orbea", "Cube Touring"]))
        Names: Orbea; Cube Touring
        User: Le vélo Orbea ?
        Assistant: En stock.
        Message: Et le prix ?
    """
    lines = [f"Names: {'; '.join(names) if names else '(none)'}"]
    last_answer = max((i for i, (role, _) in enumerate(turns) if role != "user"), default=-1)
    for index, (role, text) in enumerate(turns):
        if role == "user":
            lines.append(f"User: {_clip(text, _USER_WORDS)}")
        else:
            words = _LAST_ANSWER_WORDS if index == last_answer else _ANSWER_WORDS
            lines.append(f"Assistant: {_clip(text, words)}")
    lines.append(f"Message: {question.strip()}")
    return "\n".join(lines)


def _answer(about: list[str], question: str) -> str:
    return json.dumps({"about": about, "question": question}, ensure_ascii=False)


def _fixed_messages() -> tuple[BaseMessage, ...]:
    messages: list[BaseMessage] = [SystemMessage(content=INSTRUCTIONS)]
    for turns, message, about, standalone in _EXAMPLES:
        names = candidate_entities(turns, limit=_MAX_NAMES)
        messages.append(HumanMessage(content=render_request(message, turns, names)))
        messages.append(AIMessage(content=_answer(about, standalone)))
    return tuple(messages)


FIXED_MESSAGES = _fixed_messages()
"""The instructions and worked examples every call starts with (cached by llama.cpp)."""


def build_messages(
    question: str, turns: Sequence[Turn], names: Sequence[str] = ()
) -> list[BaseMessage]:
    """The fixed messages, then the request for this question."""
    return [*FIXED_MESSAGES, HumanMessage(content=render_request(question, turns, names))]


def example_texts() -> list[str]:
    """Every sentence of the worked examples (for the leak test against evaluation sets)."""
    texts: list[str] = []
    for turns, message, _, standalone in _EXAMPLES:
        texts.extend(text for _, text in turns)
        texts.extend((message, standalone))
    return texts
