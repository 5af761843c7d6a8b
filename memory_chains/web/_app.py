"""The HTTP face of :class:`~memory_chains.web.ChatService`: :func:`create_app` (FastAPI).

==========================  ===============================================================
route                       what
==========================  ===============================================================
``GET /``                   the chat page (``static/index.html``; its script and style under
                            ``/static``; nothing from a CDN)
``POST /chat``              ``{"session", "message", "user"?}`` → server-sent events:
                            ``start``, ``token`` …, then ``final`` or ``error``
``POST /forget``            ``{"session", "user"?}``: forget one conversation
``POST /forget-user``       ``{"user"?, "confirm": true}``: erase everything about the user
``GET /memory``             ``?session=…&user=…``: what each memory holds, with tokens
``GET /export``             ``?user=…``: the user's data as one JSON document
``GET /healthz``            liveness, store availability, model queue
==========================  ===============================================================

The user id comes from the body (``user``), else the ``X-User`` header, else the ``user``
query parameter, else ``"guest"``. It is **not** authentication: an app that serves real
users puts :func:`create_app` behind its own login and passes ``user_of=`` a function that
reads the authenticated user from the request, ignoring what the client sent.

Errors are JSON ``{"error", "message"}``: 422 for bad input (ids, message length, a body
that is not JSON, unknown fields), 503 with ``Retry-After`` when the model's queue is full or
the store is down for an erasure or an export.

Example:
    >>> from fastapi.testclient import TestClient
    >>> from langchain_core.retrievers import BaseRetriever
    >>> from memory_chains.stores import InMemoryStore
    >>> from memory_chains.testing import HashEmbeddings, ScriptedChatModel
    >>> class NoDocs(BaseRetriever):
    ...     def _get_relevant_documents(self, query, *, run_manager): return []
    >>> service = ChatService(NoDocs(), llm=ScriptedChatModel(), store=InMemoryStore(),
    ...                       embeddings=HashEmbeddings())
    >>> client = TestClient(create_app(service))
    >>> client.post("/forget", json={"session": "../x"}).status_code
    422
    >>> client.get("/healthz").json()["ok"]
    True
"""

# No "from __future__ import annotations": FastAPI reads the routes' annotations at run
# time, and some name objects local to create_app (the chat body, the ticket dependency).

from collections.abc import AsyncIterator, Callable
from importlib.resources import files
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.sse import EventSourceResponse, ServerSentEvent
from fastapi.staticfiles import StaticFiles

from memory_chains.errors import (
    InvalidInputError,
    MemoryChainsError,
    ServiceBusyError,
    StoreUnavailableError,
)
from memory_chains.web._schemas import (
    ID_PATTERN,
    ForgetRequest,
    ForgetUserRequest,
    chat_request_model,
)
from memory_chains.web._service import ChatService
from memory_chains.web._worker import Ticket

__all__ = ["DEFAULT_USER", "create_app", "static_dir"]

DEFAULT_USER = "guest"
"""The user of a request that names none."""

UserOf = Callable[[Request, str | None], str]

_STORE_RETRY_AFTER = 5  # seconds, after a store outage


def static_dir() -> str:
    """The folder of the page, its script and its style (package data)."""
    return str(files("memory_chains.web") / "static")


def _claimed_user(request: Request, claimed: str | None) -> str:
    """The user the client names: the body's, the ``X-User`` header's, the query's."""
    return (
        claimed or request.headers.get("x-user") or request.query_params.get("user") or DEFAULT_USER
    )


def _message(errors: list[Any]) -> str:
    parts = []
    for error in errors:
        loc = [str(p) for p in error.get("loc", ()) if p not in ("body", "query", "header")]
        where = ".".join(loc) or "body"
        kind = error.get("type", "")
        if where == "body" and kind in ("model_attributes_type", "dict_type", "json_invalid"):
            parts.append("send the body as a JSON object (Content-Type: application/json)")
        elif kind == "string_pattern_mismatch":
            parts.append(f"{where}: use 1-64 characters among A-Z a-z 0-9 _ - . : @")
        elif kind == "string_too_long":
            limit = error.get("ctx", {}).get("max_length")
            parts.append(f"{where}: at most {limit} characters")
        elif kind == "extra_forbidden":
            parts.append(f"{where}: unknown field")
        else:
            parts.append(f"{where}: {error.get('msg', 'invalid')}")
    return "; ".join(parts)


