"""Asking the model only *which* candidate a follow-up refers to.

The model reads a fixed instruction block with few-shot examples (identical between calls,
so llama.cpp reuses its KV cache), then the candidates, a compact history and the question,
and answers ``{"referent": "<one of the candidates or none>"}``: the JSON schema's ``enum``
lets it write nothing else, so the answer costs a handful of output tokens and can never
invent a name. The standalone question is then written without the model
(:mod:`memory_chains.rewrite._template`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from memory_chains.errors import MalformedOutputError
from memory_chains.evaluation.metrics import fold
from memory_chains.rewrite._history import Turn

__all__ = ["NONE", "build_choice_messages", "choice_format", "parse_choice"]

NONE = "none"
"""The choice meaning "the question names no candidate" (a topic change or a thing that is
not in the list)."""

_ANSWER_WORDS = 20
_USER_WORDS = 30

# (candidates, turns, question, referent): none of these sentences is in an evaluation set.
_EXAMPLES: tuple[tuple[tuple[str, ...], tuple[Turn, ...], str, str], ...] = (
    (
        ("Google Pixel 8", "Samsung Galaxy S23"),
        (
            ("user", "J'hésite entre le Samsung Galaxy S23 et le Google Pixel 8."),
            ("assistant", "Le Galaxy S23 est plus compact, le Pixel 8 photographie mieux."),
        ),
        "Quelle est l'autonomie du premier ?",
        "Samsung Galaxy S23",
    ),
    (
        ("Marc", "Belvédère", "Annecy"),
        (
            ("user", "Parlez-moi de l'hôtel Belvédère à Annecy."),
            ("assistant", "C'est un quatre étoiles au bord du lac."),
            ("user", "Qui s'occupe des réservations ?"),
            ("assistant", "Marc, à la réception."),
        ),
        "Il accepte les chiens ?",
        "Belvédère",
    ),
    (
        ("Colissimo", "Bosch Serie 6"),
        (
            ("user", "Je regarde le lave-linge Bosch Serie 6."),
            ("assistant", "Il est silencieux et économe."),
            ("user", "Vous livrez comment ?"),
            ("assistant", "Par Colissimo, en trois jours."),
        ),
        "Quelle est sa garantie ?",
        "Bosch Serie 6",
    ),
    (
        ("Lisbonne", "TAP"),
        (
            ("user", "Je pars à Lisbonne en mai avec TAP."),
            ("assistant", "Bon choix, il fait environ 22 degrés à cette période."),
        ),
        "Comment se déplacer là-bas ?",
        "Lisbonne",
    ),
    (
        ("Quechua MH100",),
        (
            ("user", "Quel est le poids de la tente Quechua MH100 ?"),
            ("assistant", "Elle pèse 2,5 kg."),
        ),
        "Quels sont vos délais de livraison en Suisse ?",
        NONE,
    ),
    (
        ("Nikon Z6 II", "Sony A7 IV"),
        (
            ("user", "Compare the Sony A7 IV and the Nikon Z6 II."),
            ("assistant", "The Sony focuses faster; the Nikon is cheaper."),
        ),
        "Does the second one have two card slots?",
        "Nikon Z6 II",
    ),
)

_INSTRUCTIONS = """\
The user asks a follow-up question in a conversation. Tell which candidate the question \
refers to through a pronoun (il, elle, sa, son, ses, celui, it, its, they…), an ordinal \
(le premier, le second, the first…), "là-bas"/"there" or an ellipsis ("Et …", \
"What about …"). The referent may be several exchanges back, behind other names: choose \
the candidate the question is about (a product, a place, a class), not a person or a \
carrier merely mentioned, unless the question is about a person. Answer "none" when the \
question changes topic or refers to none of the candidates. Reply with JSON only: \
{"referent": "<candidate>"}.
"""


def _clip(text: str, words: int) -> str:
    parts = text.split()
    return text if len(parts) <= words else " ".join(parts[:words]) + " …"


def render_choice_request(question: str, turns: Sequence[Turn], candidates: Sequence[str]) -> str:
    """The variable part of the prompt: candidates, compact history, question.

    Example:
        >>> print(render_choice_request("Et son prix ?", [("user", "Le Dell XPS 15 ?")],
        ...                             ["Dell XPS 15"]))
        Candidates: Dell XPS 15 | none
        User: Le Dell XPS 15 ?
        Question: Et son prix ?
    """
    lines = [f"Candidates: {' | '.join([*candidates, NONE])}"]
    for role, text in turns:
        if role == "user":
            lines.append(f"User: {_clip(text, _USER_WORDS)}")
        else:
            lines.append(f"Assistant: {_clip(text, _ANSWER_WORDS)}")
    lines.append(f"Question: {question.strip()}")
    return "\n".join(lines)


def _system_prompt() -> str:
    blocks = [_INSTRUCTIONS, "Examples:"]
    for candidates, turns, question, referent in _EXAMPLES:
        answer = json.dumps({"referent": referent}, ensure_ascii=False)
        blocks.append(f"{render_choice_request(question, turns, candidates)}\nJSON: {answer}")
    return "\n\n".join(blocks)


CHOICE_SYSTEM_PROMPT = _system_prompt()


def build_choice_messages(
    question: str, turns: Sequence[Turn], candidates: Sequence[str]
) -> list[BaseMessage]:
    """System message (fixed) then the request for this question.

    Example:
        >>> msgs = build_choice_messages("Et son prix ?", [("user", "Le Dell XPS 15 ?")],
        ...                              ["Dell XPS 15"])
        >>> msgs[0].content == CHOICE_SYSTEM_PROMPT, msgs[1].content.endswith("JSON:")
        (True, True)
    """
    return [
        SystemMessage(content=CHOICE_SYSTEM_PROMPT),
        HumanMessage(content=render_choice_request(question, turns, candidates) + "\nJSON:"),
    ]


def choice_format(candidates: Sequence[str]) -> dict[str, Any]:
    """The ``response_format`` that restricts the answer to the candidates or "none".

    Example:
        >>> choice_format(["A"])["json_schema"]["schema"]["properties"]["referent"]["enum"]
        ['A', 'none']
    """
    schema = {
        "type": "object",
        "properties": {"referent": {"type": "string", "enum": [*candidates, NONE]}},
        "required": ["referent"],
        "additionalProperties": False,
    }
    return {"type": "json_schema", "json_schema": {"name": "referent", "schema": schema}}


def parse_choice(raw: str, candidates: Sequence[str]) -> str:
    """The chosen candidate ("" for "none") from the model's raw answer.

    A bare name or a JSON object whose ``referent`` matches a candidate (accents and case
    ignored) is accepted.

    Raises:
        MalformedOutputError: the answer names none of the candidates.

    Example:
        >>> parse_choice('{"referent": "dell xps 15"}', ["Dell XPS 15"])
        'Dell XPS 15'
        >>> parse_choice('{"referent": "none"}', ["Dell XPS 15"])
        ''
    """
    text = raw.strip()
    value: Any = text
    start = text.find("{")
    if start >= 0:
        try:
            value, _ = json.JSONDecoder().raw_decode(text, start)
        except json.JSONDecodeError:
            value = text
    if isinstance(value, dict):
        value = value.get("referent", "")
    if not isinstance(value, str):
        raise MalformedOutputError("the model's choice is not a string", raw=raw)
    chosen = fold(value.strip().strip("\"'"))
    if chosen == NONE:
        return ""
    for candidate in candidates:
        if fold(candidate) == chosen:
            return candidate
    raise MalformedOutputError(
        f"the model chose {value!r}, which is not one of the candidates", raw=raw
    )
