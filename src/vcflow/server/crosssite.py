"""Requests a web page made, refused before anything else looks at them: an ASGI middleware
of `vcflow server` that answers 403 when

- `Host` names neither a loopback address nor a name of the serving certificate (a page on
  a DNS-rebound name that resolves to 127.0.0.1 sends its own name; `kubectl proxy
  --accept-hosts` keeps the same rule);
- `Origin` is present and is not the server's own (scheme, an accepted host, its port);
- `Sec-Fetch-Site` is `cross-site` or `same-site` (a browser's word that another origin
  made the request; `same-origin` and `none` pass, so a page the server serves itself
  works).

Clients that are not browsers send neither `Origin` nor `Sec-Fetch-Site`. Nothing is kept
of a refused request. The write's content type, the other half of the rule (a form or
`fetch` in `no-cors` mode can send only `text/plain` and form types), is checked by
`requests.body`. Used by `app.create_app`.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from vcflow.server.status import ApiError
from vcflow.serving.exposure import is_loopback

PASSING_FETCH_SITES = frozenset({b"same-origin", b"none"})


class CrossSiteGuard:
    """403 for a request whose Host, Origin or Sec-Fetch-Site says a web page sent it."""

    def __init__(self, app: ASGIApp, *, hosts: Iterable[str], scheme: str) -> None:
        self.app = app
        self.hosts = frozenset(host.lower() for host in hosts)
        self.scheme = scheme

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        why = self.refusal(dict(scope.get("headers") or ()), _port_of(scope))
        if why is None:
            await self.app(scope, receive, send)
            return
        await ApiError(403, why).response()(scope, receive, send)

    def accepts_host(self, host: str) -> bool:
        name = host.lower()
        return name in self.hosts or is_loopback(name)

    def refusal(self, headers: dict[bytes, bytes], port: int | None) -> str | None:
        """Why the request is refused, or None."""
        host_header = headers.get(b"host")
        if host_header is not None:
            host, _ = _split_host(host_header.decode("latin-1"))
            if host is None or not self.accepts_host(host):
                return (
                    f"host {host_header.decode('latin-1')[:100]!r} is not accepted: use a "
                    "loopback address or a name of the server's certificate"
                )
        site = headers.get(b"sec-fetch-site")
        if site is not None and site.lower() not in PASSING_FETCH_SITES:
            return f"cross-site request refused (Sec-Fetch-Site: {site.decode('latin-1')[:20]})"
        origin = headers.get(b"origin")
        if origin is not None and not self._own_origin(origin.decode("latin-1"), port):
            return f"cross-origin request refused (Origin: {origin.decode('latin-1')[:100]})"
        return None

    def _own_origin(self, origin: str, port: int | None) -> bool:
        try:
            parts = urlsplit(origin)
            given_port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
        except ValueError:
            return False
        host = parts.hostname
        return (
            parts.scheme == self.scheme
            and host is not None
            and self.accepts_host(host)
            and (port is None or given_port == port)
        )


def from_browser(headers: Mapping[str, str]) -> bool:
    """Whether a request carries what only browsers send: `Origin` or a `Sec-Fetch-*`
    header (every browser sends `Origin` on a cross-origin POST)."""
    return any(key.lower() == "origin" or key.lower().startswith("sec-fetch-") for key in headers)


def _port_of(scope: Scope) -> int | None:
    server = scope.get("server")
    return int(server[1]) if server and server[1] is not None else None


def _split_host(value: str) -> tuple[str | None, str]:
    """(host, port) of a Host header: `name`, `name:port`, `[v6]`, `[v6]:port`; host None
    when the header is malformed."""
    value = value.strip()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None, ""
        host, rest = value[1:end], value[end + 1 :]
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            return None, ""
        return host, rest.removeprefix(":")
    host, _, port = value.partition(":")
    if ":" in port:
        return None, ""
    return host, port
