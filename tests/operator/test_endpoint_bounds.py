"""The operator's health and metrics ports under slow clients (issue 21, low item): at most
`MAX_CONNECTIONS` connections (a thread each) at once, the rest closed unanswered, and
none lives past `CONNECTION_SECONDS` however slowly it sends; the port answers again once
they are gone. In-process: a `Listener` on 127.0.0.1 with the limits made small."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from vcflow.operator.endpoints import Health
from vcflow.serving import endpoints
from vcflow.serving.endpoints import Listener

CAP = 4
SECONDS = 1.0
MARGIN = 15.0  # (a loaded 2-core host)


@pytest.fixture
def listener(monkeypatch: pytest.MonkeyPatch) -> Iterator[Listener]:
    monkeypatch.setattr(endpoints, "MAX_CONNECTIONS", CAP)
    monkeypatch.setattr(endpoints, "CONNECTION_SECONDS", SECONDS)
    found = Listener("--health-addr", ("127.0.0.1", 0), Health("lease").routes())
    found.start()
    try:
        yield found
    finally:
        found.close()


def closed_after(sock: socket.socket, seconds: float) -> float:
    started = time.monotonic()
    sock.settimeout(seconds)
    with contextlib.suppress(ConnectionResetError):
        while sock.recv(4096):
            pass
    return time.monotonic() - started


def test_slow_connections_are_capped_and_cut(listener: Listener) -> None:
    port = listener.server.server_address[1]
    threads_before = threading.active_count()
    slow = [socket.create_connection(("127.0.0.1", port), timeout=MARGIN) for _ in range(CAP)]
    try:
        for sock in slow:  # (a byte now and then: each read waits less than REQUEST_TIMEOUT)
            sock.sendall(b"G")
        end = time.monotonic() + MARGIN
        while listener.server.open < CAP and time.monotonic() < end:
            time.sleep(0.02)
        assert listener.server.open == CAP
        extra = [socket.create_connection(("127.0.0.1", port), timeout=MARGIN) for _ in range(6)]
        for sock in extra:
            with sock:
                assert closed_after(sock, MARGIN) < MARGIN
        assert listener.server.refused == 6
        assert threading.active_count() <= threads_before + CAP
        for sock in slow:
            with contextlib.suppress(OSError):
                sock.sendall(b"E")
            assert closed_after(sock, SECONDS + MARGIN) < SECONDS + MARGIN
    finally:
        for sock in slow:
            sock.close()
    end = time.monotonic() + MARGIN
    while listener.server.open and time.monotonic() < end:
        time.sleep(0.02)
    assert listener.server.open == 0
    assert httpx.get(f"{listener.url}/healthz", timeout=MARGIN).text == "ok"
