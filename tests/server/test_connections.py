"""`vcflow server`'s bounds on client connections (issue 21, item 4), on a real server
whose file limit is 256 (soft and hard, set in the child before it starts): 1,000 idle
connections opened while a flow runs neither fail the flow nor outlive the header
deadline; a connection with half its headers sent, and one sending an endless chunked
body, are closed by their deadlines. The values are `telemetry.connections`'
(docs/security.md, "Connections and bounds")."""

from __future__ import annotations

import contextlib
import resource
import selectors
import socket
import ssl
import time
from urllib.parse import urlsplit

import httpx

from vcflow.telemetry import connections

from .conftest import FLOW, Server, Start, flow_phase, jobflow, template, wait_until

FILE_LIMIT = 256
IDLE = 1_000
#: seconds past a deadline a connection may take to be closed (a loaded 2-core host)
MARGIN = 20.0


def low_file_limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (FILE_LIMIT, FILE_LIMIT))


def address(server: Server) -> tuple[str, int]:
    parts = urlsplit(server.url)
    assert parts.hostname is not None and parts.port is not None
    return parts.hostname, parts.port


def connect(server: Server) -> socket.socket:
    """A connection to the server, TLS when it serves https."""
    host, port = address(server)
    sock = socket.create_connection((host, port), timeout=60)
    if server.url.startswith("https"):
        context = ssl.create_default_context(cafile=server.info["caFile"])
        return context.wrap_socket(sock, server_hostname=host)
    return sock


def closed_within(sock: socket.socket, seconds: float) -> float:
    """Seconds until the server closes `sock` (what it sends is read and dropped)."""
    started = time.monotonic()
    sock.settimeout(seconds)
    with contextlib.suppress(ConnectionResetError, ssl.SSLError):
        while sock.recv(65536):
            pass
    return time.monotonic() - started


def phase(server: Server, name: str) -> str:
    """The flow's phase, or "" while the server refuses (its cap is full)."""
    try:
        with server.client() as client:
            return flow_phase(client, name)
    except (httpx.HTTPError, ValueError):
        return ""


def test_a_thousand_idle_connections_neither_fail_a_flow_nor_stay_open(
    start_server: Start,
) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < IDLE + 200:  # (this process holds the other ends)
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, IDLE + 400), hard))
    server = start_server(preexec_fn=low_file_limit)
    steps = [template(f"s{n}", "sleep 0.5") for n in range(6)]
    with server.client() as client:
        for obj in [*steps, jobflow("busy", "s0", *(f"s{n}<s{n - 1}" for n in range(1, 6)))]:
            plural = {"JobFlow": "jobflows", "JobTemplate": "jobtemplates"}[str(obj["kind"])]
            created = client.post(f"{FLOW}/{plural}", json=obj)
            assert created.status_code == 201, created.text
    wait_until(lambda: phase(server, "busy") == "Running", "the flow to run")
    host, port = address(server)
    idle: list[socket.socket] = []
    selector = selectors.DefaultSelector()  # (epoll: descriptors past 1024)
    try:
        opened = time.monotonic()
        for _ in range(IDLE):
            sock = socket.create_connection((host, port), timeout=60)
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ)
            idle.append(sock)
        left = set(idle)
        end = opened + connections.HEADER_SECONDS + MARGIN
        while left and time.monotonic() < end:
            for key, _ in selector.select(timeout=0.5):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                try:
                    if sock.recv(65536):
                        continue  # (a 503 of the cap's margin: its end follows)
                except (BlockingIOError, InterruptedError):
                    continue
                except ConnectionResetError:
                    pass
                selector.unregister(sock)
                left.discard(sock)
        took = time.monotonic() - opened
        assert not left, f"{len(left)} idle connections still open after {took:.0f}s"
    finally:
        selector.close()
        for sock in idle:
            sock.close()
    wait_until(lambda: phase(server, "busy") in ("Succeed", "Failed"), "the flow to end", 120)
    assert phase(server, "busy") == "Succeed", server.output()[-3000:]


def test_half_sent_headers_are_closed_by_the_header_deadline(start_server: Start) -> None:
    server = start_server()
    with connect(server) as sock:
        sock.sendall(b"GET /api HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        took = closed_within(sock, connections.HEADER_SECONDS + MARGIN)
    assert took < connections.HEADER_SECONDS + MARGIN


def test_an_endless_chunked_body_is_cut_by_the_body_deadline(start_server: Start) -> None:
    server = start_server()
    headers = {"Authorization": f"Bearer {server.token}"} if server.token else {}
    head = (
        f"POST {FLOW}/jobflows HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"
        "\r\nTransfer-Encoding: chunked\r\n"
        + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        + "\r\n"
    )
    with connect(server) as sock:
        sock.sendall(head.encode() + b"1\r\n{\r\n")
        started = time.monotonic()
        cut = False
        while time.monotonic() - started < connections.BODY_SECONDS + MARGIN:
            try:
                sock.sendall(b"1\r\n \r\n")
            except OSError:
                cut = True
                break
            time.sleep(0.2)
        took = time.monotonic() - started
    assert cut, "the endless body was never cut"
    assert took < connections.BODY_SECONDS + MARGIN
