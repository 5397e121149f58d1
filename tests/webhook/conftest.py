"""Fixtures of the webhook tests: a test CA (trustme) and the webhook's certificate for
127.0.0.1; the cluster, a real `vcflow server --runtime none --controllers off` process
(a bare Kubernetes-API store); `vcflow webhook` as a real process over HTTPS reading that
cluster through its kubeconfig, its URL read from its first line; the recorded
AdmissionReview payloads of tests/data/admission. Every process is stopped at teardown."""

from __future__ import annotations

import copy
import json
import re
import signal
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import trustme
from tests.server.conftest import DEADLINE, FLOW, Server, server_command, up

PAYLOADS = Path(__file__).parent.parent / "data" / "admission"
SERVING = re.compile(r"vcflow webhook: serving (https://\S+) ")


def payload(name: str) -> dict[str, Any]:
    """A recorded AdmissionReview (a fresh copy: tests may change it)."""
    return copy.deepcopy(json.loads((PAYLOADS / f"{name}.json").read_text()))


@dataclass
class Tls:
    """The test CA and the files the webhook serves with (`issue` replaces them)."""

    ca: trustme.CA
    cert: Path
    key: Path
    ca_file: Path

    def issue(self, common_name: str) -> None:
        """Write a new certificate and key for 127.0.0.1, each file replaced at once (a
        rename, as the kubelet swaps a Secret's files)."""
        issued = self.ca.issue_cert("127.0.0.1", common_name=common_name)
        for path, blob in (
            (self.key, issued.private_key_pem),
            (self.cert, issued.cert_chain_pems[0]),
        ):
            fresh = path.with_suffix(".new")
            blob.write_to_path(str(fresh))
            fresh.replace(path)

    def context(self) -> ssl.SSLContext:
        found = ssl.create_default_context()
        self.ca.configure_trust(found)
        return found


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> Tls:
    where = tmp_path_factory.mktemp("tls")
    ca = trustme.CA()
    found = Tls(ca, where / "tls.crt", where / "tls.key", where / "ca.crt")
    ca.cert_pem.write_to_path(str(found.ca_file))
    found.issue("webhook-1")
    return found


@dataclass
class Webhook:
    proc: subprocess.Popen[bytes]
    out: Path
    err: Path
    tls: Tls
    url: str = ""

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, verify=self.tls.context(), timeout=DEADLINE)

    def review(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST `body` to `path`; the AdmissionReview answered (200 expected)."""
        with self.client() as client:
            answered = client.post(path, json=body)
        assert answered.status_code == 200, answered.text
        found: dict[str, Any] = answered.json()
        return found

    def output(self) -> str:
        return self.out.read_text() + self.err.read_text()

    def stop(self, signum: int = signal.SIGTERM) -> int:
        self.proc.send_signal(signum)
        return self.proc.wait(timeout=DEADLINE)


class Processes:
    """Starts webhooks and clusters in `where`; `close` kills what still runs."""

    def __init__(self, where: Path) -> None:
        self.where = where
        self.started: list[subprocess.Popen[bytes]] = []

    def _popen(self, command: list[str], name: str) -> tuple[subprocess.Popen[bytes], Path, Path]:
        out, err = self.where / f"{name}.out", self.where / f"{name}.err"
        with out.open("wb") as stdout, err.open("wb") as stderr:
            proc = subprocess.Popen(command, stdout=stdout, stderr=stderr)
        self.started.append(proc)
        return proc, out, err

    def cluster(self) -> Server:
        state = self.where / f"cluster{len(self.started)}"
        command = server_command(state, "--port", "0", "--runtime", "none", "--controllers", "off")
        proc, out, err = self._popen(command, state.name)
        return up(Server(proc, state, out, err), "the cluster")

    def webhook(self, tls: Tls, kubeconfig: Path, *args: str, wait: bool = True) -> Webhook:
        command = [
            sys.executable, "-m", "vcflow", "webhook", "--tls-cert", str(tls.cert),
            "--tls-key", str(tls.key), "--host", "127.0.0.1", "--port", "0",
            "--kubeconfig", str(kubeconfig), *args,
        ]  # fmt: skip
        proc, out, err = self._popen(command, f"webhook{len(self.started)}")
        found = Webhook(proc, out, err, tls)
        end = time.monotonic() + DEADLINE
        while wait:
            match = SERVING.search(out.read_text())
            if match:
                found.url = match.group(1)
                break
            if proc.poll() is not None or time.monotonic() > end:
                pytest.fail(f"the webhook did not start: {found.output()}")
            time.sleep(0.05)
        return found

    def close(self) -> None:
        for proc in self.started:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=DEADLINE)


@pytest.fixture(scope="module")
def processes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Processes]:
    found = Processes(tmp_path_factory.mktemp("processes"))
    yield found
    found.close()


@pytest.fixture(scope="module")
def cluster(processes: Processes) -> Server:
    """One bare Kubernetes-API store for the module's tests (each uses its own names)."""
    return processes.cluster()


@pytest.fixture(scope="module")
def webhook(processes: Processes, tls: Tls, cluster: Server) -> Webhook:
    return processes.webhook(tls, kubeconfig(cluster))


def kubeconfig(cluster: Server) -> Path:
    return cluster.state_dir / "kubeconfig"


def put(cluster: Server, obj: dict[str, Any], phase: str | None = None) -> None:
    """Create `obj` in the cluster (a JobFlow or JobTemplate), its flow phase set."""
    plural = {"JobFlow": "jobflows", "JobTemplate": "jobtemplates"}[obj["kind"]]
    with cluster.client() as client:
        created = client.post(f"{FLOW}/{plural}", json=obj)
        assert created.status_code == 201, created.text
        if phase is not None:
            set_phase(client, obj["metadata"]["name"], phase)


def set_phase(client: httpx.Client, name: str, phase: str) -> None:
    patched = client.patch(
        f"{FLOW}/jobflows/{name}/status",
        json={"status": {"state": {"phase": phase}}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert patched.status_code == 200, patched.text
