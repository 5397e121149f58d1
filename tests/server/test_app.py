"""`create_app`'s extension points, in process (httpx's ASGI transport, a MemoryStore):
extra routes behind the token, middleware that sees the verb, views of get/list bodies and
of watch events — what discovery, OpenAPI, metrics and Table responses plug into."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

import httpx
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from vcflow.kubeapi.resources import APIResource
from vcflow.server.app import create_app
from vcflow.store import MemoryStore

from .conftest import FLOW, template

SEEN: list[tuple[str, int]] = []


class Verbs:
    """Middleware that records (verb, status) of each request, as a metrics layer would."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        codes: list[int] = []

        async def sending(message: Any) -> None:
            if message["type"] == "http.response.start":
                codes.append(message["status"])
            await send(message)

        await self.app(scope, receive, sending)
        SEEN.append((str(scope.get("state", {}).get("verb", "")), codes[0]))


async def version(request: Request) -> Response:
    return PlainTextResponse("v")


def names_view(request: Request, resource: APIResource, body: dict[str, Any]) -> Response | None:
    if "as=Names" not in request.headers.get("accept", ""):
        return None
    items = body.get("items", [body])
    return JSONResponse([i["metadata"]["name"] for i in items])


def test_extensions_are_served_as_given() -> None:
    stopping = threading.Event()
    app = create_app(
        MemoryStore(),
        token="t",
        extra_routes=[Route("/version", version)],
        middleware=[Middleware(Verbs)],
        views=[names_view],
        watch_views=[lambda request, resource: lambda obj: {"name": obj["metadata"]["name"]}],
        stopping=stopping,
    )

    async def drive() -> None:
        transport = httpx.ASGITransport(app=app)
        auth = {"Authorization": "Bearer t"}
        async with httpx.AsyncClient(transport=transport, base_url="http://x") as client:
            assert (await client.get("/version")).status_code == 401
            assert (await client.get("/version", headers=auth)).text == "v"
            made = await client.post(
                f"{FLOW}/jobtemplates", json=template("a", "true"), headers=auth
            )
            assert made.status_code == 201
            as_names = {**auth, "Accept": "application/json;as=Names"}
            assert (await client.get(f"{FLOW}/jobtemplates", headers=as_names)).json() == ["a"]
            assert (await client.get(f"{FLOW}/jobtemplates/a", headers=as_names)).json() == ["a"]
            plain = await client.get(f"{FLOW}/jobtemplates", headers=auth)
            assert plain.json()["kind"] == "JobTemplateList"
            stopping.set()  # (the watch sends the current objects, then ends with the server)
            watched = await client.get(f"{FLOW}/jobtemplates?watch=true", headers=auth)
            events = [json.loads(line) for line in watched.text.splitlines()]
            assert events == [{"type": "ADDED", "object": {"name": "a"}}]

    SEEN.clear()
    asyncio.run(drive())
    assert SEEN == [
        ("", 401),
        ("", 200),
        ("create", 201),
        ("list", 200),
        ("get", 200),
        ("list", 200),
        ("watch", 200),
    ]


def test_a_slow_view_does_not_hold_up_other_requests() -> None:
    """A big list's Table takes long to make: other requests are answered meanwhile."""
    entered, released = threading.Event(), threading.Event()
    waited: list[bool] = []

    def slow_view(request: Request, resource: APIResource, body: dict[str, Any]) -> Response:
        entered.set()
        waited.append(released.wait(5.0))  # (True: /healthz was answered meanwhile)
        return JSONResponse(body)

    app = create_app(MemoryStore(), views=[slow_view])

    async def drive() -> None:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://x") as client:
            listing = asyncio.ensure_future(client.get(f"{FLOW}/jobtemplates"))
            end = time.monotonic() + 10.0
            while not entered.is_set() and time.monotonic() < end:
                await asyncio.sleep(0.01)  # (the view runs now, or holds the event loop)
            assert (await client.get("/healthz")).text == "ok"
            released.set()
            assert (await listing).status_code == 200

    asyncio.run(drive())
    assert waited == [True]
