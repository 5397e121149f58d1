"""Bearer-token authentication, an ASGI middleware: every request but the health checks
must carry `Authorization: Bearer TOKEN`, compared in constant time (`hmac.compare_digest`);
others get a 401 Status. The token file must be the user's own and owner-only, as ssh wants
its keys. Used by `app.create_app` and the `vcflow server` command.
"""

from __future__ import annotations

import hmac
import os
import stat
from pathlib import Path

from starlette.types import ASGIApp, Receive, Scope, Send

from vcflow.api.errors import InputError
from vcflow.server.status import ApiError

OPEN_PATHS = frozenset({"/healthz", "/readyz", "/livez"})


class BadTokenFile(InputError):
    """A token file that is unreadable, empty, or others can read."""


def read_token(path: Path) -> str:
    """The token in `path` (its first line, stripped); BadTokenFile if the file is not the
    user's own, owner-only regular file, or holds no token."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        raise BadTokenFile(f"cannot read token file {path}: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise BadTokenFile(f"token file {path} is not a regular file")
        if st.st_uid != os.geteuid():
            raise BadTokenFile(f"token file {path} is not yours (uid {st.st_uid} owns it)")
        mode = stat.S_IMODE(st.st_mode)
        if mode & 0o077:
            raise BadTokenFile(
                f"permissions {mode:04o} for token file {path} are too open: it must be "
                f"readable by you only (chmod 600 {path})"
            )
        text = os.read(fd, 65536).decode("utf-8", "replace")
    finally:
        os.close(fd)
    token = text.strip().splitlines()[0].strip() if text.strip() else ""
    if not token or any(c.isspace() or not c.isprintable() for c in token):
        raise BadTokenFile(f"token file {path} holds no token (one line of printable text)")
    return token


class BearerAuth:
    """401 for a request without the token (health checks pass)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        given = b""
        for key, value in scope.get("headers") or ():
            if key == b"authorization":
                given = value
                break
        if hmac.compare_digest(given, self._expected):
            await self.app(scope, receive, send)
            return
        response = ApiError(401, "Unauthorized").response({"WWW-Authenticate": "Bearer"})
        await response(scope, receive, send)
