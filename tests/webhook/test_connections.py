"""The webhook's bounds on slow requests (issue 21, item 5): 40 connections that each
announce a 4 MiB body, send half and stall are answered (408 at the body deadline, or 503
when the body budget has no room) and closed within the documented deadline, and the
webhook's memory stays bounded meanwhile. Before the bounds, they were never closed and
each held what it had sent (docs/benchmarks.md)."""

from __future__ import annotations

import socket
import ssl
import threading
import time
from pathlib import Path

from vcflow.webhook import app, serve

from .conftest import Processes, Tls, Webhook, kubeconfig

CONNECTIONS = 40
BODY = 4 * 1024 * 1024
#: RSS growth allowed: the body budget (16 MiB of reviews held) and about a MiB of buffers
#: per connection (TLS, uvicorn's unread body): 56 MiB; measured 41 to 63
GROWTH_MIB = 80
#: seconds past the body deadline the last connection may take to be closed (a loaded host)
MARGIN = 20.0


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def test_stalled_half_bodies_are_closed_by_the_deadline_with_memory_bounded(
    processes: Processes, tls: Tls, tmp_path: Path
) -> None:
    cluster = processes.cluster()
    webhook: Webhook = processes.webhook(tls, kubeconfig(cluster))
    host, port = webhook.url.removeprefix("https://").rsplit(":", 1)
    before = rss_mib(webhook.proc.pid)
    head = (
        f"POST /validate-jobflow HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json"
        f"\r\nContent-Length: {BODY}\r\n\r\n"
    ).encode()
    context = tls.context()
    socks: list[ssl.SSLSocket] = []
    answers: list[bytes] = []
    closed_after: list[float] = []
    lock = threading.Lock()
    try:
        for _ in range(CONNECTIONS):
            raw = socket.create_connection((host, int(port)), timeout=120)
            sock = context.wrap_socket(raw, server_hostname=host)
            socks.append(sock)
            sock.sendall(head + b" " * (BODY // 2))
        started = time.monotonic()

        def watch(sock: ssl.SSLSocket) -> None:
            got = b""
            try:
                while chunk := sock.recv(65536):
                    got += chunk
            except OSError:
                pass
            with lock:
                answers.append(got)
                closed_after.append(time.monotonic() - started)

        threads = [threading.Thread(target=watch, args=(s,), daemon=True) for s in socks]
        for thread in threads:
            thread.start()
        peak = before
        deadline = serve.LIMITS.body_seconds + MARGIN
        while any(t.is_alive() for t in threads) and time.monotonic() - started < deadline:
            peak = max(peak, rss_mib(webhook.proc.pid))
            time.sleep(0.1)
        for thread in threads:
            thread.join(timeout=1)
    finally:
        for sock in socks:
            sock.close()
    assert len(closed_after) == CONNECTIONS, "stalled connections were left open"
    assert max(closed_after) < serve.LIMITS.body_seconds + MARGIN
    codes = sorted({a.split(b" ", 2)[1] for a in answers if a.startswith(b"HTTP/1.1 ")})
    assert codes and set(codes) <= {b"408", b"503"}, answers
    assert peak - before < GROWTH_MIB, f"RSS {before:.0f} -> {peak:.0f} MiB"
    assert app.BODY_BUDGET == 4 * app.MAX_BODY  # (the budget the bound above counts)
    with webhook.client() as client:  # (and it still answers)
        assert client.get("/healthz").text == "ok"
