"""The server's security model: loopback unless a token and TLS are given, the token file
owner-only, the bearer token on every request but the health checks."""

from __future__ import annotations

import subprocess
from pathlib import Path

from .conftest import DEADLINE, FLOW, Start, server_command


def _refused(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        server_command(tmp_path / "state", "--port", "0", *args),
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )


def _token_file(tmp_path: Path, mode: int = 0o600) -> Path:
    path = tmp_path / "token"
    path.write_text("s3cret-token-of-24-bytes\n")
    path.chmod(mode)
    return path


def test_a_non_loopback_address_is_refused_without_token_and_tls(
    tmp_path: Path, tls: tuple[Path, Path]
) -> None:
    bare = _refused(tmp_path, "--host", "0.0.0.0")
    assert bare.returncode == 1
    assert bare.stderr.splitlines() == [
        "refusing to listen on 0.0.0.0: a non-loopback address needs --token-file and "
        "--tls-cert/--tls-key (or listen on 127.0.0.1)"
    ]
    token_only = _refused(tmp_path, "--host", "0.0.0.0", "--token-file", str(_token_file(tmp_path)))
    assert token_only.returncode == 1 and "refusing to listen" in token_only.stderr
    cert, key = tls
    tls_only = _refused(
        tmp_path, "--host", "0.0.0.0", "--tls-cert", str(cert), "--tls-key", str(key)
    )
    assert tls_only.returncode == 1 and "refusing to listen" in tls_only.stderr
    assert not (tmp_path / "state" / "server.json").exists()


def test_a_token_file_others_can_read_is_refused(tmp_path: Path) -> None:
    loose = _refused(tmp_path, "--token-file", str(_token_file(tmp_path, 0o644)))
    assert loose.returncode == 1
    assert len(loose.stderr.splitlines()) == 1
    assert "too open" in loose.stderr and "chmod 600" in loose.stderr


def test_with_token_and_tls_it_listens_everywhere_and_wants_the_token(
    start_server: Start, tmp_path: Path, tls: tuple[Path, Path]
) -> None:
    cert, key = tls
    token = _token_file(tmp_path)
    server = start_server(
        "--host", "0.0.0.0", "--token-file", str(token), "--tls-cert", str(cert),
        "--tls-key", str(key), "--runtime", "none", "--controllers", "off",
        token="s3cret-token-of-24-bytes",
    )  # fmt: skip
    assert server.url.startswith("https://127.0.0.1:")
    assert server.info["tokenFile"] == str(token) and server.info["caFile"] == str(cert)
    kubeconfig = (server.state_dir / "kubeconfig").read_text()
    assert (
        "token: s3cret-token-of-24-bytes" in kubeconfig
        and (server.state_dir / "kubeconfig").stat().st_mode & 0o077 == 0
    )
    with server.client() as client:
        assert client.get(f"{FLOW}/jobflows").status_code == 200
    with server.client(token="wrong") as wrong:
        answer = wrong.get(f"{FLOW}/jobflows")
        assert answer.status_code == 401
        assert answer.json()["reason"] == "Unauthorized" and answer.json()["kind"] == "Status"
    with server.client(token="") as anonymous:
        assert anonymous.get(f"{FLOW}/jobflows").status_code == 401
        assert anonymous.get("/healthz").status_code == 200
        assert anonymous.get("/readyz").text == "ok"


def test_without_the_token_a_loopback_server_answers_401(
    start_server: Start, tmp_path: Path
) -> None:
    token = _token_file(tmp_path)
    server = start_server(
        "--token-file", str(token), "--runtime", "none", token="s3cret-token-of-24-bytes"
    )
    with server.client(token="") as anonymous:
        answer = anonymous.get(f"{FLOW}/jobflows")
    assert answer.status_code == 401 and answer.json()["code"] == 401
    with server.client() as client:
        assert client.get(f"{FLOW}/jobflows").status_code == 200


def test_unusable_tls_files_and_flags_are_refused_in_one_line(tmp_path: Path) -> None:
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate\n")
    bad = _refused(tmp_path, "--tls-cert", str(junk), "--tls-key", str(junk))
    assert bad.returncode == 1
    assert len(bad.stderr.splitlines()) == 1
    assert bad.stderr.startswith(f"cannot load the TLS certificate {junk} or key {junk}: ")
    half = _refused(tmp_path, "--tls-cert", str(junk))
    assert half.returncode == 1
    assert half.stderr.strip() == "--tls-cert and --tls-key go together: give both or neither"
    assert _refused(tmp_path, "--log-level", "loud").returncode == 2
