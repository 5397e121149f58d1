"""The controller's prober against real sockets (docs/flow-features.md §2): an HTTP GET
succeeds on 200–399 with the probe's header sent, fails on 4xx/5xx or no answer; a TCP
connect succeeds when something listens."""

from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Iterator

import pytest

from vcflow.controller.prober import SocketProber
from vcflow.reconcile.probes import HTTP, TCP, Check


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/ready" and self.headers.get("X-Probe") == "yes":
            self.send_response(200)
        elif self.path == "/moved":
            self.send_response(302)
            self.send_header("Location", "/ready")
        else:
            self.send_response(503)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture
def server() -> Iterator[int]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(httpd.server_address[1])
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_http_get_succeeds_on_2xx_and_3xx_with_the_header(server: int) -> None:
    prober = SocketProber()
    ok, note = prober.check(
        Check(HTTP, server, task="web", path="/ready", header=("X-Probe", "yes"))
    )
    assert ok and note == f"httpGet web:{server}/ready: HTTP 200"
    assert prober.check(Check(HTTP, server, path="/moved"))[0]  # a redirect is not followed
    assert prober.check(Check(HTTP, server, path="/ready")) == (
        False,
        f"httpGet :{server}/ready: HTTP 503",
    )


def test_tcp_connect_succeeds_only_when_something_listens(server: int) -> None:
    prober = SocketProber()
    assert prober.check(Check(TCP, server)) == (True, f"tcpSocket :{server}: connected")
    port = closed_port()
    assert prober.check(Check(TCP, port, task="db")) == (
        False,
        f"tcpSocket db:{port}: connection refused",
    )
    assert not prober.check(Check(HTTP, port))[0]


class Hosts:
    """A resolver naming fixed addresses, noting the checks it was asked about."""

    def __init__(self, *hosts: str) -> None:
        self.found = list(hosts)
        self.asked: list[Check] = []

    def hosts(self, check: Check) -> list[str]:
        self.asked.append(check)
        return self.found


def test_with_a_resolver_every_host_it_names_is_checked(server: int) -> None:
    hosts = Hosts("127.0.0.1", "127.0.0.1")
    prober = SocketProber(hosts=hosts)
    check = Check(TCP, server, task="web", namespace="team", job="f-a")
    assert prober.check(check) == (True, f"tcpSocket web:{server}: connected")
    assert hosts.asked == [check]
    with socket.socket() as elsewhere:
        elsewhere.bind(("127.0.0.2", 0))
        elsewhere.listen()
        port = int(elsewhere.getsockname()[1])
        assert not SocketProber().check(Check(TCP, port))[0]  # (127.0.0.1: nothing there)
        assert SocketProber(hosts=Hosts("127.0.0.2")).check(Check(TCP, port))[0]
        assert not SocketProber(hosts=Hosts("127.0.0.2", "127.0.0.3")).check(Check(TCP, port))[0]


def test_with_a_resolver_that_names_no_host_the_check_waits() -> None:
    ok, note = SocketProber(hosts=Hosts()).check(Check(TCP, 80, task="db"))
    assert (ok, note) == (False, "tcpSocket db:80: no pod with an IP yet")
