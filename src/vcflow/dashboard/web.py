"""The HTTP rules every dashboard route keeps: its headers (the Content-Security-Policy and
friends, on every answer, refusals too), the cross-site guard of `vcflow server`
(`server.crosssite`) with the page itself open to a top-level navigation, bounded JSON
bodies (`Content-Type: application/json` or 415, 64 KiB or 413), DNS-1123 path names,
and errors as Kubernetes `Status` objects (`server.status.ApiError`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from vcflow.api import jsontext, names
from vcflow.api.errors import AlreadyExists, Conflict, InputError, NotFound, VcflowError
from vcflow.controller import userrequests
from vcflow.kubeapi import status as kubestatus
from vcflow.server.crosssite import CrossSiteGuard
from vcflow.server.status import ApiError

log = logging.getLogger("vcflow.dashboard")

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
]
#: the largest request body a dashboard route reads
MAX_BODY = 64 * 1024
JSON = "application/json"


class Headers:
    """Adds HEADERS to every answer (and `Cache-Control: no-cache` to the page and its
    files: a browser revalidates them by their ETag, so an upgrade shows at once)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = str(scope.get("path", ""))
        static = path == "/" or path.startswith("/ui/static/")

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                given = [(k, v) for k, v in message.get("headers", []) if k.lower() not in _OURS]
                more = [(b"cache-control", b"no-cache")] if static else []
                message = {**message, "headers": [*given, *HEADERS, *more]}
            await send(message)

        await self.app(scope, receive, sending)


_OURS = frozenset(name for name, _ in HEADERS)


class Guard(CrossSiteGuard):
    """`vcflow server`'s cross-site rules; a browser's top-level navigation to the page
    (`GET /`, `Sec-Fetch-Mode: navigate`: a link followed, a bookmark) keeps only the Host
    check — the page holds no data, and a link from elsewhere must open it."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and _navigation(scope):
            headers = {
                k: v
                for k, v in dict(scope.get("headers") or ()).items()
                if k not in (b"sec-fetch-site", b"origin")
            }
            why = self.refusal(headers, None)
            if why is not None:
                await ApiError(403, why).response()(scope, receive, send)
                return
            await self.app(scope, receive, send)
            return
        await super().__call__(scope, receive, send)


def _navigation(scope: Scope) -> bool:
    if scope.get("method") != "GET" or scope.get("path") != "/":
        return False
    return dict(scope.get("headers") or ()).get(b"sec-fetch-mode") == b"navigate"


async def json_body(request: Request) -> dict[str, Any]:
    """The request's JSON object body: 415 unless `application/json`, 413 past MAX_BODY,
    400 unless an object. An empty body is `{}`."""
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media != JSON:
        raise ApiError(415, f"the body must be {JSON} (Content-Type: {media or 'none'})")
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY):
        raise ApiError(413, f"the body is larger than {MAX_BODY} bytes")
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > MAX_BODY:
            raise ApiError(413, f"the body is larger than {MAX_BODY} bytes")
    if not data.strip():
        return {}
    try:
        found = jsontext.loads(data.decode("utf-8"))
    except (jsontext.Invalid, UnicodeDecodeError) as exc:
        raise ApiError(400, f"the body is not JSON: {exc}") from None
    if not isinstance(found, dict):
        raise ApiError(400, "the body must be a JSON object")
    return found


def namespace_of(text: str) -> str:
    """A namespace from a path or query: 400 unless DNS-1123."""
    problems = names.dns1123_label_errors(text)
    if problems:
        raise ApiError(400, f"invalid namespace {text[:100]!r}: {'; '.join(problems)}")
    return text


def name_of(text: str, what: str = "name") -> str:
    """An object's name from a path: 400 unless a DNS-1123 subdomain."""
    problems = names.dns1123_subdomain_errors(text)
    if problems:
        raise ApiError(400, f"invalid {what} {text[:100]!r}: {'; '.join(problems)}")
    return text


def number(text: str | None, key: str, default: int, *, most: int | None = None) -> int:
    """A non-negative integer query parameter (`default` when absent); 400 otherwise."""
    if text is None or text == "":
        return default
    if not text.isdigit() or len(text) > 12:
        raise ApiError(400, f"{key}: {text[:20]!r} is not a non-negative integer")
    found = int(text)
    if most is not None and found > most:
        raise ApiError(400, f"{key}: {found} is more than {most}")
    return found


Endpoint = Callable[[Request], Awaitable[Response]]


def answering(endpoint: Endpoint) -> Endpoint:
    """`endpoint` with every error answered as a Status: ApiError as it is, a flow action
    refused 409, NotFound 404, bad input 400, a store's error as `exc_code` says, anything
    else 500 (logged)."""

    async def answer(request: Request) -> Response:
        try:
            return await endpoint(request)
        except ApiError as exc:
            return exc.response()
        except userrequests.Refused as exc:
            return ApiError(409, str(exc)).response()
        except NotFound as exc:
            return ApiError(404, _plain(exc)).response()
        except InputError as exc:
            return ApiError(400, str(exc)).response()
        except VcflowError as exc:
            return ApiError(exc_code(exc), str(exc)).response()
        except Exception:
            log.exception("internal error serving %s %s", request.method, request.url.path)
            return ApiError(500, "internal error; see the server's log").response()

    return answer


def exc_code(exc: VcflowError) -> int:
    """The code of a store's error: 409 for a write another got to first; over a cluster,
    403 where the user's credentials may not (RBAC), 502 where the cluster refused them
    (not the browser's login: the dashboard's own credentials)."""
    if isinstance(exc, AlreadyExists | Conflict):
        return 409
    if isinstance(exc, kubestatus.Forbidden):
        return 403
    if isinstance(exc, kubestatus.Unauthorized):
        return 502
    return 500


def _plain(exc: NotFound) -> str:
    """A NotFound's message without kubectl's `Error from server (NotFound): `."""
    return str(exc).removeprefix("Error from server (NotFound): ")
