"""`vcflow server`'s process: the exposure rule checked first (loopback only, unless a
token file and TLS files are given), then the state directory's controller lock (role
`server`), the control plane (`local.controlplane`) in a background thread, the API on
uvicorn in the foreground, and the advert files (`advertise`) while it serves.

On SIGTERM or SIGINT it stops accepting, ends the watch and log streams, stops the control
plane without terminating pods (they run on, detached, and the next start adopts them),
removes the advert files and returns. Called by `cli.server`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import ssl
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

import uvicorn

from vcflow.api.errors import VcflowError
from vcflow.controller.observer import Observer
from vcflow.local import controlplane, statedir
from vcflow.server import advertise
from vcflow.server.app import Extend, Extensions, create_app
from vcflow.telemetry.exposure import is_loopback, read_token

log = logging.getLogger("vcflow.server")
GRACE = 5.0  # seconds open requests get to finish at a stop (streams end at once)
SIGNALS = (signal.SIGINT, signal.SIGTERM)
LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")


class Refused(VcflowError):
    """A start the security model does not allow, or that cannot listen."""


@dataclass(frozen=True)
class Settings:
    state_dir: Path
    host: str = "127.0.0.1"
    port: int = 8700
    runtime: bool = True
    controllers: bool = True
    token_file: Path | None = None
    tls_cert: Path | None = None
    tls_key: Path | None = None
    log_level: str = "info"


def check_exposure(settings: Settings) -> None:
    """Refused unless the address is loopback, or a token file and TLS are both given."""
    if (settings.tls_cert is None) != (settings.tls_key is None):
        raise Refused("--tls-cert and --tls-key go together: give both or neither")
    if settings.log_level not in LOG_LEVELS:
        raise Refused(f"--log-level {settings.log_level!r}: one of {', '.join(LOG_LEVELS)}")
    if is_loopback(settings.host):
        return
    if settings.token_file is None or settings.tls_cert is None:
        raise Refused(
            f"refusing to listen on {settings.host}: a non-loopback address needs "
            "--token-file and --tls-cert/--tls-key (or listen on 127.0.0.1)"
        )


class _Server(uvicorn.Server):
    """uvicorn's server, whose stop also ends the app's streams (`stopping`)."""

    def __init__(self, config: uvicorn.Config, stopping: threading.Event) -> None:
        super().__init__(config)
        self.stopping = stopping

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.stopping.set()
        super().handle_exit(sig, frame)


def serve(
    settings: Settings, say: Callable[[str], None] = print, extend: Extend | None = None
) -> None:
    """Run the server until SIGTERM/SIGINT (see the module docstring); `extend` adds
    routes, middleware and views to the app (discovery, OpenAPI, metrics, tables)."""
    check_exposure(settings)
    token = read_token(settings.token_file) if settings.token_file is not None else None
    state_dir = statedir.resolve(settings.state_dir).absolute()
    logging.basicConfig(
        level=settings.log_level.upper() if settings.log_level != "trace" else "DEBUG",
        format="%(levelname)s: %(message)s",
    )
    with (
        statedir.opened(state_dir) as store,
        statedir.ControllerLock(state_dir, statedir.SERVER) as lock,
        statedir.opened(state_dir) as reads,  # (reads never wait behind a waiting write)
    ):
        statedir.acquire_for_controller(lock)
        sock = _listen(settings.host, settings.port)
        stopping = threading.Event()
        more = extend(reads, state_dir) if extend is not None else Extensions()
        app = create_app(
            store,
            state_dir=state_dir,
            token=token,
            extra_routes=more.routes,
            middleware=more.middleware,
            views=more.views,
            watch_views=more.watch_views,
            stopping=stopping,
            reads=reads,
        )
        config = uvicorn.Config(
            app,
            log_level=settings.log_level,
            ssl_certfile=str(settings.tls_cert) if settings.tls_cert else None,
            ssl_keyfile=str(settings.tls_key) if settings.tls_key else None,
            timeout_graceful_shutdown=int(GRACE),
            lifespan="off",
            access_log=True,
        )
        try:
            config.load()
        except (ssl.SSLError, OSError) as exc:
            sock.close()
            raise Refused(
                f"cannot load the TLS certificate {settings.tls_cert} or key "
                f"{settings.tls_key}: {exc}"
            ) from None
        server = _Server(config, stopping)
        failed: list[BaseException] = []
        plane = threading.Thread(
            target=_control_plane,
            args=(state_dir, settings, stopping, server, failed, more.observer),
            name="vcflow-control-plane",
            daemon=True,
        )
        advert = advertise.Advert(
            url=_url(settings, sock),
            pid=os.getpid(),
            token_file=settings.token_file.absolute() if settings.token_file else None,
            ca_file=settings.tls_cert.absolute() if settings.tls_cert else None,
        )
        try:
            with _signals_caught(server):  # (from here on a signal is a clean stop)
                config_path = advertise.publish(state_dir, advert, token)
                plane.start()
                say(
                    f"vcflow server: serving {advert.url} (state dir {state_dir}, "
                    f"pid {advert.pid}); kubeconfig {config_path}"
                )
                sys.stdout.flush()
                server.run(sockets=[sock])
        finally:
            stopping.set()
            if plane.is_alive():
                plane.join()
            advertise.withdraw(state_dir, advert.pid)
            sock.close()
        if failed:
            raise VcflowError(f"the control plane failed: {failed[0]}")


@contextlib.contextmanager
def _signals_caught(server: _Server) -> Iterator[None]:
    """SIGINT/SIGTERM stop the server also after uvicorn's own handlers are gone: uvicorn
    raises a signal it caught again once it has shut down, which would otherwise end the
    process before the advert files are removed."""
    previous = {sig: signal.signal(sig, server.handle_exit) for sig in SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _control_plane(
    state_dir: Path,
    settings: Settings,
    stopping: threading.Event,
    server: uvicorn.Server,
    failed: list[BaseException],
    observer: Observer | None,
) -> None:
    """The controllers and the runtime on a store of their own (their own connection:
    the HTTP routes' writes are seen by polling, as another process's are)."""
    parts = controlplane.Parts.of_this_machine(
        controllers=settings.controllers, runtime=settings.runtime, observer=observer
    )
    try:
        with statedir.opened(state_dir) as store:
            controlplane.run(store, state_dir, parts, stopping.is_set)
    except BaseException as exc:  # the server cannot go on without it: stop, exit 1
        log.exception("the control plane failed")
        failed.append(exc)
        stopping.set()
        server.should_exit = True


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: a free one)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # accepted sockets inherit it: uvicorn given a socket sets no TCP_NODELAY, and the
        # body written after the headers then waits for the client's delayed ACK (~40 ms)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        raise Refused(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(False)
    return sock


def _url(settings: Settings, sock: socket.socket) -> str:
    """The URL clients on this machine use (a wildcard address is reached on loopback)."""
    port = sock.getsockname()[1]
    host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(settings.host, settings.host)
    shown = f"[{host}]" if ":" in host else host
    scheme = "https" if settings.tls_cert is not None else "http"
    return f"{scheme}://{shown}:{port}"
