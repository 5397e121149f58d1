"""A server started with no flags is safe: it makes its own token, CA and serving certificate
(owner-only, in the state directory), serves HTTPS, wants the token, and writes both into
its kubeconfig; another user of the machine gets nowhere. `--insecure-no-auth` is the one
way out, on loopback only, with a warning."""

from __future__ import annotations

import json
import os
import shutil
import ssl
import stat
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from .conftest import BATCH, DEADLINE, FLOW, Start, server_command, template

OTHER_UID = 12345


def vcjob(name: str, script: str) -> dict[str, Any]:
    """A one-task vcjob running `sh -c script` once (the spec of `conftest.template`)."""
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": template(name, script)["spec"],
    }


def test_a_default_server_makes_and_keeps_its_token_and_certificate(start_server: Start) -> None:
    server = start_server("--runtime", "none", "--controllers", "off")
    serving = server.state_dir / "serving"
    assert server.url.startswith("https://127.0.0.1:")
    assert server.info["tokenFile"] == str(serving / "token")
    assert server.info["caFile"] == str(serving / "ca.crt")
    assert stat.S_IMODE(serving.stat().st_mode) == 0o700
    for name in ("token", "ca.crt", "ca.key", "tls.crt", "tls.key"):
        assert stat.S_IMODE((serving / name).stat().st_mode) == 0o600, name
    token = (serving / "token").read_text().strip()
    assert len(token) >= 32
    config = yaml.safe_load((server.state_dir / "kubeconfig").read_text())
    assert config["users"][0]["user"] == {"token": token}
    assert config["clusters"][0]["cluster"] == {
        "server": server.url,
        "certificate-authority": str(serving / "ca.crt"),
    }
    with server.client(token="") as anonymous:
        refused = anonymous.get(f"{FLOW}/jobflows")
        assert refused.status_code == 401 and refused.json()["reason"] == "Unauthorized"
        assert anonymous.post(f"{BATCH}/jobs", json=vcjob("j", "true")).status_code == 401
    with server.client() as client:
        assert client.get(f"{FLOW}/jobflows").status_code == 200
        # the scheme of the header is case-insensitive (RFC 7235)
        lower = client.get(f"{FLOW}/jobflows", headers={"Authorization": f"bearer {token}"})
        assert lower.status_code == 200
    # a restart keeps the token and the CA: kubeconfigs copied earlier still work
    ca = (serving / "ca.crt").read_bytes()
    assert server.stop() == 0
    again = start_server("--runtime", "none", "--controllers", "off")
    assert again.token == token and (serving / "ca.crt").read_bytes() == ca
    with again.client() as client:
        assert client.get(f"{FLOW}/jobflows").status_code == 200


def test_plain_http_to_a_default_server_gets_nothing(start_server: Start) -> None:
    server = start_server("--runtime", "none", "--controllers", "off")
    plain = server.url.replace("https://", "http://")
    with httpx.Client(timeout=DEADLINE) as client, pytest.raises(httpx.HTTPError):
        client.get(f"{plain}{FLOW}/jobflows")


