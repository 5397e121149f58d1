"""The operator's HTTP endpoints on `--metrics-addr`: `/metrics` (Prometheus: the
controllers' series of `telemetry.controllers`, as `vcflow server` shows them, and
client-go's `leader_election_master_status`), `/healthz` (the process answers) and
`/readyz` (`Health.ready`). A stdlib HTTP server on a thread of its own; `process` owns it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.registry import Collector

from vcflow.api.errors import InputError
from vcflow.telemetry.controllers import ControllerMetrics


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


def parse_address(text: str) -> tuple[str, int]:
    """`HOST:PORT` (port 0: any free one); InputError naming the flag otherwise."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise InputError(f"--metrics-addr {text!r}: expected HOST:PORT, e.g. 127.0.0.1:8080")
    return host.strip("[]") or "0.0.0.0", int(port)


class Endpoints:
    """The HTTP server; `start()` listens, `close()` stops it."""

    def __init__(self, address: tuple[str, int], health: Health) -> None:
        self.health = health
        self.registry = CollectorRegistry(auto_describe=True)
        self.controllers = ControllerMetrics(self.registry)
        self.registry.register(_Leader(health))
        try:
            self.server = ThreadingHTTPServer(address, self._handler())
        except OSError as exc:
            where = f"{address[0]}:{address[1]}"
            raise InputError(f"--metrics-addr {where}: {exc.strerror or exc}") from None
        self.server.daemon_threads = True
        self.thread = threading.Thread(
            target=self.server.serve_forever, name="vcflow-operator-http", daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> None:
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        endpoints = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                if path == "/metrics":
                    self._send(200, generate_latest(endpoints.registry), CONTENT_TYPE_LATEST)
                elif path in ("/healthz", "/livez"):
                    self._send(200, b"ok")
                elif path == "/readyz":
                    ok, why = endpoints.health.ready()
                    self._send(200 if ok else 503, why.encode())
                else:
                    self._send(404, b"not found")

            def _send(self, code: int, body: bytes, kind: str = "text/plain") -> None:
                self.send_response(code)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                return  # (scrapes every few seconds: no line each)

        return Handler
