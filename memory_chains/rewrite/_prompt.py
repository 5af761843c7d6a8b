"""The rewrite prompt: a fixed instruction block with few-shot examples, then the request.

The system message never changes between calls, so llama.cpp reuses its KV cache and only
the short request (candidate names, compact history, question) is processed each time.
The model answers one JSON object ``{"referent": …, "standalone_question": …}``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from memory_chains.rewrite._history import Turn

RESPONSE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "referent": {"type": "string"},
        "standalone_question": {"type": "string"},
    },
    "required": ["referent", "standalone_question"],
    "additionalProperties": False,
}
RESPONSE_FORMAT: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {"name": "standalone_question", "schema": RESPONSE_SCHEMA},
}

_ANSWER_WORDS = 24
_USER_WORDS = 40

# (candidates, turns, question, referent, rewrite): none of these sentences is in the dev set.
_EXAMPLES: tuple[tuple[str, tuple[Turn, ...], str, str, str], ...] = (
    (
        "Google Pixel 8; Samsung Galaxy S23",
        (
            ("user", "J'hésite entre le Samsung Galaxy S23 et le Google Pixel 8."),
            (
                "assistant",
                "Le Galaxy S23 est plus compact, le Pixel 8 a un meilleur appareil photo.",
            ),
        ),
        "Quelle est l'autonomie du premier ?",
        "Samsung Galaxy S23",
        "Quelle est l'autonomie du Samsung Galaxy S23 ?",
    ),
    (
        "Trek Domane AL 2",
        (
            ("user", "Combien coûte le vélo Trek Domane AL 2 ?"),
            ("assistant", "Il coûte 1 099 euros."),
        ),
        "Et son poids ?",
        "Trek Domane AL 2",
        "Quel est le poids du vélo Trek Domane AL 2 ?",
    ),
    (
        "Annecy; Belvédère",
        (
            ("user", "Parlez-moi de l'hôtel Belvédère à Annecy."),
            ("assistant", "C'est un hôtel quatre étoiles au bord du lac."),
            ("user", "Le petit-déjeuner est-il compris ?"),
            ("assistant", "Oui, il est compris dans le tarif."),
        ),
        "Il accepte les chiens ?",
        "hôtel Belvédère à Annecy",
        "L'hôtel Belvédère à Annecy accepte-t-il les chiens ?",
    ),
    (
        "Bosch Serie 6; Miele W1",
        (
            ("user", "Quelle est la consommation du lave-linge Miele W1 ?"),
            ("assistant", "Environ 50 kWh pour 100 cycles."),
        ),
        "Et celle du Bosch ?",
        "Bosch Serie 6",
        "Quelle est la consommation du lave-linge Bosch Serie 6 ?",
    ),
    (
        "Lisbonne",
        (
            ("user", "Je pars à Lisbonne en mai."),
            ("assistant", "Bon choix, il fait environ 22 degrés à cette période."),
        ),
        "Comment se déplacer là-bas ?",
        "Lisbonne",
        "Comment se déplacer à Lisbonne ?",
    ),
    (
        "",
        (
            ("user", "Vous proposez des ateliers de poterie le samedi ?"),
            ("assistant", "Oui, deux ateliers de poterie ont lieu le samedi matin."),
        ),
        "Combien coûtent ces ateliers ?",
        "ateliers de poterie du samedi",
        "Combien coûtent les ateliers de poterie du samedi ?",
    ),
    (
        "Quechua MH100",
        (
            ("user", "Quel est le poids de la tente Quechua MH100 ?"),
            ("assistant", "Elle pèse 2,5 kg."),
        ),
        "Quels sont vos délais de livraison en Suisse ?",
        "",
        "Quels sont vos délais de livraison en Suisse ?",
    ),
    (
        "Nikon Z6 II",
        (
            ("user", "Tell me about the Nikon Z6 II."),
            ("assistant", "It is a full-frame mirrorless camera released in 2020."),
        ),
        "Does it have image stabilization?",
        "Nikon Z6 II",
        "Does the Nikon Z6 II have image stabilization?",
    ),
    (
        "London; Tokyo",
        (
            ("user", "How long is the flight from London to Tokyo?"),
            ("assistant", "About fourteen hours nonstop."),
        ),
        "What about Seoul?",
        "Seoul",
        "How long is the flight from London to Seoul?",
    ),
    (
        "Ada Lovelace; Early life",
        (
            ("user", "Ada Lovelace"),
            ("user", "Early life"),
            ("user", "Who raised her?"),
            ("assistant", "Her mother, Lady Byron, raised her after her parents separated."),
        ),
        "Did she have any siblings?",
        "Ada Lovelace",
        "Did Ada Lovelace have any siblings?",
    ),
    (
        "Rome",
        (
            ("user", "What are the best museums in Rome?"),
            ("assistant", "The Vatican Museums and the Borghese Gallery are the highlights."),
        ),
        "How do I renew my passport?",
        "",
        "How do I renew my passport?",
    ),
)

_INSTRUCTIONS = """\
You rewrite the user's last question so that it can be understood without the conversation.
- Replace pronouns (il, elle, sa, son, ses, celui, celle, ces…, it, its, they, this, that, \
one…), ordinals (le premier, le second, the first…), "là-bas"/"there" and ellipses \
("Et …", "What about …") by the exact name they refer to, taken from the conversation.
- The referent may be several exchanges back. "Entities" lists some names from the \
conversation, most recent first; the referent can also be a thing named in lower case \
(a class, a service, a policy).
- The standalone question must contain the referent's name.
- Keep every detail of the question and write it in the same language as the question.
- If the question is already clear on its own or changes topic, copy it unchanged and \
leave "referent" empty.
- Never answer the question. Reply with JSON only: \
{"referent": "...", "standalone_question": "..."}.
"""


def _clip(text: str, words: int) -> str:
    parts = text.split()
    return text if len(parts) <= words else " ".join(parts[:words]) + " …"


def render_request(question: str, turns: Sequence[Turn], candidates: Sequence[str]) -> str:
    """The variable part of the prompt: names, compact history, question."""
    lines = [f"Entities: {'; '.join(candidates) if candidates else '(none)'}"]
    for role, text in turns:
        if role == "user":
            lines.append(f"User: {_clip(text, _USER_WORDS)}")
        else:
            lines.append(f"Assistant: {_clip(text, _ANSWER_WORDS)}")
    lines.append(f"Follow-up question: {question.strip()}")
    return "\n".join(lines)


def _system_prompt() -> str:
    blocks = [_INSTRUCTIONS, "Examples:"]
    for candidates, turns, question, referent, rewrite in _EXAMPLES:
        request = render_request(question, turns, candidates.split("; ") if candidates else ())
        answer = json.dumps(
            {"referent": referent, "standalone_question": rewrite}, ensure_ascii=False
        )
        blocks.append(f"{request}\nJSON: {answer}")
    return "\n\n".join(blocks)


SYSTEM_PROMPT = _system_prompt()


def build_messages(
    question: str, turns: Sequence[Turn], candidates: Sequence[str]
) -> list[BaseMessage]:
    """System message (fixed) then the request for this question."""
    return [
        SystemMessage(content=SYSTEM_PROMPT),
        HumanMessage(content=render_request(question, turns, candidates) + "\nJSON:"),
    ]
