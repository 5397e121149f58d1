"""Fixtures of the operator's end-to-end tests: a bare `vcflow server --runtime none
--controllers off` as a real process (the API server), `vcflow operator` replicas as real
processes on its kubeconfig (killed at teardown however the test ended), the venv's
kubectl, and a FakeVolcano playing Volcano's job controller. Leases are short (2 s) so a
takeover takes seconds."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.operator.fakevolcano import FakeVolcano
from tests.server.conftest import DEADLINE, Server, Start, start_server, wait_until
from tests.server.test_kubectl import Kubectl, kubectl_binary

__all__ = ["start_server"]

LEASE = "/apis/coordination.k8s.io/v1/namespaces/default/leases/vcflow-operator"
#: the election's timing in these tests (seconds): duration, renew deadline, retry period
TIMING = ("--lease-duration", "2", "--renew-deadline", "1.5", "--retry-period", "0.25")
_HEALTH = re.compile(r"serving /healthz, /livez, /readyz on (http://\S+)")
_METRICS = re.compile(r"serving /metrics on (https?://\S+)")
_IDENTITY = re.compile(r"leader election: (\S+) is a candidate")


@dataclass
class Operator:
    proc: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    @property
    def health_url(self) -> str:
        found = wait_until(lambda: _HEALTH.search(self.output()), "the operator's health port")
        return str(found.group(1))

    @property
    def metrics_url(self) -> str:
        found = wait_until(lambda: _METRICS.search(self.output()), "the operator's metrics port")
        return str(found.group(1))

    @property
    def identity(self) -> str:
        found = wait_until(lambda: _IDENTITY.search(self.output()), "the operator's identity")
        return str(found.group(1))

    def get(self, path: str) -> httpx.Response:
        """GET `path` on its port: /metrics on the metrics port, the rest on the health one."""
        url = self.metrics_url if path == "/metrics" else self.health_url
        return httpx.get(url + path, timeout=DEADLINE)

    def kill(self, signum: int = signal.SIGKILL) -> int:
        self.proc.send_signal(signum)
        return self.proc.wait(timeout=DEADLINE)


StartOperator = Callable[..., Operator]


@pytest.fixture
def api(start_server: Start) -> Server:
    """The bare API server."""
    return start_server("--runtime", "none", "--controllers", "off")


@pytest.fixture
def start_operator(api: Server, tmp_path: Path) -> Iterator[StartOperator]:
    """`start_operator(*flags)`: a `vcflow operator` replica on the API server."""
    started: list[Operator] = []

    def start(*flags: str) -> Operator:
        log = tmp_path / f"operator{len(started) + 1}.log"
        command = [
            sys.executable, "-m", "vcflow", "operator",
            "--kubeconfig", str(api.state_dir / "kubeconfig"),
            "--health-addr", "127.0.0.1:0",
            "--metrics-addr", "127.0.0.1:0",
            *TIMING, *flags,
        ]  # fmt: skip
        env = {k: v for k, v in os.environ.items() if k != "KUBERNETES_SERVICE_HOST"}
        with log.open("wb") as out:
            proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
        operator = Operator(proc, log)
        started.append(operator)
        return operator

    yield start
    for operator in started:
        if operator.proc.poll() is None:
            operator.proc.kill()
            operator.proc.wait(timeout=DEADLINE)


@pytest.fixture
def volcano(api: Server) -> Iterator[FakeVolcano]:
    with FakeVolcano(api.url, token=api.token, ca_file=api.info.get("caFile")) as fake:
        yield fake
    assert not fake.errors, fake.errors


@pytest.fixture
def kubectl(api: Server, tmp_path: Path) -> Kubectl:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "KUBECONFIG": str(api.state_dir / "kubeconfig"),
    }
    return Kubectl(kubectl_binary(), env)


def lease(api: Server) -> dict[str, Any]:
    with api.client() as client:
        found = client.get(LEASE)
    return found.json() if found.status_code == 200 else {}


def holder(api: Server) -> str:
    return str((lease(api).get("spec") or {}).get("holderIdentity") or "")


def wait_leader(api: Server, *candidates: Operator) -> Operator:
    """The candidate that holds the lease, once one does."""

    def leading() -> Operator | None:
        now = holder(api)
        return next((c for c in candidates if now and c.identity == now), None)

    found: Operator = wait_until(leading, "a leader")
    return found


def flow_phase(api: Server, name: str, namespace: str = "default") -> str:
    with api.client() as client:
        found = client.get(f"/apis/flow.volcano.sh/v1alpha1/namespaces/{namespace}/jobflows/{name}")
    return str(((found.json().get("status") or {}).get("state") or {}).get("phase") or "")


def elapsed_since(start: float) -> float:
    return time.monotonic() - start
