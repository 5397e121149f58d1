"""`vcflow webhook` as a process: TLS only, health checks, one log line per review, bodies
that are no AdmissionReview (400) or too large (413), a cluster that cannot be read (500:
the API server's failurePolicy decides), certificates re-read when they change and on
SIGHUP, and SIGTERM as a clean stop with exit 0."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import trustme
from tests.server.conftest import DEADLINE, Server

from .conftest import Processes, Tls, Webhook, kubeconfig, payload

JF, JT = "/validate-jobflow", "/validate-jobtemplate"


def served_name(webhook: Webhook) -> str:
    """The common name of the certificate a new connection is served."""
    host, port = webhook.url.removeprefix("https://").rsplit(":", 1)
    with (
        socket.create_connection((host, int(port)), timeout=DEADLINE) as raw,
        webhook.tls.context().wrap_socket(raw, server_hostname=host) as tls,
    ):
        subject = dict(item[0] for item in tls.getpeercert()["subject"])
    return str(subject["commonName"])


def wait_for(check: object, what: str) -> None:
    end = time.monotonic() + DEADLINE
    while not check():  # type: ignore[operator]
        if time.monotonic() > end:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


def test_health_checks_answer_plainly(webhook: Webhook) -> None:
    with webhook.client() as client:
        for path in ("/healthz", "/readyz"):
            answered = client.get(path)
            assert (answered.status_code, answered.text) == (200, "ok")


def test_there_is_no_plain_http(webhook: Webhook) -> None:
    with pytest.raises(httpx.TransportError):
        httpx.get(webhook.url.replace("https://", "http://") + "/healthz", timeout=DEADLINE)


def test_each_review_is_logged_in_one_line(webhook: Webhook) -> None:
    webhook.review(JF, payload("jobflow-create-cyclic"))
    wait_for(
        lambda: any(
            line.startswith("INFO: JobFlow CREATE default/loop allowed=false (422) ")
            and line.endswith("ms")
            for line in webhook.output().splitlines()
        ),
        "the review's log line",
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            b"{",
            "the body is not valid JSON: Expecting property name enclosed in double quotes "
            "(line 1)",
        ),
        (b"[]", "the body must be a JSON object (an AdmissionReview)"),
        (
            b'{"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview"}',
            "the body must be apiVersion 'admission.k8s.io/v1' kind 'AdmissionReview' (got "
            "'admission.k8s.io/v1beta1', 'AdmissionReview'): list only v1 in the webhook "
            "configuration's admissionReviewVersions",
        ),
        (
            b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}',
            "the AdmissionReview has no 'request' object",
        ),
    ],
    ids=["not-json", "not-an-object", "v1beta1", "no-request"],
)
def test_a_body_that_is_no_review_is_400(webhook: Webhook, body: bytes, message: str) -> None:
    with webhook.client() as client:
        answered = client.post(JF, content=body, headers={"Content-Type": "application/json"})
    assert (answered.status_code, answered.text) == (400, message + "\n")


def test_a_review_without_uid_or_for_another_kind_is_400(webhook: Webhook) -> None:
    sent = payload("jobflow-create")
    del sent["request"]["uid"]
    with webhook.client() as client:
        answered = client.post(JF, json=sent)
        assert (answered.status_code, answered.text) == (
            400,
            "request.uid must be a non-empty string\n",
        )
        answered = client.post(JT, json=payload("jobflow-create"))
    assert answered.status_code == 400
    assert answered.text == (
        "this path reviews JobTemplate.flow.volcano.sh/v1alpha1, not "
        "JobFlow.flow.volcano.sh/v1alpha1: check the webhook's rules\n"
    )


def test_a_body_too_large_is_413(webhook: Webhook) -> None:
    with webhook.client() as client:
        answered = client.post(JF, content=b" " * (4 * 1024 * 1024 + 1))
    assert answered.status_code == 413
    assert answered.text == "the request is larger than 4 MiB: too large\n"


def test_a_cluster_that_cannot_be_read_is_500(
    processes: Processes, tls: Tls, tmp_path: Path
) -> None:
    with socket.socket() as unused:  # a port nothing listens on
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    config = tmp_path / "kubeconfig"
    config.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        f"clusters: [{{name: c, cluster: {{server: 'http://127.0.0.1:{port}'}}}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {}}]\n"
    )
    webhook = processes.webhook(tls, config)
    with webhook.client() as client:
        answered = client.post(JF, json=payload("jobflow-create"))  # reads the templates
        assert answered.status_code == 500
        assert answered.text.startswith("cannot read the cluster: ")
        assert answered.text.count("\n") == 1
        # a template's create reads nothing: it is still answered
        assert client.post(JT, json=payload("jobtemplate-create")).status_code == 200
    wait_for(
        lambda: (
            "ERROR: JobFlow CREATE default/test not answered (500): cannot read the cluster: "
            in webhook.output()
        ),
        "the failure's log line",
    )


def test_the_certificate_is_reread_when_its_files_change(
    processes: Processes, cluster: Server, tmp_path: Path
) -> None:
    ca = trustme.CA()
    tls = Tls(ca, tmp_path / "tls.crt", tmp_path / "tls.key", tmp_path / "ca.crt")
    tls.issue("first")
    webhook = processes.webhook(tls, kubeconfig(cluster))
    assert served_name(webhook) == "first"
    tls.issue("second")  # as cert-manager rotates it
    assert served_name(webhook) == "second"
    assert webhook.review(JT, payload("jobtemplate-create"))["response"]["allowed"] is True
    tls.key.write_text("not a key\n")  # half-written: the pair in use stays
    assert served_name(webhook) == "second"
    wait_for(lambda: "cannot reload the TLS certificate" in webhook.output(), "the warning")
    tls.issue("third")
    webhook.proc.send_signal(signal.SIGHUP)
    wait_for(lambda: webhook.output().count("reloaded") == 2, "the reload on SIGHUP")
    assert served_name(webhook) == "third"


def test_sigterm_stops_it_cleanly(processes: Processes, tls: Tls, cluster: Server) -> None:
    webhook = processes.webhook(tls, kubeconfig(cluster))
    webhook.review(JT, payload("jobtemplate-create"))
    assert webhook.stop(signal.SIGTERM) == 0
    assert "INFO: stopped" in webhook.output()


def test_a_certificate_that_does_not_load_is_one_line_exit_1(
    tls: Tls, cluster: Server, tmp_path: Path
) -> None:
    junk = tmp_path / "junk.pem"
    junk.write_text("junk\n")
    done = subprocess.run(
        [sys.executable, "-m", "vcflow", "webhook", "--tls-cert", str(junk), "--tls-key",
         str(tls.key), "--port", "0", "--kubeconfig", str(kubeconfig(cluster))],
        capture_output=True, text=True, timeout=DEADLINE,
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.startswith(f"cannot load the TLS certificate {junk} or key {tls.key}: ")
    assert done.stderr.count("\n") == 1
