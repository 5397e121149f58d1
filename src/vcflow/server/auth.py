"""Bearer-token authentication, an ASGI middleware: every request but the health checks
must carry `Authorization: Bearer TOKEN`, compared in constant time
(`serving.exposure`, which also reads the owner-only token file); others get
a 401 Status. Used by `app.create_app`.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from vcflow.server.status import ApiError
from vcflow.serving.exposure import BearerToken

OPEN_PATHS = frozenset({"/healthz", "/readyz", "/livez"})


class BearerAuth:
    """401 for a request without the token (health checks pass)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._token = BearerToken(token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        given = b""
        for key, value in scope.get("headers") or ():
            if key == b"authorization":
                given = value
                break
        if self._token.admits(given):
            await self.app(scope, receive, send)
            return
        response = ApiError(401, "Unauthorized").response({"WWW-Authenticate": "Bearer"})
        await response(scope, receive, send)