def test_the_cli_finds_the_token_and_ca_through_the_state_directory(
    start_server: Start, tmp_path: Path
) -> None:
    server = start_server("--runtime", "none")
    done = subprocess.run(
        [*server_command(server.state_dir)[:3], "--state-dir", str(server.state_dir), "get", "jf"],
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == "No resources found in default namespace.\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="acting as another user needs root")
def test_another_user_of_the_machine_cannot_use_a_default_server(start_server: Start) -> None:
    """uid 12345 reaches the port but has no token: it cannot read the token file or the
    kubeconfig, and its vcjob is refused (before this, it ran as the server's user)."""
    curl = shutil.which("curl")
    assert curl is not None, "curl is needed to act as another user"
    server = start_server()
    job = json.dumps(vcjob("intruder", "id > /tmp/vcflow-intruder"))

    def as_other(*args: str, data: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(args),
            input=data,
            capture_output=True,
            text=True,
            timeout=DEADLINE,
            user=OTHER_UID,
            group=OTHER_UID,
            extra_groups=[],
            cwd="/",
            env={"PATH": "/usr/bin:/bin"},
        )

    for secret in (server.state_dir / "serving" / "token", server.state_dir / "kubeconfig"):
        assert as_other("cat", str(secret)).returncode != 0
    for scheme in ("https", "http"):
        url = server.url.replace("https://", f"{scheme}://") + f"{BATCH}/jobs"
        tried = as_other(
            curl, "-sk", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST",
            "-H", "Content-Type: application/json", "--data-binary", "@-", url,
            data=job,
        )  # fmt: skip
        assert tried.stdout in ("401", "000"), (scheme, tried.stdout, tried.stderr)
    with server.client() as client:
        assert client.get(f"{BATCH}/jobs").json()["items"] == []


def test_insecure_no_auth_is_plain_http_on_loopback_only_with_a_warning(
    start_server: Start, tmp_path: Path
) -> None:
    server = start_server("--insecure-no-auth", "--runtime", "none", "--controllers", "off")
    assert server.url.startswith("http://127.0.0.1:")
    assert server.info["tokenFile"] is None and server.info["caFile"] is None
    assert (
        "token"
        not in yaml.safe_load((server.state_dir / "kubeconfig").read_text())["users"][0]["user"]
    )
    with httpx.Client(base_url=server.url, timeout=DEADLINE) as client:
        assert client.get(f"{FLOW}/jobflows").status_code == 200
    end = time.monotonic() + DEADLINE
    while "WARNING: --insecure-no-auth" not in server.output() and time.monotonic() < end:
        time.sleep(0.05)
    assert "any user of this machine" in server.output()
    wide = subprocess.run(
        server_command(
            tmp_path / "other", "--port", "0", "--insecure-no-auth", "--host", "0.0.0.0"
        ),
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    assert wide.returncode == 1
    assert wide.stderr.splitlines() == [
        "refusing to listen on 0.0.0.0 with --insecure-no-auth: without a token the server "
        "listens on loopback only (127.0.0.1)"
    ]


def test_a_short_token_is_refused_on_a_non_loopback_address(
    tmp_path: Path, tls: tuple[Path, Path]
) -> None:
    token = tmp_path / "short"
    token.write_text("fifteen-bytes-x\n")
    token.chmod(0o600)
    cert, key = tls
    done = subprocess.run(
        server_command(
            tmp_path / "state", "--port", "0", "--host", "0.0.0.0", "--token-file", str(token),
            "--tls-cert", str(cert), "--tls-key", str(key),
        ),
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )  # fmt: skip
    assert done.returncode == 1
    assert len(done.stderr.splitlines()) == 1
    assert "holds a token of 15 bytes: a listener on 0.0.0.0 needs one of at least 16" in (
        done.stderr
    )


def test_a_given_token_file_alone_gets_a_made_certificate_and_kubectl_works(
    start_server: Start, tmp_path: Path
) -> None:
    """A --token-file server on loopback serves HTTPS with a made certificate, so kubectl
    (which sends no bearer token over plain http) is not locked out of its kubeconfig."""
    token = tmp_path / "token"
    token.write_text("a-token-of-the-users-own-choosing\n")
    token.chmod(0o600)
    server = start_server("--token-file", str(token), "--runtime", "none", "--controllers", "off")
    assert server.url.startswith("https://") and server.token == "a-token-of-the-users-own-choosing"
    context = ssl.create_default_context(cafile=server.info["caFile"])
    with httpx.Client(base_url=server.url, verify=context, timeout=DEADLINE) as client:
        answer = client.get(f"{FLOW}/jobflows", headers={"Authorization": f"Bearer {server.token}"})
        assert answer.status_code == 200
