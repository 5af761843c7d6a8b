"""How much of the injected memory an answer used: :func:`content_words`, :func:`memory_usage`.

The measure is lexical and deliberately simple, so that it is cheap, deterministic and
explainable. For one turn, with the memory context ``C`` injected into the prompt, the
user's question ``Q`` and the assistant's answer ``A``:

* ``offered = words(C) - words(Q)``: the content words the memory brought that the
  question did not already contain (a memory repeating the question adds nothing);
* ``used = offered ∩ words(A)``: those the answer contains.

``words`` are *content words*: folded (lower case, no accents), at least three characters
or containing a digit, not in a short French/English stop list (articles, pronouns,
auxiliaries, the ``Human``/``AI`` labels of rendered histories), and cut to their first
five letters: a crude stemming under which « débute » and « débutants », « Pilates » and
« pilater » are one word (numbers are kept whole).

Example:
    >>> memory_usage("Human: Je cherche un Dell XPS 15", "Et sa garantie ?",
    ...              "La garantie du Dell XPS 15 est de 2 ans.")
    (3, 4)
"""

from __future__ import annotations

import re

from memory_chains._folding import fold
from memory_chains._terms import STOP_WORDS

__all__ = ["content_words", "memory_usage"]

_WORD = re.compile(r"[^\W_]+", re.UNICODE)

# Folded words carrying no topic: the function words, and the labels of rendered histories.
_STOP = STOP_WORDS | {
    "human",
    "assistant",
    "utilisateur",
    "user",
    "summary",
    "resume",
    "earlier",
    "conversation",
}
_STEM = 5  # letters kept of a word (prefix stemming)


def content_words(text: str) -> frozenset[str]:
    """The folded content words of ``text`` (see the module docstring for the rules).

    Example:
        >>> sorted(content_words("Le Dell XPS 15 a 32 Go de RAM !"))
        ['15', '32', 'dell', 'ram', 'xps']
        >>> content_words("débutants") == content_words("Je débute")
        True
    """
    words = _WORD.findall(fold(text))
    return frozenset(
        w if any(c.isdigit() for c in w) else w[:_STEM]
        for w in words
        if w not in _STOP and (len(w) >= 3 or any(c.isdigit() for c in w))
    )


def memory_usage(context: str, question: str, answer: str) -> tuple[int, int]:
    """``(used, offered)`` content words of one turn's injected memory ``context``.

    ``offered`` counts the context's content words absent from the ``question``; ``used``
    counts those that also appear in the ``answer``. ``(0, 0)`` for an empty context.

    Example:
        >>> memory_usage("Human: Pilates le mardi à 18 h", "Et le samedi ?", "Pas de cours.")
        (0, 3)
    """
    offered = content_words(context) - content_words(question)
    used = offered & content_words(answer)
    return len(used), len(offered)
