"""The operator's HTTP endpoints, each a stdlib HTTP server on a thread of its own, which
`process` opens and closes: the health port (`--health-addr`: `/healthz`, `/livez`,
`/readyz`, plain HTTP on any address, as kubelet probes on the pod IP need) and the metrics
port (`--metrics-addr`: `/metrics`, on loopback unless a bearer token and TLS guard it, the
rule of `telemetry.exposure` that `vcflow server` keeps too). Each port serves at most
MAX_CONNECTIONS connections at once, a thread each, and no connection lives longer than
CONNECTION_SECONDS (docs/security.md, "Connections and bounds").
"""

from __future__ import annotations

import contextlib
import logging
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.registry import Collector

from vcflow.api.errors import InputError
from vcflow.telemetry.controllers import ControllerMetrics
from vcflow.telemetry.exposure import BearerToken, is_loopback, read_token

log = logging.getLogger("vcflow.operator")
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
#: the address flags and their defaults
DEFAULTS = {"--health-addr": "127.0.0.1:8081", "--metrics-addr": "127.0.0.1:8080"}


class Health:
    """What /readyz and the leader gauge read; `process` sets it as it goes.

    Ready means this replica can do its part now: the leader once its controllers made
    their first full resync (every flow and template queued, the watch begun); a standby
    while the API server answered its last lease read within one lease duration (it can take
    over); without leader election, once the controllers resynced."""

    def __init__(self, lease: str) -> None:
        self.lease = lease
        self.leading = False
        self.synced = False
        self.standby_ok: Callable[[], bool] = lambda: False

    def ready(self) -> tuple[bool, str]:
        if self.leading:
            return (True, "leader, synced") if self.synced else (False, "leader, syncing")
        if self.synced:
            return True, "synced"
        if self.standby_ok():
            return True, "standby"
        return False, "not synced"

    def routes(self) -> dict[str, Callable[[], Answer]]:
        """The health port's: nothing but whether the process answers and is ready."""

        def alive() -> Answer:
            return 200, b"ok", TEXT

        def readyz() -> Answer:
            ok, why = self.ready()
            return 200 if ok else 503, why.encode(), TEXT

        return {"/healthz": alive, "/livez": alive, "/readyz": readyz}


class _Leader(Collector):
    def __init__(self, health: Health) -> None:
        self.health = health

    def collect(self) -> Iterable[Metric]:
        gauge = GaugeMetricFamily(
            "leader_election_master_status",
            "1 while this replica holds the lease, else 0 (client-go's).",
            labels=["name"],
        )
        gauge.add_metric([self.health.lease], 1 if self.health.leading else 0)
        yield gauge


class Metrics:
    """`/metrics` (Prometheus): the controllers' series of `telemetry.controllers`, as
    `vcflow server` shows them, and client-go's `leader_election_master_status`."""

    def __init__(self, health: Health) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.controllers = ControllerMetrics(self.registry)
        self.registry.register(_Leader(health))

    def routes(self) -> dict[str, Callable[[], Answer]]:
        return {"/metrics": lambda: (200, generate_latest(self.registry), CONTENT_TYPE_LATEST)}


def served(text: str) -> bool:
    """An address flag's value other than `0` (or empty): off."""
    return text not in ("", "0")


def parse_address(text: str, flag: str = "--metrics-addr") -> tuple[str, int]:
    """`HOST:PORT` (port 0: any free one); InputError naming the flag otherwise."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise InputError(f"{flag} {text!r}: expected HOST:PORT, e.g. {DEFAULTS[flag]}")
    return host.strip("[]") or "0.0.0.0", int(port)


@dataclass(frozen=True)
class Guard:
    """What a port asks of a client: a bearer token and TLS, or neither (loopback only)."""

    token: BearerToken | None = None
    tls: ssl.SSLContext | None = None


def metrics_guard(
    host: str, token_file: Path | None, tls_cert: Path | None, tls_key: Path | None
) -> Guard:
    """The metrics port's guard; InputError (one line) unless the host is loopback or the
    token file and the TLS pair are all given and load."""
    if (tls_cert is None) != (tls_key is None):
        raise InputError(
            "--metrics-tls-cert and --metrics-tls-key go together: give both or neither"
        )
    if not is_loopback(host) and (token_file is None or tls_cert is None):
        raise InputError(
            f"refusing to serve /metrics on {host}: a non-loopback --metrics-addr needs "
            "--metrics-token-file and --metrics-tls-cert/--metrics-tls-key "
            "(or listen on 127.0.0.1)"
        )
    token = BearerToken(read_token(token_file)) if token_file is not None else None
    tls = None
    if tls_cert is not None and tls_key is not None:
        try:
            tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            tls.minimum_version = ssl.TLSVersion.TLSv1_2
            tls.load_cert_chain(tls_cert, tls_key)
        except (OSError, ssl.SSLError) as exc:
            raise InputError(
                f"cannot load the TLS certificate {tls_cert} or key {tls_key}: {exc}"
            ) from None
    return Guard(token, tls)


class _Server(ThreadingHTTPServer):
    """A thread per connection, at most MAX_CONNECTIONS at once, each shut down once it
    is CONNECTION_SECONDS old (the serving loop looks every half second)."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(address, handler)
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
            log.debug("endpoint: %s refused, %d connections open", client_address, MAX_CONNECTIONS)
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
        log.debug("endpoint: a request from %s failed", client_address, exc_info=True)


class Listener:
    """One port: its routes behind its guard. `start()` serves, `close()` stops."""

    def __init__(
        self,
        flag: str,
        address: tuple[str, int],
        routes: Mapping[str, Callable[[], Answer]],
        guard: Guard | None = None,
    ) -> None:
        self.guard = guard or Guard()
        try:
            self.server = _Server(address, _handler(routes, self.guard))
        except OSError as exc:
            where = f"{address[0]}:{address[1]}"
            raise InputError(f"{flag} {where}: {exc.strerror or exc}") from None
        if self.guard.tls is not None:  # (the handshake runs in the request's own thread)
            self.server.socket = self.guard.tls.wrap_socket(
                self.server.socket, server_side=True, do_handshake_on_connect=False
            )
        self.paths = ", ".join(routes)
        self.thread = threading.Thread(
            target=self.server.serve_forever, name=f"vcflow-operator{flag[1:]}", daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        shown = f"[{host!s}]" if ":" in str(host) else str(host)
        scheme = "https" if self.guard.tls is not None else "http"
        return f"{scheme}://{shown}:{port}"

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
