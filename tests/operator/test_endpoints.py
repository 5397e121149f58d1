"""The operator's two ports: health (`--health-addr`: /healthz, /readyz, plain HTTP on any
address, as kubelet probes on the pod IP need) and metrics (`--metrics-addr`: /metrics,
loopback only unless a bearer token and TLS guard it, as `vcflow server`). A non-loopback
address here is 0.0.0.0 (every interface), as in the server's tests: 127.0.0.2 is loopback.
"""

from __future__ import annotations

import os
import ssl
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import trustme
from tests.server.conftest import DEADLINE, wait_until

from .conftest import Operator, StartOperator

TOKEN = "s3cret-token-of-20-b"
REFUSAL = (
    "refusing to serve /metrics on 0.0.0.0: a non-loopback --metrics-addr needs "
    "--metrics-token-file and --metrics-tls-cert/--metrics-tls-key (or listen on 127.0.0.1)"
)


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "token"
    path.write_text(f"{TOKEN}\n")
    path.chmod(0o600)
    return path


@pytest.fixture
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def tls(tmp_path: Path, ca: trustme.CA) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 from the test CA, and its key."""
    issued = ca.issue_cert("127.0.0.1")
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    issued.cert_chain_pems[0].write_to_path(str(cert))
    issued.private_key_pem.write_to_path(str(key))
    return cert, key


def _trusting(ca: trustme.CA) -> ssl.SSLContext:
    context = ssl.create_default_context()
    ca.configure_trust(context)
    return context


def _on_loopback(url: str) -> str:
    """A URL of a port bound on every interface (0.0.0.0), as this machine reaches it."""
    return url.replace("://0.0.0.0:", "://127.0.0.1:")


def _refused(tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    """`vcflow operator` with `flags`, no cluster to reach (a start past the check would
    fail on the kubeconfig instead, with another line)."""
    env = {k: v for k, v in os.environ.items() if k != "KUBERNETES_SERVICE_HOST"}
    return subprocess.run(
        [sys.executable, "-m", "vcflow", "operator", "--health-addr", "127.0.0.1:0",
         "--kubeconfig", str(tmp_path / "no-kubeconfig"), *flags],
        capture_output=True, text=True, timeout=DEADLINE, env=env,
    )  # fmt: skip


def test_a_kubeconfig_that_does_not_load_is_its_one_line(tmp_path: Path) -> None:
    # the ports are bound first (their flags' refusals come first) but serve only once the
    # kubeconfig loads: no "serving /healthz on ..." before the error
    done = _refused(tmp_path, "--metrics-addr", "127.0.0.1:0")
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"cannot read kubeconfig {tmp_path / 'no-kubeconfig'}: no such file or directory"
    ]


def test_health_answers_on_every_interface_without_token_or_tls(
    start_operator: StartOperator,
) -> None:
    operator = start_operator("--health-addr", "0.0.0.0:0")
    assert operator.health_url.startswith("http://0.0.0.0:")
    health = _on_loopback(operator.health_url)
    assert httpx.get(health + "/healthz", timeout=DEADLINE).text == "ok"
    wait_until(
        lambda: httpx.get(health + "/readyz", timeout=DEADLINE).text == "leader, synced",
        "the leader to be ready",
    )
    # nothing but the liveness bit there: the metrics stay on their own (loopback) port
    assert httpx.get(health + "/metrics", timeout=DEADLINE).status_code == 404
    assert operator.metrics_url.startswith("http://127.0.0.1:")


def test_the_metrics_port_serves_only_metrics(start_operator: StartOperator) -> None:
    operator = start_operator()
    assert "leader_election_master_status" in operator.get("/metrics").text
    for path in ("/healthz", "/readyz"):
        assert httpx.get(operator.metrics_url + path, timeout=DEADLINE).status_code == 404


@pytest.mark.parametrize("given", ["none", "token", "tls"])
def test_metrics_on_every_interface_are_refused_without_token_and_tls(
    tmp_path: Path, token_file: Path, tls: tuple[Path, Path], given: str
) -> None:
    cert, key = tls
    flags = {
        "none": [],
        "token": ["--metrics-token-file", str(token_file)],
        "tls": ["--metrics-tls-cert", str(cert), "--metrics-tls-key", str(key)],
    }[given]
    done = _refused(tmp_path, "--metrics-addr", "0.0.0.0:0", *flags)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [REFUSAL]


@pytest.mark.parametrize(
    ("flags", "line"),
    [
        (["--metrics-tls-cert", "c.pem"],
         "--metrics-tls-cert and --metrics-tls-key go together: give both or neither"),
        (["--metrics-token-file", "LOOSE"], "too open"),
        (["--metrics-tls-cert", "JUNK", "--metrics-tls-key", "JUNK"],
         "cannot load the TLS certificate"),
    ],
    ids=["half-tls", "loose-token-file", "junk-tls"],
)  # fmt: skip
def test_unusable_metrics_files_are_refused_in_one_line(
    tmp_path: Path, token_file: Path, flags: list[str], line: str
) -> None:
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate\n")
    token_file.chmod(0o644)
    paths = {"LOOSE": str(token_file), "JUNK": str(junk)}
    done = _refused(tmp_path, *(paths.get(flag, flag) for flag in flags))
    assert done.returncode == 1
    assert len(done.stderr.splitlines()) == 1 and line in done.stderr, done.stderr


def test_a_short_metrics_token_is_refused_off_loopback(
    tmp_path: Path, token_file: Path, tls: tuple[Path, Path]
) -> None:
    # the server's rule: a token of fewer than 16 bytes is no guard where a network reaches
    token_file.write_text("s3cret\n")
    cert, key = tls
    done = _refused(
        tmp_path,
        *("--metrics-addr", "0.0.0.0:0", "--metrics-token-file", str(token_file)),
        *("--metrics-tls-cert", str(cert), "--metrics-tls-key", str(key)),
    )
    assert done.returncode == 1
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert "holds a token of 6 bytes: a listener on 0.0.0.0 needs one of at least 16" in (
        done.stderr
    )


def test_with_token_and_tls_metrics_answer_on_every_interface_to_the_token_only(
    start_operator: StartOperator, token_file: Path, tls: tuple[Path, Path], ca: trustme.CA
) -> None:
    cert, key = tls
    operator: Operator = start_operator(
        "--metrics-addr", "0.0.0.0:0", "--metrics-token-file", str(token_file),
        "--metrics-tls-cert", str(cert), "--metrics-tls-key", str(key),
    )  # fmt: skip
    assert operator.metrics_url.startswith("https://0.0.0.0:")
    metrics = _on_loopback(operator.metrics_url) + "/metrics"
    with httpx.Client(verify=_trusting(ca), timeout=DEADLINE) as client:
        anonymous = client.get(metrics)
        assert anonymous.status_code == 401
        assert anonymous.headers["WWW-Authenticate"] == "Bearer"
        assert "leader_election_master_status" not in anonymous.text
        wrong = client.get(metrics, headers={"Authorization": f"Bearer {TOKEN}x"})
        assert wrong.status_code == 401
        scraped = client.get(metrics, headers={"Authorization": f"Bearer {TOKEN}"})
        assert scraped.status_code == 200
        assert "leader_election_master_status" in scraped.text
    with pytest.raises(httpx.HTTPError):  # (plain HTTP gets no answer from the TLS port)
        httpx.get(metrics.replace("https://", "http://"), timeout=DEADLINE)
    # the health port stays plain, open, and the process serves on after the bad requests
    assert operator.get("/healthz").text == "ok"
    with httpx.Client(verify=_trusting(ca), timeout=DEADLINE) as client:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        assert client.get(metrics, headers=headers).status_code == 200
