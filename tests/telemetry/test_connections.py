"""`telemetry.connections` against a real uvicorn server on 127.0.0.1 (a thread of the
test process, short deadlines): idle, half-sent, trickled and endless connections are
closed by their deadlines, a response that streams longer than every deadline is not cut,
connections past the cap get a Kubernetes Status 503 (past the margin, nothing) and hold
nothing, a TLS connection that never starts its handshake is closed too; and the body
budget's waits."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trustme
import uvicorn

from vcflow.telemetry import connections
from vcflow.telemetry.connections import BodyBudget, BudgetExhausted, Guard, Limits

#: the deadlines here; waits allow MARGIN more (a loaded 2-core machine)
SHORT = 1.0
MARGIN = 8.0
STREAMED = 6  # chunks of /stream, 0.5 s apart: 3 s, three times every deadline


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["path"] == "/stream":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        for n in range(STREAMED):
            await send({"type": "http.response.body", "body": b"%d\n" % n, "more_body": True})
            await asyncio.sleep(0.5)
        await send({"type": "http.response.body", "body": b"end\n"})
        return
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        size += len(message.get("body", b""))
        if not message.get("more_body"):
            break
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"read %d" % size})


class Running:
    def __init__(self, port: int, guard: Guard, tls: ssl.SSLContext | None) -> None:
        self.port = port
        self.guard = guard
        self.tls = tls

    def connect(self) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=MARGIN + 2 * SHORT)
        if self.tls is not None:
            return self.tls.wrap_socket(sock, server_hostname="127.0.0.1")
        return sock

    def raw(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=MARGIN + 2 * SHORT)


@contextlib.contextmanager
def serving(
    limits: Limits, tls: tuple[Path, Path, ssl.SSLContext] | None = None
) -> Iterator[Running]:
    guard = Guard(limits, fd_limit=4096)
    plain = socket.socket()
    plain.bind(("127.0.0.1", 0))
    plain.listen(128)
    listener = guard.listener(plain)
    files: dict[str, Any] = {}
    if tls is not None:
        files = {"ssl_certfile": str(tls[0]), "ssl_keyfile": str(tls[1])}
    config = uvicorn.Config(
        app, lifespan="off", log_level="warning", access_log=False,
        timeout_graceful_shutdown=1, **files, **guard.uvicorn_options(),
    )  # fmt: skip
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    try:
        end = time.monotonic() + 30
        while not server.started:
            assert thread.is_alive() and time.monotonic() < end, "uvicorn did not start"
            time.sleep(0.02)
        yield Running(listener.getsockname()[1], guard, tls[2] if tls else None)
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        listener.close()


def closed_within(sock: socket.socket, seconds: float) -> tuple[float, bytes]:
    """Read until the server closes `sock`: the seconds it took and what came."""
    started = time.monotonic()
    got = b""
    sock.settimeout(seconds)
    with contextlib.suppress(ConnectionResetError, ssl.SSLError):
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            got += chunk
    return time.monotonic() - started, got


def request(running: Running, path: str = "/", body: bytes = b"") -> bytes:
    with running.connect() as sock:
        head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n"
        sock.sendall(head.encode() + b"Connection: close\r\n\r\n" + body)
        return closed_within(sock, MARGIN)[1]


def test_a_connection_that_sends_nothing_is_closed_by_the_header_deadline() -> None:
    with serving(Limits(header_seconds=SHORT)) as running, running.raw() as sock:
        took, got = closed_within(sock, SHORT + MARGIN)
        assert got == b""
        assert SHORT * 0.8 <= took < SHORT + MARGIN
        assert running.guard.timed_out == 1


def test_half_sent_headers_are_closed_by_the_header_deadline() -> None:
    with serving(Limits(header_seconds=SHORT)) as running, running.raw() as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        took, got = closed_within(sock, SHORT + MARGIN)
        assert got == b"" and took < SHORT + MARGIN


def test_an_idle_keep_alive_connection_is_closed() -> None:
    with serving(Limits(header_seconds=30, keep_alive_seconds=1)) as running:
        with running.raw() as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            took, got = closed_within(sock, 1 + MARGIN)
        assert got.startswith(b"HTTP/1.1 200") and b"read 0" in got
        assert took < 1 + MARGIN


def test_a_trickled_body_is_answered_408_and_closed_by_the_body_deadline() -> None:
    with serving(Limits(body_seconds=SHORT)) as running, running.raw() as sock:
        sock.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
        started = time.monotonic()
        got = b""
        with contextlib.suppress(OSError):
            while time.monotonic() - started < SHORT + MARGIN:
                sock.sendall(b"x" * 10)
                time.sleep(0.1)
                sock.settimeout(0.001)
                with contextlib.suppress(TimeoutError):
                    chunk = sock.recv(65536)
                    got += chunk
                    if not chunk:
                        break
        rest = closed_within(sock, MARGIN)[1] if got and not got.endswith(b"}") else b""
        answer = got + rest
        assert answer.startswith(b"HTTP/1.1 408"), answer
        status = json.loads(answer.split(b"\r\n\r\n", 1)[1])
        assert status["code"] == 408 and status["kind"] == "Status"
        assert time.monotonic() - started < SHORT + MARGIN


def test_an_endless_chunked_body_is_cut_by_the_body_deadline() -> None:
    with serving(Limits(body_seconds=SHORT)) as running, running.raw() as sock:
        sock.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        started = time.monotonic()
        with contextlib.suppress(OSError):
            while time.monotonic() - started < SHORT + MARGIN:
                sock.sendall(b"400\r\n" + b"y" * 0x400 + b"\r\n")
                time.sleep(0.01)
        took = time.monotonic() - started
        assert took < SHORT + MARGIN, "the endless body was never cut"
        assert running.guard.timed_out == 1


def test_a_response_streaming_past_every_deadline_is_not_cut() -> None:
    limits = Limits(header_seconds=0.5, body_seconds=0.5, keep_alive_seconds=1)
    with serving(limits) as running, running.raw() as sock:
        sock.sendall(b"GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
        _, got = closed_within(sock, 3 + MARGIN)
        for n in range(STREAMED):
            assert b"\r\n%d\n\r\n" % n in got
        assert b"end\n" in got


def test_past_the_cap_a_503_status_then_nothing_past_the_margin() -> None:
    with serving(Limits(header_seconds=60, max_connections=8)) as running:
        assert running.guard.margin == 1
        held = [running.raw() for _ in range(8)]
        try:
            deadline = time.monotonic() + MARGIN
            while running.guard.open < 8 and time.monotonic() < deadline:
                time.sleep(0.02)
            with running.raw() as refused:
                refused.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                took, got = closed_within(refused, MARGIN)
            head, _, body = got.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 503"), got
            assert json.loads(body) == {
                "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "too many open connections (cap 8)",
                "reason": "ServiceUnavailable", "code": 503,
            }  # fmt: skip
            assert took < MARGIN
            lingering = running.raw()  # (the margin's one: held by its 503 a moment)
            with running.raw() as dropped:
                assert closed_within(dropped, MARGIN)[1] == b""
            lingering.close()
        finally:
            for sock in held:
                sock.close()
        deadline = time.monotonic() + MARGIN
        while running.guard.open and time.monotonic() < deadline:
            time.sleep(0.02)
        assert running.guard.open == 0
        assert b"read 3" in request(running, body=b"abc")


def test_a_tls_connection_that_never_shakes_hands_is_closed(tmp_path: Path) -> None:
    ca = trustme.CA()
    issued = ca.issue_cert("127.0.0.1")
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    issued.cert_chain_pems[0].write_to_path(str(cert))
    issued.private_key_pem.write_to_path(str(key))
    trusting = ssl.create_default_context()
    ca.configure_trust(trusting)
    with serving(Limits(header_seconds=SHORT), tls=(cert, key, trusting)) as running:
        with running.raw() as idle:
            took, got = closed_within(idle, SHORT + MARGIN)
            assert got == b"" and SHORT * 0.8 <= took < SHORT + MARGIN
        assert b"read 4" in request(running, body=b"abcd")
        deadline = time.monotonic() + MARGIN
        while running.guard.open and time.monotonic() < deadline:
            time.sleep(0.02)
        assert running.guard.open == 0


def test_the_cap_follows_the_file_limit() -> None:
    assert connections.connection_cap(256) == 128
    assert connections.connection_cap(1 << 20) == connections.DEFAULT_MAX_CONNECTIONS
    assert connections.connection_cap(1) == 1


def test_the_body_budget_waits_then_refuses() -> None:
    async def scenario() -> None:
        budget = BodyBudget(100, wait=0.2)
        await budget.take(60)
        with pytest.raises(BudgetExhausted):
            await budget.take(50)
        with pytest.raises(BudgetExhausted):
            await budget.take(101)

        async def give_later() -> None:
            await asyncio.sleep(0.05)
            await budget.give(60)

        giving = asyncio.create_task(give_later())
        async with budget.account() as held:
            await held.take(90)
            assert budget.used == 90
        await giving
        assert budget.used == 0

    asyncio.run(scenario())
