"""A few GET routes on a port of their own, a stdlib HTTP server on a thread (`Listener`):
what `vcflow operator`'s health and metrics ports are, with no web stack loaded. A port is
open to all (`Guard()`), or guarded by a bearer token and TLS (`guard`: the loopback rule of
`exposure`, as `vcflow server` keeps it). Each port serves at most MAX_CONNECTIONS
connections at once, a thread each, and no connection lives longer than CONNECTION_SECONDS
(docs/security.md, "Connections and bounds").
"""

from __future__ import annotations

import contextlib
import logging
import socket
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from vcflow.serving import Refused, exposure, listening, tls
from vcflow.serving.exposure import BearerToken

#: seconds a connection may take to send its request (a TLS handshake included)
REQUEST_TIMEOUT = 10.0
#: seconds a connection lives at most, however slowly it sends or reads (one request per
#: connection: HTTP/1.0): kubelet's probes time out after 1 s, Prometheus's scrapes after 10
CONNECTION_SECONDS = 10.0
#: connections (threads) a port serves at once; past it a new one is closed unanswered:
#: probes and a scraper or two need a handful, a thread costs little
MAX_CONNECTIONS = 64
#: a route's answer: status code, body, content type
Answer = tuple[int, bytes, str]
TEXT = "text/plain; charset=utf-8"


@dataclass(frozen=True)
class Guard:
    """What a port asks of a client: a bearer token and TLS, or neither (loopback only)."""

    token: BearerToken | None = None
    tls: ssl.SSLContext | None = None


def guard(exposed: exposure.Exposure, flags: exposure.Flags) -> Guard:
    """The guard of a port; Refused (one line) unless its host is loopback or the token
    file and the TLS pair are all given and load (`Exposure.token`)."""
    token = exposed.token(flags)
    cert, key = exposed.tls_cert, exposed.tls_key
    context = tls.context(cert, key) if cert is not None and key is not None else None
    return Guard(BearerToken(token) if token is not None else None, context)


class _Server(ThreadingHTTPServer):
    """A thread per connection, at most MAX_CONNECTIONS at once, each shut down once it
    is CONNECTION_SECONDS old (the serving loop looks every half second)."""

    daemon_threads = True

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        log: logging.Logger,
    ) -> None:
        super().__init__(address, handler)
        self.log = log
        self._lock = threading.Lock()
        self._open: dict[socket.socket, float] = {}  # connection -> its end
        self.refused = 0

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._lock:
            full = len(self._open) >= MAX_CONNECTIONS
            if not full:
                self._open[request] = time.monotonic() + CONNECTION_SECONDS
        if full:
            self.refused += 1
            self.log.debug(
                "endpoint: %s refused, %d connections open", client_address, MAX_CONNECTIONS
            )
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._lock:
            self._open.pop(request, None)
        super().shutdown_request(request)

    def service_actions(self) -> None:
        now = time.monotonic()
        with self._lock:
            overdue = [conn for conn, end in self._open.items() if end <= now]
        for conn in overdue:  # (its thread's read or write ends, and the thread with it)
            with contextlib.suppress(OSError):
                socket.socket.shutdown(conn, socket.SHUT_RDWR)  # (not SSLSocket's: raw)

    @property
    def open(self) -> int:
        with self._lock:
            return len(self._open)

    def handle_error(self, request: object, client_address: object) -> None:
        # (a client that hangs up or fails the TLS handshake: no traceback on stderr)
        self.log.debug("endpoint: a request from %s failed", client_address, exc_info=True)


class Listener:
    """One port, set by `flag` of the `process` (`vcflow PROCESS`, naming its thread and its
    log): its routes behind its guard. `start()` serves, `close()` stops."""

    def __init__(
        self,
        flag: str,
        address: tuple[str, int],
        routes: Mapping[str, Callable[[], Answer]],
        guard: Guard | None = None,
        process: str = "serving",
    ) -> None:
        self.guard = guard or Guard()
        log = logging.getLogger(f"vcflow.{process}")
        try:
            self.server = _Server(address, _handler(routes, self.guard), log)
        except OSError as exc:
            where = f"{address[0]}:{address[1]}"
            raise Refused(f"{flag} {where}: {exc.strerror or exc}") from None
        if self.guard.tls is not None:  # (the handshake runs in the request's own thread)
            self.server.socket = self.guard.tls.wrap_socket(
                self.server.socket, server_side=True, do_handshake_on_connect=False
            )
        self.paths = ", ".join(routes)
        self.thread = threading.Thread(
            target=self.server.serve_forever, name=f"vcflow-{process}{flag[1:]}", daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        scheme = "https" if self.guard.tls is not None else "http"
        return listening.url(scheme, str(host), port)

    def start(self) -> None:
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _handler(
    routes: Mapping[str, Callable[[], Answer]], guard: Guard
) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        timeout = REQUEST_TIMEOUT

        def do_GET(self) -> None:
            if guard.token is not None:
                given = self.headers.get("Authorization", "").encode("latin-1", "replace")
                if not guard.token.admits(given):
                    self._send(401, b"Unauthorized", TEXT, {"WWW-Authenticate": "Bearer"})
                    return
            route = routes.get(self.path.split("?", 1)[0])
            if route is None:
                self._send(404, b"not found", TEXT)
                return
            self._send(*route())

        def _send(
            self, code: int, body: bytes, kind: str, headers: Mapping[str, str] | None = None
        ) -> None:
            self.send_response(code)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return  # (probes and scrapes every few seconds: no line each)

    return Handler
