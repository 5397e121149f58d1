"""An ASGI app served by uvicorn on one listening socket until SIGTERM or SIGINT: the bounds
of `telemetry.connections` (read deadlines, a connection cap), the TLS context if any, and a
stop that gives open requests GRACE seconds and then returns, so the caller's own clean-up
(advert files, the control plane) runs and the process exits 0."""

from __future__ import annotations

import contextlib
import signal
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import FrameType
from typing import Any

import uvicorn

from vcflow.serving import listening, signals
from vcflow.telemetry import connections

GRACE = 5  # seconds open requests get to finish at a stop (streams end at once)


class Shell(uvicorn.Server):
    """uvicorn's server whose stop also sets `stopping` (the app's streams end on it), and
    whose `hangup`, if any, SIGHUP calls."""

    def __init__(
        self,
        config: uvicorn.Config,
        stopping: threading.Event | None = None,
        hangup: Callable[[], object] | None = None,
    ) -> None:
        super().__init__(config)
        self.stopping = stopping if stopping is not None else threading.Event()
        self.hangup = hangup

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.stopping.set()
        super().handle_exit(sig, frame)

    @contextlib.contextmanager
    def signals_caught(self) -> Iterator[None]:
        """SIGINT/SIGTERM stop the server (SIGHUP calls `hangup`) also after uvicorn's own
        handlers are gone: uvicorn raises a signal it caught again once it has shut down,
        which would otherwise end the process with it, before the caller's clean-up and
        with no exit 0."""
        handlers = signals.stops(self.handle_exit)
        if self.hangup is not None:
            handlers[signal.SIGHUP] = self._on_hangup
        with signals.caught(handlers):
            yield

    def _on_hangup(self, _sig: int, _frame: FrameType | None) -> None:
        if self.hangup is not None:
            self.hangup()


def shell(
    app: Any,
    guard: connections.Guard,
    *,
    log_level: str,
    tls: ssl.SSLContext | None,
    access_log: bool,
    stopping: threading.Event | None = None,
    hangup: Callable[[], object] | None = None,
) -> Shell:
    """The server of `app` behind `guard`'s bounds, at uvicorn's `log_level`, serving TLS
    with `tls` (None: plain HTTP), one access log line a request if `access_log`."""
    config = uvicorn.Config(
        app,
        log_level=log_level,
        timeout_graceful_shutdown=GRACE,
        lifespan="off",
        access_log=access_log,
        **guard.uvicorn_options(),
    )
    config.load()
    config.ssl = tls  # (uvicorn serves sockets with the context it holds)
    return Shell(config, stopping, hangup)


@dataclass(frozen=True)
class Endpoint:
    """Where one serving process listens: its socket, behind `guard`'s bounds."""

    guard: connections.Guard
    sock: socket.socket
    host: str

    def shell(
        self,
        app: Any,
        *,
        log_level: str,
        tls: ssl.SSLContext | None,
        access_log: bool = True,
        stopping: threading.Event | None = None,
        hangup: Callable[[], object] | None = None,
    ) -> Shell:
        """`shell` for `app` behind this endpoint's guard."""
        return shell(
            app,
            self.guard,
            log_level=log_level,
            tls=tls,
            access_log=access_log,
            stopping=stopping,
            hangup=hangup,
        )

    def url(self, scheme: str) -> str:
        """The URL clients on this machine reach the endpoint at."""
        return listening.local_url(scheme, self.host, self.sock)

    def serve(self, server: Shell) -> None:
        """Run `server` on this endpoint's socket until it stops."""
        server.run(sockets=[self.sock])


@contextlib.contextmanager
def endpoint(host: str, port: int, limits: connections.Limits | None = None) -> Iterator[Endpoint]:
    """Listen on host:port with `limits` (the process's file limit raised first), the
    socket closed at the end; Refused if it cannot listen."""
    guard = connections.guard(limits)
    sock = guard.listener(listening.listen(host, port))
    try:
        yield Endpoint(guard, sock, host)
    finally:
        sock.close()
