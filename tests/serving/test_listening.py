"""The listening socket (`serving.listening`): bound where asked, a free port for 0, not
inherited by children, TCP_NODELAY for the accepted sockets; a taken port refused in one
line; the URL a client on this machine uses."""

from __future__ import annotations

import socket

import pytest

from vcflow.serving import Refused, listening


def test_a_free_port_on_loopback() -> None:
    with listening.listen("127.0.0.1", 0) as sock:
        host, port = sock.getsockname()
        assert host == "127.0.0.1" and port > 0
        assert not sock.get_inheritable()
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        with socket.create_connection((host, port), timeout=5):
            pass


def test_a_taken_port_is_refused_in_one_line() -> None:
    with listening.listen("127.0.0.1", 0) as taken:
        port = taken.getsockname()[1]
        with pytest.raises(Refused) as refused:
            listening.listen("127.0.0.1", port)
    assert str(refused.value) == f"cannot listen on 127.0.0.1:{port}: Address already in use"


def test_urls() -> None:
    assert listening.url("https", "::1", 8443) == "https://[::1]:8443"
    assert listening.url("http", "127.0.0.1", 80) == "http://127.0.0.1:80"
    with listening.listen("127.0.0.1", 0) as sock:
        port = sock.getsockname()[1]
        assert listening.local_url("https", "0.0.0.0", sock) == f"https://127.0.0.1:{port}"
        assert listening.local_url("http", "127.0.0.1", sock) == f"http://127.0.0.1:{port}"
