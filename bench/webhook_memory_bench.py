"""The webhook's memory under slow and large requests (issue 21, item 5): `vcflow webhook`
as a real process over TLS, reading a bare `vcflow server` cluster, its RSS (and peak,
VmHWM) read from /proc while

- `stalled`: 40 connections each announce a 4 MiB body, send half of it and stall;
- `large`: 40 connections each send a whole UPDATE review at the webhook's MAX_BODY
  (two JobFlows of about 1.5 MiB each), at once (`--connections N`: N in both).

Run: `.venv/bin/python bench/webhook_memory_bench.py [--src DIR]`; `--src` runs the
webhook of another checkout's `src` (e.g. `git archive HEAD src | tar -x -C /tmp/before`
to measure before a change). Figures go in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import trustme

CONNECTIONS = 40
BODY = 4 * 1024 * 1024
SERVING = re.compile(r"vcflow webhook: serving https://127\.0\.0\.1:(\d+) ")
PAYLOAD = Path(__file__).parent.parent / "tests" / "data" / "admission" / "jobflow-update.json"


def memory(pid: int) -> tuple[float, float]:
    """RSS and peak RSS of `pid`, MiB."""
    found = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return int(found["VmRSS"].split()[0]) / 1024, int(found["VmHWM"].split()[0]) / 1024


def wait_line(path: Path, pattern: re.Pattern[str], proc: subprocess.Popen[bytes]) -> str:
    end = time.monotonic() + 60
    while time.monotonic() < end:
        match = pattern.search(path.read_text())
        if match:
            return match.group(1)
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    raise SystemExit(f"did not start: {path.read_text()}")


def large_review() -> bytes:
    """An UPDATE review of two JobFlows of ~1.5 MiB each (under MAX_BODY), in many small
    annotations: parsed, such a body costs several times its bytes."""
    review: dict[str, Any] = json.loads(PAYLOAD.read_text())
    request = review["request"]
    pad = {f"example.com/key-{n:05d}": f"value-{n:05d}-" + "v" * 40 for n in range(20_000)}
    for key in ("object", "oldObject"):
        request[key].setdefault("metadata", {}).setdefault("annotations", {}).update(pad)
    return json.dumps(review).encode()


def connect(port: int, tls: ssl.SSLContext) -> ssl.SSLSocket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=120)
    return tls.wrap_socket(sock, server_hostname="127.0.0.1")


def head(size: int) -> bytes:
    return (
        f"POST /validate-jobflow HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"
        f"\r\nContent-Length: {size}\r\n\r\n"
    ).encode()


def stalled(port: int, tls: ssl.SSLContext, pid: int) -> dict[str, Any]:
    socks = []
    for _ in range(CONNECTIONS):
        sock = connect(port, tls)
        sock.sendall(head(BODY) + b" " * (BODY // 2))
        socks.append(sock)
    started = time.monotonic()
    closed: list[float] = []
    answers: dict[str, int] = {}

    def watch(sock: ssl.SSLSocket) -> None:
        got = b""
        try:
            while chunk := sock.recv(65536):
                got += chunk
        except OSError:
            pass
        closed.append(time.monotonic() - started)
        status = got.split(b" ", 2)[1].decode() if got.startswith(b"HTTP/") else "none"
        answers[status] = answers.get(status, 0) + 1

    threads = [threading.Thread(target=watch, args=(s,), daemon=True) for s in socks]
    for thread in threads:
        thread.start()
    rss_at_3s = None
    peak_seen = 0.0
    while any(t.is_alive() for t in threads) and time.monotonic() - started < 120:
        rss, _ = memory(pid)
        peak_seen = max(peak_seen, rss)
        if rss_at_3s is None and time.monotonic() - started >= 3:
            rss_at_3s = rss
        time.sleep(0.1)
    for sock in socks:
        sock.close()
    return {
        "rss_after_3s_mib": rss_at_3s,
        "rss_peak_seen_mib": round(peak_seen, 1),
        "all_closed_after_s": round(max(closed), 1) if len(closed) == CONNECTIONS else None,
        "answers": answers,
    }


def large(port: int, tls: ssl.SSLContext, pid: int) -> dict[str, Any]:
    body = large_review()
    answers: dict[str, int] = {}
    lock = threading.Lock()

    def send() -> None:
        try:
            with connect(port, tls) as sock:
                sock.sendall(head(len(body)) + body)
                got = sock.recv(65536)
            status = got.split(b" ", 2)[1].decode() if got.startswith(b"HTTP/") else "none"
        except OSError as exc:
            status = type(exc).__name__
        with lock:
            answers[status] = answers.get(status, 0) + 1

    threads = [threading.Thread(target=send, daemon=True) for _ in range(CONNECTIONS)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    peak_seen = 0.0
    while any(t.is_alive() for t in threads):
        peak_seen = max(peak_seen, memory(pid)[0])
        time.sleep(0.05)
    return {
        "body_bytes": len(body),
        "seconds": round(time.monotonic() - started, 1),
        "rss_peak_seen_mib": round(peak_seen, 1),
        "answers": answers,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--src", type=Path, default=None)
    parser.add_argument("--connections", type=int, default=40)
    args = parser.parse_args()
    global CONNECTIONS
    CONNECTIONS = args.connections
    env = dict(os.environ)
    if args.src is not None:
        env["PYTHONPATH"] = str(args.src.absolute())
    with tempfile.TemporaryDirectory() as where:
        tmp = Path(where)
        ca = trustme.CA()
        issued = ca.issue_cert("127.0.0.1")
        issued.cert_chain_pems[0].write_to_path(str(tmp / "tls.crt"))
        issued.private_key_pem.write_to_path(str(tmp / "tls.key"))
        tls = ssl.create_default_context()
        ca.configure_trust(tls)
        procs: list[subprocess.Popen[bytes]] = []
        try:
            state = tmp / "cluster"
            out = tmp / "cluster.out"
            with out.open("wb") as stdout:
                cluster = subprocess.Popen(
                    [sys.executable, "-m", "vcflow", "server", "--state-dir", str(state),
                     "--port", "0", "--runtime", "none", "--controllers", "off"],
                    stdout=stdout, stderr=subprocess.STDOUT, env=env,
                )  # fmt: skip
            procs.append(cluster)
            wait_line(out, re.compile(r"(serving)"), cluster)
            out = tmp / "webhook.out"
            with out.open("wb") as stdout:
                webhook = subprocess.Popen(
                    [sys.executable, "-m", "vcflow", "webhook", "--tls-cert",
                     str(tmp / "tls.crt"), "--tls-key", str(tmp / "tls.key"), "--host",
                     "127.0.0.1", "--port", "0", "--kubeconfig", str(state / "kubeconfig")],
                    stdout=stdout, stderr=subprocess.STDOUT, env=env,
                )  # fmt: skip
            procs.append(webhook)
            port = int(wait_line(out, SERVING, webhook))
            time.sleep(1)
            report: dict[str, Any] = {"rss_idle_mib": memory(webhook.pid)[0]}
            report["stalled"] = stalled(port, tls, webhook.pid)
            report["large"] = large(port, tls, webhook.pid)
            report["rss_end_mib"], report["rss_peak_mib"] = memory(webhook.pid)
            print(json.dumps(report, indent=2))
        finally:
            for proc in procs:
                proc.kill()
                proc.wait()


if __name__ == "__main__":
    main()
