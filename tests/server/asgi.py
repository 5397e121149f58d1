"""A synchronous client for an ASGI app in-process (httpx's ASGITransport): Starlette's
TestClient warns that its httpx use is deprecated, and warnings are errors here."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from starlette.types import ASGIApp


class Client:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    def request(self, method: str, path: str, **options: Any) -> httpx.Response:
        async def send() -> httpx.Response:
            transport = httpx.ASGITransport(app=self.app)
            async with httpx.AsyncClient(transport=transport, base_url="http://vcflow") as c:
                return await c.request(method, path, **options)

        return asyncio.run(send())

    def get(self, path: str, **options: Any) -> httpx.Response:
        return self.request("GET", path, **options)
