"""A GET-route port (`serving.endpoints`): open on loopback, refused elsewhere unless a
token file and TLS guard it, and then answering the bearer token only."""

from __future__ import annotations

import ssl
from pathlib import Path

import httpx
import pytest
import trustme

from vcflow.serving import Refused, endpoints, exposure
from vcflow.serving.exposure import BadTokenFile, Exposure

TOKEN = "a-token-of-some-length"
DEADLINE = 30.0


@pytest.fixture
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def files(tmp_path: Path, ca: trustme.CA) -> tuple[Path, Path, Path]:
    """The token file, and a certificate for 127.0.0.1 with its key."""
    token = tmp_path / "token"
    token.write_text(f"{TOKEN}\n")
    token.chmod(0o600)
    issued = ca.issue_cert("127.0.0.1")
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    issued.cert_chain_pems[0].write_to_path(str(cert))
    issued.private_key_pem.write_to_path(str(key))
    return token, cert, key


def test_loopback_is_open() -> None:
    assert endpoints.guard(Exposure("127.0.0.1"), exposure.SERVER) == endpoints.Guard()


def test_elsewhere_without_token_and_tls_is_refused(files: tuple[Path, Path, Path]) -> None:
    token, cert, key = files
    for given in ((None, cert, key), (token, None, None)):
        with pytest.raises(Refused, match=r"^refusing to listen on 0\.0\.0\.0:"):
            endpoints.guard(Exposure("0.0.0.0", *given), exposure.SERVER)


def test_elsewhere_a_short_token_is_refused(files: tuple[Path, Path, Path]) -> None:
    # the metrics port keeps the server's rule: a guessable token is no guard on a network
    token, cert, key = files
    token.write_text("short\n")
    with pytest.raises(BadTokenFile, match=r"holds a token of 5 bytes: a listener on 0\.0\.0\.0"):
        endpoints.guard(Exposure("0.0.0.0", token, cert, key), exposure.SERVER)
    assert endpoints.guard(Exposure("127.0.0.1", token, cert, key), exposure.SERVER).token


def test_a_guarded_port_answers_the_token_only(
    files: tuple[Path, Path, Path], ca: trustme.CA
) -> None:
    guard = endpoints.guard(Exposure("0.0.0.0", *files), exposure.SERVER)
    assert guard.token is not None and guard.tls is not None
    routes = {"/ping": lambda: (200, b"pong", endpoints.TEXT)}
    listener = endpoints.Listener("--ping-addr", ("127.0.0.1", 0), routes, guard)
    listener.start()
    try:
        assert listener.url.startswith("https://127.0.0.1:")
        trusting = ssl.create_default_context()
        ca.configure_trust(trusting)
        with httpx.Client(verify=trusting, timeout=DEADLINE) as client:
            url = f"{listener.url}/ping"
            assert client.get(url).status_code == 401
            answer = client.get(url, headers={"Authorization": f"Bearer {TOKEN}"})
            assert (answer.status_code, answer.text) == (200, "pong")
            missing = client.get(
                f"{listener.url}/other", headers={"Authorization": f"Bearer {TOKEN}"}
            )
            assert missing.status_code == 404
    finally:
        listener.close()


def test_a_taken_port_is_refused_naming_its_flag() -> None:
    first = endpoints.Listener("--ping-addr", ("127.0.0.1", 0), {})
    try:
        port = first.server.server_address[1]
        with pytest.raises(Refused, match=rf"^--ping-addr 127\.0\.0\.1:{port}: "):
            endpoints.Listener("--ping-addr", ("127.0.0.1", port), {})
    finally:
        first.server.server_close()
