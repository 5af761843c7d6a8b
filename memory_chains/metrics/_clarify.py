"""Spotting an assistant that asks back instead of answering: :func:`is_clarification_request`.

A message is a clarification request when it contains one of the French or English phrases
assistants use to ask the user to say more ("Pouvez-vous préciser … ?", "De quel modèle
parlez-vous ?", "Could you clarify …?", "Which one do you mean?"). Matching is done on the
folded text (lower case, no accents), so "Precisez" and "Précisez" are the same. Phrases
that are questions only in context ("which one", "de quel …") count only when the message
has a question mark; explicit requests ("merci de préciser", "please clarify") count
without one.

Example:
    >>> is_clarification_request("Pouvez-vous préciser le modèle ?")
    True
    >>> is_clarification_request("Le cours de Pilates a lieu le mardi.")
    False
"""

from __future__ import annotations

import re

from memory_chains._folding import fold

__all__ = ["is_clarification_request"]

# Explicit requests for more information: enough on their own.
_EXPLICIT = re.compile(
    r"\b("
    # French
    r"(pouvez|pourriez|peux|pourrais)[- ](vous|tu)\s+(me\s+)?(preciser|clarifier|reformuler|"
    r"expliciter|detailler|m'en dire plus|en dire plus|indiquer)"
    r"|merci de (preciser|clarifier|reformuler)"
    r"|(veuillez|pourriez-vous) (preciser|clarifier|reformuler)"
    r"|precisez|reformulez"
    r"|je ne (suis pas sur|suis pas certain|comprends pas|vois pas) (de comprendre|ce que|"
    r"bien|votre question|a quoi)"
    r"|qu'entendez[- ]vous"
    r"|que (voulez|veux)[- ](vous|tu) dire"
    r"|pas (bien )?compris (votre|ta) question"
    # English
    r"|(could|can|would) you (please )?(clarify|specify|rephrase|elaborate|be more specific|"
    r"tell me more|say more)"
    r"|please (clarify|specify|rephrase|elaborate|be more specific)"
    r"|i'?m not sure (what|which|i understand)"
    r"|i (do not|don't) (understand|follow) (your|the) question"
    r"|what do you mean"
    r")\b"
)

# Questions back to the user: count only in a message that asks something ("?").
_ASKING = re.compile(
    r"\b("
    # French
    r"(de|a) (quel|quelle|quels|quelles|qui|quoi) .{0,40}(parlez|parles|pensez|penses|"
    r"referez|faites reference)"
    r"|(voulez|veux)[- ](vous|tu) dire"
    r"|(vous|tu) (parlez|parles|voulez dire|veux dire) (de|du|des|d')"
    r"|lequel|laquelle|lesquels|lesquelles"
    r"|que (voulez|souhaitez|aimeriez)[- ]vous savoir"
    r"|qu'(aimeriez|voudriez|souhaitez)[- ]vous savoir"
    r"|quel(le)? (modele|produit|cours|jour|commande|article) "
    r"(voulez|souhaitez|visez|avez)[- ]vous"
    # English
    r"|which (one|model|product|order|day|class)( do| did| are| would)? you"
    r"|do you mean|are you (asking|referring|talking) about"
    r"|what (would|do) you (like|want) to know"
    r")"
)


def is_clarification_request(text: str) -> bool:
    """Whether an assistant message asks the user to clarify instead of answering.

    Args:
        text: one assistant message.

    Returns:
        ``True`` when the message contains an explicit request for more information, or a
        question back to the user ("De quel produit parlez-vous ?") and a question mark.

    Example:
        >>> is_clarification_request("Que voulez-vous savoir sur les produits électroniques ?")
        True
        >>> is_clarification_request("Which one do you mean?")
        True
        >>> is_clarification_request("Lequel est le moins cher : le Dell.")
        False
    """
    folded = fold(text).replace("’", "'")
    if _EXPLICIT.search(folded):
        return True
    return "?" in folded and _ASKING.search(folded) is not None
