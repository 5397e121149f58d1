"""Who may use the dashboard's data and actions: the server's bearer token, sent as
`Authorization: Bearer` (scripts, tests) or held by the browser as a session cookie that
`POST /ui/login` sets once the token is given.

The cookie is stateless: its value is HMAC-SHA256 of a fixed message under the token, so
the server keeps nothing, a cookie is worth exactly as long as the token is, and a changed
token logs every browser out. It is `HttpOnly` (no script reads it), `SameSite=Strict` (no
other site's request carries it) and `Secure` over HTTPS. It authenticates the dashboard's
`/ui/api/*` and `/ui/logout` only, never the Kubernetes API paths: those are not routed
here (`mount`). Compared in constant time, as the token is (`serving.exposure`).
"""

from __future__ import annotations

import hashlib
import hmac

from starlette.requests import Request
from starlette.responses import Response

from vcflow.serving.exposure import BearerToken

COOKIE = "vcflow-dashboard"
MESSAGE = b"vcflow dashboard session"


def cookie_value(token: str) -> str:
    """The session cookie's value for `token` (hex)."""
    return hmac.new(token.encode(), MESSAGE, hashlib.sha256).hexdigest()


class Gate:
    """The token check of one dashboard; `token` None: no token asked (a server started
    with `--insecure-no-auth`), everyone is let in."""

    def __init__(self, token: str | None) -> None:
        self.token = token
        self._bearer = BearerToken(token) if token is not None else None
        self._cookie = cookie_value(token).encode() if token is not None else b""

    def admits(self, request: Request) -> bool:
        """The request carries the token or the session cookie."""
        if self._bearer is None:
            return True
        header = request.headers.get("authorization")
        if header is not None and self._bearer.admits(header.encode("latin-1")):
            return True
        given = request.cookies.get(COOKIE)
        return given is not None and hmac.compare_digest(given.encode("latin-1"), self._cookie)

    def is_token(self, given: str) -> bool:
        if self.token is None:
            return True
        return hmac.compare_digest(given.encode(), self.token.encode())

    def log_in(self, response: Response, *, secure: bool) -> None:
        if self.token is None:
            return
        response.set_cookie(
            COOKIE,
            cookie_value(self.token),
            httponly=True,
            samesite="strict",
            path="/",
            secure=secure,
        )

    @staticmethod
    def log_out(response: Response, *, secure: bool) -> None:
        response.delete_cookie(COOKIE, path="/", secure=secure, httponly=True, samesite="strict")
