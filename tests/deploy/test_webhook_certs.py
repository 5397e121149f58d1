"""deploy/scripts/webhook-certs.sh, run for real (openssl) with a recording kubectl on the
PATH: the Secret it applies is the one the webhook mounts, its certificate is trusted by
the CA it patches into every webhook of the rendered configuration for the Service's DNS
name (a TLS handshake in memory), and for no other name."""

from __future__ import annotations

import base64
import json
import os
import ssl
import subprocess
from pathlib import Path

import pytest
import yaml
from tests.server.test_kubectl import kubectl_binary

from .rendered import DEPLOY, NAMESPACE, base, one

SCRIPT = DEPLOY / "scripts" / "webhook-certs.sh"
SERVICE_NAME = f"vcflow-webhook.{NAMESPACE}.svc"

# `create` goes to the real kubectl (a client-side dry run needs no cluster); `apply -f -`
# keeps what it is given; `get` answers one character per webhook of the configuration.
FAKE_KUBECTL = """#!/bin/sh
printf '%s\\n' "$*" >>"{calls}"
case "$*" in
    *" create secret "*) KUBECONFIG=/dev/null exec "{real}" "$@" ;;
    "apply -f -") cat >"{applied}" ;;
    "get validatingwebhookconfiguration"*) printf '{webhooks}' ;;
    "patch "*) printf '%s' "$6" >"{patch}" ;;
    *) echo "unexpected: $*" >&2; exit 1 ;;
esac
"""


def run_script(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    webhooks = one(base(), "ValidatingWebhookConfiguration", "vcflow-webhook")["webhooks"]
    fake = bin_dir / "kubectl"
    fake.write_text(
        FAKE_KUBECTL.format(
            calls=tmp_path / "calls",
            real=kubectl_binary(),
            applied=tmp_path / "applied.yaml",
            webhooks="x" * len(webhooks),
            patch=tmp_path / "patch.json",
        )
    )
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        ["sh", str(SCRIPT), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    return done, tmp_path


def _handshake(folder: Path, ca_pem: str, hostname: str) -> None:
    """A TLS handshake in memory: a server with the key pair in `folder`, a client trusting
    `ca_pem` and checking `hostname`. Raises ssl.SSLError when the client refuses."""
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(folder / "tls.crt", folder / "tls.key")
    client_context = ssl.create_default_context(cadata=ca_pem)
    to_server, to_client = ssl.MemoryBIO(), ssl.MemoryBIO()
    client = client_context.wrap_bio(to_client, to_server, server_hostname=hostname)
    s_in, s_out = ssl.MemoryBIO(), ssl.MemoryBIO()
    server = server_context.wrap_bio(s_in, s_out, server_side=True)
    done = {"client": False, "server": False}
    for _ in range(10):
        for name, side in (("client", client), ("server", server)):
            if not done[name]:
                try:
                    side.do_handshake()
                    done[name] = True
                except ssl.SSLWantReadError:
                    pass
        s_in.write(to_server.read())
        to_client.write(s_out.read())
        if all(done.values()):
            return
    raise AssertionError("the handshake did not finish")


def test_the_script_stores_a_serving_certificate_and_patches_its_ca(tmp_path: Path) -> None:
    done, where = run_script(tmp_path, "--out", str(tmp_path / "certs"))
    assert done.returncode == 0, done.stderr
    webhooks = one(base(), "ValidatingWebhookConfiguration", "vcflow-webhook")["webhooks"]
    assert f"caBundle of vcflow-webhook set ({len(webhooks)} webhooks)" in done.stdout

    secret = yaml.safe_load((where / "applied.yaml").read_text())
    volumes = one(base(), "Deployment", "vcflow-webhook")["spec"]["template"]["spec"]["volumes"]
    mounted = {v["secret"]["secretName"] for v in volumes if "secret" in v}
    assert (secret["kind"], secret["type"]) == ("Secret", "kubernetes.io/tls")
    assert secret["metadata"] == {"name": "vcflow-webhook-tls", "namespace": NAMESPACE}
    assert mounted == {secret["metadata"]["name"]}
    assert set(secret["data"]) == {"tls.crt", "tls.key", "ca.crt"}
    ca_pem = base64.b64decode(secret["data"]["ca.crt"]).decode()

    patch = json.loads((where / "patch.json").read_text())
    assert [op["path"] for op in patch] == [
        f"/webhooks/{i}/clientConfig/caBundle" for i in range(len(webhooks))
    ]
    assert {op["op"] for op in patch} == {"add"}
    assert {base64.b64decode(op["value"]).decode() for op in patch} == {ca_pem}

    stored = tmp_path / "certs"
    for key in ("tls.crt", "tls.key"):
        assert (stored / key).read_bytes() == base64.b64decode(secret["data"][key])
    for name in (SERVICE_NAME, f"{SERVICE_NAME}.cluster.local", f"vcflow-webhook.{NAMESPACE}"):
        _handshake(stored, ca_pem, name)
    with pytest.raises(ssl.SSLCertVerificationError, match="mismatch"):
        _handshake(stored, ca_pem, f"other.{NAMESPACE}.svc")


def test_the_names_follow_the_flags(tmp_path: Path) -> None:
    done, where = run_script(
        tmp_path, "--namespace", "ops", "--service", "hook", "--secret", "hook-tls"
    )
    assert done.returncode == 0, done.stderr
    secret = yaml.safe_load((where / "applied.yaml").read_text())
    assert secret["metadata"] == {"name": "hook-tls", "namespace": "ops"}
    certificate = base64.b64decode(secret["data"]["tls.crt"])
    names = subprocess.run(
        ["openssl", "x509", "-noout", "-ext", "subjectAltName"],
        input=certificate,
        capture_output=True,
        check=True,
    ).stdout.decode()
    assert "DNS:hook.ops.svc," in names and "vcflow" not in names


def test_an_unknown_flag_is_a_usage_error_that_changes_nothing(tmp_path: Path) -> None:
    done, where = run_script(tmp_path, "--namepsace", "ops")
    assert done.returncode == 2
    assert done.stderr.startswith("usage: webhook-certs.sh")
    assert not (where / "calls").exists()
