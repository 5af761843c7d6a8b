"""The request bodies of the app, checked by pydantic before anything runs.

Ids follow the store's rules (1-64 of ``A-Z a-z 0-9 _ - . : @``); a message is 1 to
:attr:`~memory_chains.web.WebConfig.max_message_chars` characters once stripped; unknown
fields are refused. :func:`chat_request_model` builds the chat body for a configured limit.

Example:
    >>> ForgetRequest(session="s-1").user is None
    True
    >>> ForgetRequest(session="../etc")
    Traceback (most recent call last):
    ...
    pydantic_core._pydantic_core.ValidationError: 1 validation error for ForgetRequest
    ...
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, create_model

from memory_chains.rag import MAX_QUESTION_CHARS

__all__ = [
    "ID_PATTERN",
    "ChatRequest",
    "ForgetRequest",
    "ForgetUserRequest",
    "chat_request_model",
]

ID_PATTERN = r"^[A-Za-z0-9_\-.:@]{1,64}$"
"""Session and user ids: the store's id rules."""

SafeId = Annotated[str, StringConstraints(pattern=ID_PATTERN)]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class ForgetRequest(_Body):
    """``POST /forget``: the session to forget (the user from the body or the header)."""

    session: SafeId = Field(description="the session id the page generated")
    user: SafeId | None = Field(default=None, description="the user id (or the X-User header)")


class ForgetUserRequest(_Body):
    """``POST /forget-user``: erase everything about the user; ``confirm`` must be true."""

    user: SafeId | None = Field(default=None, description="the user id (or the X-User header)")
    confirm: Literal[True] = Field(description="must be true: the erasure cannot be undone")


class ChatRequest(_Body):
    """``POST /chat``: one message of a session."""

    session: SafeId = Field(description="the session id the page generated")
    message: Annotated[str, StringConstraints(min_length=1, max_length=MAX_QUESTION_CHARS)]
    user: SafeId | None = Field(default=None, description="the user id (or the X-User header)")


def chat_request_model(max_chars: int) -> type[ChatRequest]:
    """:class:`ChatRequest` with messages of at most ``max_chars`` characters.

    Example:
        >>> Model = chat_request_model(10)
        >>> Model(session="s1", message=" Bonjour ").message
        'Bonjour'
    """
    message = Annotated[str, StringConstraints(min_length=1, max_length=max_chars)]
    model: type[ChatRequest] = create_model(
        "ChatRequest", __base__=ChatRequest, message=(message, ...)
    )
    return model
