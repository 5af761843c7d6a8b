"""The reference app's settings: :class:`WebConfig` (memory sizes, budget, queue, limits)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from memory_chains.errors import InvalidInputError
from memory_chains.rag import MAX_QUESTION_CHARS

__all__ = ["WebConfig"]

SummarizerChoice = Literal["code", "model"]


@dataclass(frozen=True)
class WebConfig:
    """How the app remembers and how much it accepts.

    Attributes:
        keep_last: exchanges of a session the prompt always gets verbatim (the window).
        summarize_after: unsummarised exchanges past which the older ones are folded into
            the running summary (``keep_last`` stay verbatim).
        summarizer: ``"code"`` folds without a model call (names, numbers and dates of the
            folded turns are kept as sentences); ``"model"`` asks the chat model for the
            summary, inside the request that passed the threshold (so behind the worker).
        context_tokens: the one token budget of every memory block in a prompt.
        documents: knowledge-base chunks retrieved per question.
        recall_turns: past turns of the user's other sessions recalled at most.
        max_waiting: requests that may queue behind the running answer; one more gets a
            503 with ``Retry-After``.
        max_message_chars: the longest message accepted (the library's question limit).

    Example:
        >>> WebConfig(keep_last=2).summarize_after
        8
    """

    keep_last: int = 4
    summarize_after: int = 8
    summarizer: SummarizerChoice = "code"
    context_tokens: int = 1500
    documents: int = 3
    recall_turns: int = 4
    max_waiting: int = 16
    max_message_chars: int = MAX_QUESTION_CHARS

    def __post_init__(self) -> None:
        for name in ("keep_last", "summarize_after", "context_tokens", "documents"):
            _positive(name, getattr(self, name), minimum=1)
        for name in ("recall_turns", "max_waiting"):
            _positive(name, getattr(self, name), minimum=0)
        _positive("max_message_chars", self.max_message_chars, minimum=1)
        if self.max_message_chars > MAX_QUESTION_CHARS:
            raise InvalidInputError(
                f"max_message_chars is at most the library's question limit "
                f"({MAX_QUESTION_CHARS}), got {self.max_message_chars}"
            )
        if self.keep_last >= self.summarize_after:
            raise InvalidInputError(
                f"keep_last ({self.keep_last}) must be below summarize_after "
                f"({self.summarize_after})"
            )
        if self.summarizer not in ("code", "model"):
            raise InvalidInputError(f"summarizer is 'code' or 'model', got {self.summarizer!r}")


def _positive(name: str, value: object, *, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InvalidInputError(f"{name} must be an integer >= {minimum}, got {value!r}")