def _error(status: int, kind: str, message: str, retry_after: int | None = None) -> JSONResponse:
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
    return JSONResponse({"error": kind, "message": message}, status_code=status, headers=headers)


def _install_errors(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(422, "invalid_input", _message(list(exc.errors())))

    @app.exception_handler(InvalidInputError)
    async def refused(request: Request, exc: InvalidInputError) -> JSONResponse:
        return _error(422, "invalid_input", str(exc))

    @app.exception_handler(ServiceBusyError)
    async def busy(request: Request, exc: ServiceBusyError) -> JSONResponse:
        return _error(503, "busy", str(exc), exc.retry_after)

    @app.exception_handler(StoreUnavailableError)
    async def store_down(request: Request, exc: StoreUnavailableError) -> JSONResponse:
        message = f"the memory store is unavailable, nothing was done: {exc}"
        return _error(503, "store_unavailable", message, _STORE_RETRY_AFTER)

    @app.exception_handler(MemoryChainsError)
    async def failed(request: Request, exc: MemoryChainsError) -> JSONResponse:
        return _error(500, type(exc).__name__, str(exc))


def create_app(service: ChatService, *, user_of: UserOf | None = None) -> FastAPI:
    """The FastAPI app serving ``service`` and the chat page.

    Args:
        service: the :class:`~memory_chains.web.ChatService` answering.
        user_of: ``(request, claimed_user) -> user id``; the default trusts the client
            (body, ``X-User`` header, ``user`` query, else ``"guest"``): replace it with
            your authentication.
    """
    resolve = user_of or _claimed_user
    app = FastAPI(title="memory_chains chat", docs_url=None, redoc_url=None)
    app.state.service = service
    _install_errors(app)
    app.mount("/static", StaticFiles(directory=static_dir()), name="static")
    ChatBody: Any = chat_request_model(service.config.max_message_chars)

    def user_id(request: Request, claimed: str | None) -> str:
        from memory_chains.stores import validate_id

        return validate_id(resolve(request, claimed), "user")

    async def ticket() -> AsyncIterator[Ticket]:
        admitted = service.admit()  # ServiceBusyError -> 503 before any byte is streamed
        try:
            yield admitted
        finally:
            admitted.release()

    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(f"{static_dir()}/index.html", media_type="text/html")

    @app.post("/chat", response_class=EventSourceResponse)
    async def chat(
        body: ChatBody,
        request: Request,
        place: Annotated[Ticket, Depends(ticket)],
    ) -> AsyncIterator[ServerSentEvent]:
        user = user_id(request, body.user)
        async for kind, data in service.chat(place, user, body.session, body.message):
            yield ServerSentEvent(event=kind, data=data)

    @app.post("/forget")
    async def forget(body: ForgetRequest, request: Request) -> dict[str, Any]:
        user = user_id(request, body.user)
        return {"ok": True, "forgotten": await service.forget(user, body.session)}

    @app.post("/forget-user")
    async def forget_user(body: ForgetUserRequest, request: Request) -> dict[str, Any]:
        user = user_id(request, body.user)
        return {"ok": True, "forgotten": await service.forget_user(user)}

    @app.get("/memory")
    async def memory(
        request: Request,
        session: Annotated[str, Query(pattern=ID_PATTERN)],
        user: Annotated[str | None, Query(pattern=ID_PATTERN)] = None,
    ) -> dict[str, Any]:
        return await service.memory_view(user_id(request, user), session)

    @app.get("/export")
    async def export(
        request: Request, user: Annotated[str | None, Query(pattern=ID_PATTERN)] = None
    ) -> JSONResponse:
        who = user_id(request, user)
        data = await service.export(who)
        disposition = f'attachment; filename="memory-{who}.json"'
        return JSONResponse(data, headers={"Content-Disposition": disposition})

    @app.get("/healthz")
    async def healthz() -> dict[str, Any]:
        return service.health()

    return app
