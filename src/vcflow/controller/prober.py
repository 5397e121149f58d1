"""The I/O of probe dependencies: a TCP connect or an HTTP GET against a target's pods,
as `reconcile.probes.Check` describes it (docs/flow-features.md §2). The JobFlow controller
runs each round a flow's `decide` found due and hands the results back to the index.

`SocketProber` is the real one; a harness without pods gives `Unreachable`. Embedded, a
check connects to `Check.host` (the pods share this machine's network); the operator gives
the prober a `HostResolver` that names the pod IPs of the target's task instead.
"""

from __future__ import annotations

import http.client
import socket
from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol

from vcflow.reconcile.probes import HTTP, Check

#: seconds one check may take
TIMEOUT = 1.0


class Prober(Protocol):
    def check(self, check: Check) -> tuple[bool, str]:
        """(succeeded, what happened, for the entry's Waiting message)."""
        ...


class HostResolver(Protocol):
    def hosts(self, check: Check) -> Sequence[str]:
        """The addresses to run `check` against (each must pass); none: it cannot run yet."""
        ...


class SocketProber:
    def __init__(self, timeout: float = TIMEOUT, *, hosts: HostResolver | None = None) -> None:
        self.timeout = timeout
        self.resolver = hosts

    def check(self, check: Check) -> tuple[bool, str]:
        if self.resolver is None:
            return self._one(check)
        found = self.resolver.hosts(check)
        if not found:
            return False, f"{check.label()}: no pod with an IP yet"
        note = ""
        for host in found:
            ok, note = self._one(replace(check, host=host))
            if not ok:
                return False, note
        return True, note

    def _one(self, check: Check) -> tuple[bool, str]:
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
