"""The listening socket of a serving process, and the URL it is reached at."""

from __future__ import annotations

import socket

from vcflow.serving import Refused

#: where a serving process listens unless told: reachable from this machine only
LOOPBACK = "127.0.0.1"
#: wildcard addresses and the loopback one a client on this machine reaches them at
WILDCARDS = {"0.0.0.0": LOOPBACK, "::": "::1", "": LOOPBACK}
BACKLOG = 128


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: a free one); Refused if it cannot be."""
    sock: socket.socket | None = None
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # accepted sockets inherit it: uvicorn given a socket sets no TCP_NODELAY, and the
        # body written after the headers then waits for the client's delayed ACK (~40 ms)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind(address)
        sock.listen(BACKLOG)
    except OSError as exc:
        if sock is not None:
            sock.close()
        raise Refused(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(False)
    return sock


def url(scheme: str, host: str, port: int) -> str:
    """`scheme://host:port`, an IPv6 address in brackets."""
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}:{port}"


def local_url(scheme: str, host: str, sock: socket.socket) -> str:
    """The URL clients on this machine use for `sock`, listening on `host` (a wildcard
    address is reached on loopback)."""
    return url(scheme, WILDCARDS.get(host, host), sock.getsockname()[1])
