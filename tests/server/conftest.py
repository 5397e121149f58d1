"""Fixtures of the server tests: `vcflow server --port 0` as a real child process on a state
directory in tmp_path (its URL, token and CA read from server.json: by default the server
makes its own and serves HTTPS), killed at teardown however the test
ended, with the pods it left stopped and its pod server gone; httpx clients for it."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import ssl
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.cli import flows

DEADLINE = 30.0
FLOW = "/apis/flow.volcano.sh/v1alpha1/namespaces/default"
BATCH = "/apis/batch.volcano.sh/v1alpha1/namespaces/default"
CORE = "/api/v1/namespaces/default"


@dataclass
class Server:
    proc: subprocess.Popen[bytes]
    state_dir: Path
    out: Path
    err: Path
    info: dict[str, Any] = field(default_factory=dict)
    token: str | None = None

    @property
    def url(self) -> str:
        return str(self.info["url"])

    def client(self, *, token: str | None = None, **options: Any) -> httpx.Client:
        given = token if token is not None else self.token
        headers = {"Authorization": f"Bearer {given}"} if given else {}
        ca = self.info.get("caFile")
        if ca:
            options.setdefault("verify", ssl.create_default_context(cafile=ca))
        return httpx.Client(base_url=self.url, headers=headers, timeout=DEADLINE, **options)

    def output(self) -> str:
        return self.out.read_text() + self.err.read_text()

    def stop(self, signum: int = signal.SIGTERM) -> int:
        """Send `signum`, wait for the exit; the exit code."""
        self.proc.send_signal(signum)
        return self.proc.wait(timeout=DEADLINE)


Start = Callable[..., Server]


def server_command(state_dir: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "vcflow", "server", "--state-dir", str(state_dir), *args]


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[Start]:
    """`start_server(*flags, state_dir=None, token=None, preexec_fn=None, cwd=None)` → a
    running Server (its server.json read; `preexec_fn` runs in the child before the server
    starts, e.g. to lower a limit; `cwd`: the directory it starts in); fails the test with
    the server's output if it does not come up."""
    started: list[Server] = []
    count = [0]

    def start(
        *args: str,
        state_dir: Path | None = None,
        token: str | None = None,
        preexec_fn: Callable[[], None] | None = None,
        cwd: Path | None = None,
    ) -> Server:
        count[0] += 1
        where = state_dir or tmp_path / "state"
        out, err = tmp_path / f"server{count[0]}.out", tmp_path / f"server{count[0]}.err"
        with out.open("wb") as stdout, err.open("wb") as stderr:
            proc = subprocess.Popen(
                server_command(where, "--port", "0", *args),
                stdout=stdout,
                stderr=stderr,
                preexec_fn=preexec_fn,
                cwd=cwd,
            )
        server = Server(proc, where, out, err, token=token)
        started.append(server)
        return up(server, "the server")

    yield start
    for server in started:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait(timeout=DEADLINE)
    for state_dir in {s.state_dir for s in started}:
        stop_pods(state_dir)
        assert not pod_servers(state_dir), "a pod server was left behind"


@pytest.fixture
def tls(tmp_path: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key (openssl)."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True, timeout=DEADLINE,
    )  # fmt: skip
    return cert, key


def up(server: Server, what: str) -> Server:
    """`server` once it has advertised itself (its server.json names its pid); fails the
    test with its output if it exits or takes longer than DEADLINE."""
    end = time.monotonic() + DEADLINE
    while True:
        info = _read_json(server.state_dir / "server.json")
        if info is not None and info.get("pid") == server.proc.pid:
            server.info = info
            if server.token is None and info.get("tokenFile"):
                server.token = Path(info["tokenFile"]).read_text().strip()
            return server
        if server.proc.poll() is not None or time.monotonic() > end:
            pytest.fail(f"{what} did not start: {server.output()}")
        time.sleep(0.05)


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        found = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def stop_pods(state_dir: Path) -> None:
    """Kill the pods of the state directory that still run and stop its pod server — also
    one a killed server was starting as it died: it is waited for, and killed by its pid
    if it does not stop."""
    flows.stop_pods(state_dir)
    end = time.monotonic() + 5.0
    while pod_servers(state_dir) and time.monotonic() < end:
        time.sleep(0.05)
    for pid in pod_servers(state_dir):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def pod_servers(state_dir: Path) -> list[int]:
    """The pids of the pod servers of `state_dir` (by their command line)."""
    return flows.processes_with(f"vcflow.podserver serve {state_dir / 'runtime'} ")


def template(name: str, script: str) -> dict[str, Any]:
    """A one-task JobTemplate running `sh -c script` once."""
    container = {"name": "main", "image": "busybox", "command": ["sh", "-c", script]}
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobTemplate",
        "metadata": {"name": name},
        "spec": {
            "minAvailable": 1,
            "tasks": [
                {
                    "name": "t",
                    "replicas": 1,
                    "template": {"spec": {"restartPolicy": "Never", "containers": [container]}},
                }
            ],
        },
    }


def jobflow(name: str, *entries: str) -> dict[str, Any]:
    """A JobFlow of `entry` or `entry<dep1,dep2` strings."""
    flows = []
    for entry in entries:
        job, _, deps = entry.partition("<")
        flows.append({"name": job, **({"dependsOn": {"targets": deps.split(",")}} if deps else {})})
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": name},
        "spec": {"jobRetainPolicy": "retain", "flows": flows},
    }


def wait_until(check: Callable[[], Any], what: str, deadline: float = DEADLINE) -> Any:
    end = time.monotonic() + deadline
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > end:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


def flow_phase(client: httpx.Client, name: str) -> str:
    found = client.get(f"{FLOW}/jobflows/{name}").json()
    return str(((found.get("status") or {}).get("state") or {}).get("phase") or "")


def lines(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
