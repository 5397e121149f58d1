"""The I/O of probe dependencies: a TCP connect or an HTTP GET against a target's pods,
as `reconcile.probes.Check` describes it (docs/flow-features.md §2). The JobFlow controller
runs each round a flow's `decide` found due and hands the results back to the index.

`SocketProber` is the real one; a harness without pods gives `Unreachable`.
"""

from __future__ import annotations

import http.client
import socket
from typing import Protocol

from vcflow.reconcile.probes import HTTP, Check

#: seconds one check may take
TIMEOUT = 1.0


class Prober(Protocol):
    def check(self, check: Check) -> tuple[bool, str]:
        """(succeeded, what happened, for the entry's Waiting message)."""
        ...


class SocketProber:
    def __init__(self, timeout: float = TIMEOUT) -> None:
        self.timeout = timeout

    def check(self, check: Check) -> tuple[bool, str]:
        if check.kind == HTTP:
            return self._http(check)
        try:
            with socket.create_connection((check.host, check.port), timeout=self.timeout):
                return True, f"{check.label()}: connected"
        except OSError as exc:
            return False, f"{check.label()}: {_why(exc)}"

    def _http(self, check: Check) -> tuple[bool, str]:
        conn = http.client.HTTPConnection(check.host, check.port, timeout=self.timeout)
        try:
            headers = {check.header[0]: check.header[1]} if check.header else {}
            conn.request("GET", check.path or "/", headers=headers)
            code = conn.getresponse().status
        except (OSError, http.client.HTTPException) as exc:
            return False, f"{check.label()}: {_why(exc)}"
        finally:
            conn.close()
        return 200 <= code < 400, f"{check.label()}: HTTP {code}"


class Unreachable:
    """No pod runs (the conformance harness): no probe can succeed."""

    def check(self, check: Check) -> tuple[bool, str]:
        return False, f"{check.label()}: no pod runs here"


def _why(exc: BaseException) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, TimeoutError | socket.timeout):
        return "timed out"
    text = str(exc) or type(exc).__name__
    return text.split("] ", 1)[-1] if text.startswith("[Errno") else text
