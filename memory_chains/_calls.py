"""Model calls as a generator of pure steps, driven once for sync and once for async.

Every component that asks a model something (the rewriter, the entity extractor, the
summariser, the long-term extractors) writes its logic as a generator: it yields a
:class:`Call`, is sent the model's reply (or the exception the call raised), decides, and
returns its result. :func:`run` and :func:`arun` drive such a generator with
``model.invoke`` and ``model.ainvoke``: they are the only code that differs between the
sync and async paths. :func:`attempts` is the common retry (judge each answer, give up
after the last); :func:`chat_messages` and :func:`call_options` build what a call sends;
:func:`content` reads a reply's text.

Example:
    >>> from memory_chains.testing import ScriptedChatModel
    >>> call = Call(chat_messages([("system", "Answer a number.")], "1 + 1?"), {})
    >>> def judge(raw: str, calls: int) -> int | None:
    ...     return int(raw) if raw.isdigit() else None
    >>> def give_up(raw: str) -> Exception:
    ...     return ValueError(raw)
    >>> model = ScriptedChatModel(replies=["two", "2"])
    >>> run(attempts(call, judge, retries=1, what="sum", give_up=give_up), model)
    2
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from memory_chains.errors import MemoryChainsError, ModelCallError

__all__ = [
    "Call",
    "Unavailable",
    "arun",
    "attempts",
    "call_options",
    "chat_messages",
    "content",
    "run",
]

T = TypeVar("T")


@dataclass(frozen=True)
class Call:
    """What one model call sends: ``model.invoke(messages, **options)``.

    Example:
        >>> Call([], {"max_tokens": 64}).options
        {'max_tokens': 64}
    """

    messages: list[Any]
    options: dict[str, Any]


class Unavailable:
    """A model that could not be built: every call raises the reason, so the steps see a
    failed call (and fall back, or report it) instead of the caller seeing an exception.

    Example:
        >>> steps = attempts(Call([], {}), lambda raw, n: raw, retries=0, what="x",
        ...                  give_up=ValueError)
        >>> try:
        ...     run(steps, Unavailable(OSError("no model file")))
        ... except Exception as exc:
        ...     print(type(exc).__name__, exc.__cause__)
        ModelCallError no model file
    """

    def __init__(self, reason: Exception) -> None:
        self.reason = reason

    def invoke(self, *args: Any, **kwargs: Any) -> Any:
        raise self.reason

    async def ainvoke(self, *args: Any, **kwargs: Any) -> Any:
        raise self.reason


def chat_messages(prefix: Sequence[tuple[str, str]], last: str) -> list[Any]:
    """The fixed ``(role, content)`` prefix as chat messages, then ``last`` from the user."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    kinds = {"system": SystemMessage, "user": HumanMessage, "assistant": AIMessage}
    messages: list[Any] = [kinds[role](content=content) for role, content in prefix]
    messages.append(HumanMessage(content=last))
    return messages


def call_options(max_tokens: int, response_format: Mapping[str, Any] | None) -> dict[str, Any]:
    """``max_tokens``, and the JSON schema as ``response_format`` unless it is ``None``."""
    options: dict[str, Any] = {"max_tokens": max_tokens}
    if response_format is not None:
        options["response_format"] = dict(response_format)
    return options


def attempts(
    call: Call,
    judge: Callable[[str, int], T | None],
    *,
    retries: int,
    what: str,
    give_up: Callable[[str], Exception],
) -> Generator[Call, Any, T]:
    """Make ``call`` until ``judge(raw, calls)`` accepts an answer, ``retries + 1`` at most.

    A failed call raises :class:`~memory_chains.errors.ModelCallError` (naming ``what``)
    at once, or the library's own error when the model raised one; after the last unusable
    answer, ``give_up(raw)`` is raised.
    """
    raw = ""
    for attempt in range(retries + 1):
        reply = yield call
        if isinstance(reply, MemoryChainsError):  # already ours and typed: as it is
            raise reply
        if isinstance(reply, Exception):  # any provider error: mapped, memory untouched
            raise ModelCallError(f"the {what} call failed: {reply!r}") from reply
        raw = content(reply)
        result = judge(raw, attempt + 1)
        if result is not None:
            return result
    raise give_up(raw)


def run(steps: Generator[Call, Any, T], model: Any) -> T:
    """Drive ``steps`` with ``model.invoke``."""
    reply: Any = None  # the first send starts the generator
    while True:
        try:
            call = steps.send(reply)
        except StopIteration as done:
            result: T = done.value
            return result
        try:
            reply = model.invoke(call.messages, **call.options)
        except Exception as exc:  # judged by the steps
            reply = exc


async def arun(steps: Generator[Call, Any, T], model: Any) -> T:
    """Drive ``steps`` with ``model.ainvoke`` (the only line that differs from :func:`run`)."""
    reply: Any = None
    while True:
        try:
            call = steps.send(reply)
        except StopIteration as done:
            result: T = done.value
            return result
        try:
            reply = await model.ainvoke(call.messages, **call.options)
        except Exception as exc:
            reply = exc


def content(message: Any) -> str:
    """The text of a chat model's reply (a string, or content blocks joined)."""
    text = getattr(message, "content", message)
    if isinstance(text, list):  # content blocks
        return "".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in text)
    return str(text)
