"""`--server` (VCFLOW_SERVER) that is no http(s) URL is a usage error naming it; a port that
answers something other than HTTP is one line saying so, exit 1, no traceback."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner, Result

from vcflow.cli.app import app


def vcflow(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(app, list(args), env=env)


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("127.0.0.1:8700", "is not an http(s) URL"),
        ("notaurl", "is not an http(s) URL"),
        ("ftp://example.com", "is not an http(s) URL"),
        ("https://", "is not an http(s) URL"),
        ("http://[::1", "is not a URL (Invalid IPv6 URL)"),
        ("http://127.0.0.1:99999", "is not a URL (Port out of range 0-65535)"),
    ],
    ids=["no-scheme", "a-word", "ftp", "no-host", "bad-ipv6", "port-range"],
)
def test_a_server_that_is_no_url_is_a_usage_error(url: str, why: str) -> None:
    for result in (
        vcflow("--server", url, "get", "jf"),
        vcflow("apply", "-f", "-", env={"VCFLOW_SERVER": url}),
    ):
        assert result.exit_code == 2, result.output
        assert f'"{url}" {why}: give one such as https://127.0.0.1:8700' in result.stderr
        assert "Warning" not in result.stderr  # (urllib3's FutureWarning, two lines)
        assert "internal error" not in result.stderr


@pytest.fixture
def banner_port() -> Iterator[int]:
    """A port that greets as an SSH server does and closes."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    done = threading.Event()

    def serve() -> None:
        while not done.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    done.set()
    thread.join()
    listener.close()


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_a_port_that_is_not_http_is_one_line(banner_port: int, scheme: str) -> None:
    url = f"{scheme}://127.0.0.1:{banner_port}"
    result = vcflow("--server", url, "get", "jf")
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    if scheme == "http":
        assert lines == [f"the server {url} does not answer HTTP (is the port right?)"]
    else:
        assert lines[0].startswith(f"cannot connect to the server {url}: SSLError [SSL: ")
