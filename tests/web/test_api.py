"""The app's HTTP API through httpx (ASGI transport): real FastAPI app, real SQLite store,
real knowledge base, scripted model."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from memory_chains.errors import StoreUnavailableWarning
from memory_chains.testing import ScriptedChatModel
from memory_chains.web import create_app
from tests.web._helpers import (
    PILATES,
    PILATES_ANSWER,
    SATURDAY,
    SATURDAY_ANSWER,
    MakeService,
    chat,
    final,
    kb_answer,
)

IBAN = "FR7630006000011234567890189"


async def memory(http: httpx.AsyncClient, session: str, user: str = "guest") -> dict[str, Any]:
    reply = await http.get("/memory", params={"session": session, "user": user})
    assert reply.status_code == 200, reply.text
    return dict(reply.json())


def block(view: dict[str, Any], name: str) -> dict[str, Any]:
    return next(b for b in view["blocks"] if b["name"] == name)


async def test_events_stream_start_then_tokens_then_the_final_answer(
    client: httpx.AsyncClient,
) -> None:
    events = await chat(client, "s1", PILATES)
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "start" and kinds[-1] == "final"
    assert set(kinds[1:-1]) == {"token"} and len(kinds) > 3  # several tokens
    done = final(events)
    assert "".join(data["text"] for kind, data in events if kind == "token") == PILATES_ANSWER
    assert done["answer"] == PILATES_ANSWER
    assert "salle_de_sport/pilates.md" in [s["source"] for s in done["sources"]]
    assert done["memory"]["stored"] and not done["memory"]["stateless"]


async def test_the_follow_up_is_rewritten_from_memory_and_answered(
    client: httpx.AsyncClient,
) -> None:
    await chat(client, "s1", PILATES)
    done = final(await chat(client, "s1", SATURDAY))
    assert done["was_rewritten"]
    assert "Pilates" in done["rewritten"] and "samedi" in done["rewritten"]
    assert done["answer"] == SATURDAY_ANSWER
    assert done["memory"]["tokens"]["recent"] > 0  # the first exchange reached the prompt
    assert done["memory"]["work_ms"]["total"] > 0


async def test_sessions_do_not_share_memory(client: httpx.AsyncClient) -> None:
    await chat(client, "s1", PILATES)
    done = final(await chat(client, "s2", SATURDAY))
    assert not done["was_rewritten"]
    assert (await memory(client, "s2"))["turns"] == 1


async def test_the_exchange_is_memorised_only_after_a_successful_answer(
    make_service: MakeService,
) -> None:
    failing = ScriptedChatModel(replies=[TimeoutError("model down")], default=kb_answer)
    service = make_service(llm=failing)
    transport = httpx.ASGITransport(app=create_app(service))
    async with httpx.AsyncClient(transport=transport, base_url="http://app") as http:
        events = await chat(http, "s1", PILATES)
        assert events[-1][0] == "error"
        assert "nothing was added to memory" in events[-1][1]["message"]
        assert (await memory(http, "s1"))["turns"] == 0
        done = final(await chat(http, "s1", PILATES))  # the model is back
        assert done["memory"]["stored"] and done["answer"] == PILATES_ANSWER
        assert (await memory(http, "s1"))["turns"] == 1


async def test_pii_is_masked_before_storage(client: httpx.AsyncClient) -> None:
    await chat(client, "s1", f"Mon IBAN est {IBAN}, pouvez-vous le noter ?")
    exported = json.dumps((await client.get("/export", params={"user": "guest"})).json())
    assert IBAN not in exported
    assert "[IBAN]" in exported
    view = await memory(client, "s1")
    assert IBAN not in json.dumps(view)


async def test_the_inspector_shows_every_memory_with_token_counts(
    client: httpx.AsyncClient,
) -> None:
    await chat(client, "s1", "Je m'appelle Claire et mon vélo est rouge.")
    await chat(client, "s1", PILATES)
    await chat(client, "s2", "Parle-moi du cours de Pilates.")
    view = await memory(client, "s2")
    names = [b["name"] for b in view["blocks"]]
    assert names == ["profile", "facts", "entities", "summary", "recent", "recalled"]
    assert view["turns"] == 1 and view["question"] == "Parle-moi du cours de Pilates."
    recent = block(view, "recent")
    assert recent["status"] == "kept" and recent["tokens"] > 0
    recalled = block(view, "recalled")  # the other session's Pilates turns
    assert recalled["tokens"] > 0 and any("s1:" in item for item in recalled["items"])
    assert all("s2:" not in item for item in recalled["items"])  # its own turns: in recent
    assert view["profile"] >= 1 and block(view, "profile")["tokens"] > 0
    assert view["total_tokens"] == pytest.approx(sum(b["tokens"] for b in view["blocks"]), abs=20)


async def test_the_summary_takes_over_past_the_window(make_service: MakeService) -> None:
    service = make_service(keep_last=2, summarize_after=3)
    transport = httpx.ASGITransport(app=create_app(service))
    async with httpx.AsyncClient(transport=transport, base_url="http://app") as http:
        for n in range(5):
            await chat(http, "s1", f"Ma commande A-{5580 + n} est-elle partie ?")
        view = await memory(http, "s1")
    assert view["turns"] == 5 and view["summarised_turns"] >= 2
    summary = " ".join(block(view, "summary")["items"])
    assert "A-5580" in summary  # numbers of folded turns are kept, without a model
    assert len(block(view, "recent")["items"]) <= 3


async def test_forget_erases_the_session_and_its_recalled_turns_only(
    client: httpx.AsyncClient,
) -> None:
    await chat(client, "s1", "Mon vélo est rouge.")
    await chat(client, "s2", PILATES)
    reply = await client.post("/forget", json={"session": "s1"})
    assert reply.status_code == 200
    assert reply.json()["forgotten"] == {"sessions": 1, "turns": 1, "recalled_turns": 2}
    assert (await memory(client, "s1"))["turns"] == 0
    assert (await memory(client, "s2"))["turns"] == 1
    exported = json.dumps((await client.get("/export")).json())
    assert "vélo" not in exported and "Pilates" in exported
    # a forgotten session id stays refused (a tab still open on it cannot bring it back);
    # the page goes on under a new id
    refused = await chat(client, "s1", "Et mon vélo ?")
    assert refused[-1][0] == "error" and refused[-1][1]["kind"] == "ForgottenError"
    assert (await memory(client, "s1"))["turns"] == 0
    assert final(await chat(client, "s3", "Et mon vélo ?"))["memory"]["stored"]


async def test_forget_user_needs_confirmation_then_erases_everything(
    client: httpx.AsyncClient,
) -> None:
    await chat(client, "s1", PILATES, user="claire")
    refused = await client.post("/forget-user", json={"user": "claire"})
    assert refused.status_code == 422 and "confirm" in refused.json()["message"]
    refused = await client.post("/forget-user", json={"user": "claire", "confirm": False})
    assert refused.status_code == 422
    reply = await client.post("/forget-user", json={"user": "claire", "confirm": True})
    assert reply.status_code == 200 and reply.json()["forgotten"]["sessions"] == 1
    exported = (await client.get("/export", params={"user": "claire"})).json()
    assert exported["sessions"] == [] and exported["documents"] == []
    # still at the page: chatting again is a new start
    assert final(await chat(client, "s2", PILATES, user="claire"))["memory"]["stored"]


async def test_export_is_the_users_data_as_an_attachment(client: httpx.AsyncClient) -> None:
    await chat(client, "s1", PILATES, user="claire")
    await chat(client, "s9", PILATES, user="bob")
    reply = await client.get("/export", headers={"X-User": "claire"})
    assert reply.status_code == 200
    assert reply.headers["content-disposition"] == 'attachment; filename="memory-claire.json"'
    data = reply.json()
    assert data["format"] == "memory_chains.export/1" and data["user_id"] == "claire"
    assert [s["session_id"] for s in data["sessions"]] == ["s1"]
    assert data["sessions"][0]["turns"][0]["human"] == PILATES


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"session": "", "message": "Bonjour"}, "session: use 1-64 characters"),
        ({"session": "a" * 65, "message": "Bonjour"}, "session: use 1-64 characters"),
        ({"session": "../etc", "message": "Bonjour"}, "session: use 1-64 characters"),
        ({"session": "s1", "message": "   "}, "message"),
        ({"session": "s1", "message": "x" * 201}, "message: at most 200 characters"),
        ({"session": "s1", "message": "Bonjour", "user": "a b"}, "user: use 1-64"),
        ({"session": "s1", "message": "Bonjour", "admin": True}, "admin: unknown field"),
        ({"session": "s1"}, "message: Field required"),
    ],
)
async def test_bad_chat_input_is_a_readable_422(
    make_service: MakeService, body: dict[str, Any], expected: str
) -> None:
    service = make_service(max_message_chars=200)
    transport = httpx.ASGITransport(app=create_app(service))
    async with httpx.AsyncClient(transport=transport, base_url="http://app") as http:
        reply = await http.post("/chat", json=body)
        assert reply.status_code == 422
        assert reply.json()["error"] == "invalid_input"
        assert expected in reply.json()["message"]
        assert service.worker.waiting == 0 and not service.worker.running  # place given back
        assert (await memory(http, "s1"))["turns"] == 0


async def test_a_body_that_is_not_json_is_refused(client: httpx.AsyncClient) -> None:
    form = await client.post("/chat", data={"session": "s1", "message": "Bonjour"})
    assert form.status_code == 422 and "JSON" in form.json()["message"]
    broken = await client.post(
        "/forget", content=b'{"session": ', headers={"content-type": "application/json"}
    )
    assert broken.status_code == 422 and "JSON" in broken.json()["message"]


async def test_bad_query_and_header_ids_are_refused(client: httpx.AsyncClient) -> None:
    assert (await client.get("/memory", params={"session": "a/b"})).status_code == 422
    assert (await client.get("/memory")).status_code == 422
    reply = await client.get("/export", headers={"X-User": "x" * 65})
    assert reply.status_code == 422 and "user" in reply.json()["message"]


async def test_a_full_queue_is_a_503_with_retry_after(make_service: MakeService) -> None:
    service = make_service(max_waiting=0)
    transport = httpx.ASGITransport(app=create_app(service))
    async with httpx.AsyncClient(transport=transport, base_url="http://app") as http:
        running = service.admit()  # another answer holds the model
        reply = await http.post("/chat", json={"session": "s1", "message": PILATES})
        assert reply.status_code == 503
        assert int(reply.headers["retry-after"]) >= 1
        assert reply.json()["error"] == "busy"
        running.release()
        assert final(await chat(http, "s1", PILATES))["memory"]["stored"]
        health = (await http.get("/healthz")).json()
        assert health["queue"]["refused"] == 1 and not health["queue"]["running"]


async def test_with_the_store_down_the_app_answers_statelessly_and_says_so(
    make_service: MakeService, unused_tcp_port: int
) -> None:
    with pytest.warns(StoreUnavailableWarning):  # once, when the store is opened
        service = make_service(store_url=f"redis://127.0.0.1:{unused_tcp_port}/0")
    transport = httpx.ASGITransport(app=create_app(service))
    async with httpx.AsyncClient(transport=transport, base_url="http://app") as http:
        done = final(await chat(http, "s1", PILATES))
        assert done["answer"] == PILATES_ANSWER
        assert done["memory"]["stateless"] and not done["memory"]["stored"]
        assert "unavailable" in done["memory"]["note"]
        assert not (await http.get("/healthz")).json()["store"]["available"]
        for reply in (
            await http.post("/forget", json={"session": "s1"}),
            await http.get("/export"),
        ):
            assert reply.status_code == 503 and reply.headers["retry-after"] == "5"
            assert reply.json()["error"] == "store_unavailable"


async def test_the_page_and_its_assets_are_served_by_the_app(client: httpx.AsyncClient) -> None:
    page = await client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    for asset in ("/static/app.js", "/static/app.css"):
        reply = await client.get(asset)
        assert reply.status_code == 200, asset
    assert "http" not in page.text.replace("http-equiv", "")  # nothing from elsewhere
