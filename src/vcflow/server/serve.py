"""`vcflow server`'s process: the exposure rule checked first (loopback only, unless a
token file and TLS files are given), then the state directory's controller lock (role
`server`), the credentials (`credentials`: without `--token-file` and `--tls-cert` the
server makes its own token, CA and certificate; `--insecure-no-auth` serves plain HTTP with
neither, loopback only), the control plane (`local.controlplane`) in a background thread,
the API on uvicorn in the foreground behind the connection bounds of
`telemetry.connections` (read deadlines, a connection cap), and the advert files
(`advertise`) while it serves.

On SIGTERM or SIGINT it stops accepting, ends the watch and log streams, stops the control
plane without terminating pods (they run on, detached, and the next start adopts them),
removes the advert files and returns. Called by `cli.server`.

Objects its API writes that record no working directory (`api.workdir`: kubectl has no way to
send one) get the server's — its start directory unless `--working-dir` names another —
stamped as they are created or updated, not filled in by its runtime when a pod starts: as
`vcflow apply` records the directory it ran in, the annotation shows where the pods will
run (`kubectl get -o yaml`), and it stays with the object whoever runs it later (a server
started elsewhere, a `vcflow run`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import pwd
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

from vcflow.api import workdir
from vcflow.api.errors import VcflowError
from vcflow.controller.observer import Observer
from vcflow.local import controlplane, statedir
from vcflow.server import advertise, credentials
from vcflow.server.app import Extend, Extensions, create_app
from vcflow.store.base import Store
from vcflow.telemetry import connections
from vcflow.telemetry.exposure import check_strength, is_loopback, read_token

log = logging.getLogger("vcflow.server")
GRACE = 5.0  # seconds open requests get to finish at a stop (streams end at once)
SIGNALS = (signal.SIGINT, signal.SIGTERM)
LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")
WILDCARDS = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}
INSECURE_WARNING = (
    "WARNING: --insecure-no-auth: plain HTTP and no token; any user of this machine, and any "
    "program of theirs, can create jobs that run as {user}"
)


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
    #: serve plain HTTP with no token (loopback only): any local user can then use the API
    insecure_no_auth: bool = False
    #: recorded on the objects written through the API that record none (None: the
    #: current directory)
    working_dir: Path | None = None


def check_exposure(settings: Settings) -> None:
    """Refused unless the address is loopback, or a token file and TLS are both given."""
    if (settings.tls_cert is None) != (settings.tls_key is None):
        raise Refused("--tls-cert and --tls-key go together: give both or neither")
    if settings.log_level not in LOG_LEVELS:
        raise Refused(f"--log-level {settings.log_level!r}: one of {', '.join(LOG_LEVELS)}")
    if settings.insecure_no_auth:
        if settings.token_file is not None:
            raise Refused("--insecure-no-auth and --token-file contradict each other: give one")
        if not is_loopback(settings.host):
            raise Refused(
                f"refusing to listen on {settings.host} with --insecure-no-auth: without "
                "a token the server listens on loopback only (127.0.0.1)"
            )
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
    if token is not None:
        check_strength(token, settings.host, settings.token_file)
    state_dir = statedir.resolve(settings.state_dir).absolute()
    working_dir = _working_dir(settings.working_dir)
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
        _stamp_working_dir(store, working_dir)
        access = _access(settings, state_dir, token)
        if settings.insecure_no_auth:
            print(INSECURE_WARNING.format(user=_user()), file=sys.stderr)
        # (the soft file limit raised to the hard one; the connection cap follows from it)
        guard = connections.guard()
        sock = guard.listener(_listen(settings.host, settings.port))
        stopping = threading.Event()
        more = extend(reads, state_dir) if extend is not None else Extensions()
        app = create_app(
            store,
            state_dir=state_dir,
            token=access.token,
            extra_routes=more.routes,
            middleware=more.middleware,
            views=more.views,
            watch_views=more.watch_views,
            stopping=stopping,
            reads=reads,
            accepted_hosts=access.hosts,
            scheme=access.scheme,
        )
        config = uvicorn.Config(
            app,
            log_level=settings.log_level,
            ssl_certfile=str(access.cert_file) if access.cert_file else None,
            ssl_keyfile=str(access.key_file) if access.key_file else None,
            timeout_graceful_shutdown=int(GRACE),
            lifespan="off",
            access_log=True,
            **guard.uvicorn_options(),
        )
        try:
            config.load()
        except (ssl.SSLError, OSError) as exc:
            sock.close()
            raise Refused(
                f"cannot load the TLS certificate {access.cert_file} or key "
                f"{access.key_file}: {exc}"
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
            url=_url(settings.host, access.scheme, sock),
            pid=os.getpid(),
            token_file=access.token_file.absolute() if access.token_file else None,
            ca_file=access.ca_file.absolute() if access.ca_file else None,
        )
        try:
            with _signals_caught(server):  # (from here on a signal is a clean stop)
                config_path = advertise.publish(state_dir, advert, access.token)
                plane.start()
                say(
                    f"vcflow server: serving {advert.url} (state dir {state_dir}, "
                    f"pid {advert.pid}); kubeconfig {config_path}; working dir {working_dir}"
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


def _working_dir(given: Path | None) -> Path:
    """The directory recorded on the objects the API writes: `given` (absolute), else the
    current one; Refused if it is not a directory."""
    try:
        found = (given if given is not None else Path.cwd()).absolute()
        is_dir = found.is_dir()
    except OSError as exc:  # (the current directory removed, a path too long)
        raise Refused(f"--working-dir: {exc.strerror or exc}") from None
    if not is_dir:
        raise Refused(f"--working-dir {given}: not a directory")
    return found


def _stamp_working_dir(store: Store, directory: Path) -> None:
    """The API's store records `directory` on the objects it creates or updates that
    record no working directory (`workdir.defaulting`, after each kind's own defaults);
    the control plane's store, which creates vcjobs from flows, copies the flow's."""
    for info in store.kinds.all():
        if info.kind in workdir.KINDS:
            defaulter = workdir.defaulting(str(directory), info.defaulter)
            store.register_kind(info.model, defaulter=defaulter)


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


def _url(host: str, scheme: str, sock: socket.socket) -> str:
    """The URL clients on this machine use (a wildcard address is reached on loopback)."""
    port = sock.getsockname()[1]
    host = WILDCARDS.get(host, host)
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}:{port}"


@dataclass(frozen=True)
class _Access:
    """What a client needs and is let in with: the token (None: none asked), the TLS files
    (None: plain HTTP), the CA clients verify with, and the names accepted in `Host`."""

    token: str | None
    token_file: Path | None
    cert_file: Path | None
    key_file: Path | None
    ca_file: Path | None
    hosts: frozenset[str]

    @property
    def scheme(self) -> str:
        return "https" if self.cert_file is not None else "http"


def _access(settings: Settings, state_dir: Path, token: str | None) -> _Access:
    """The given token and TLS files, and `credentials` made for what is not given (unless
    `--insecure-no-auth`)."""
    made = credentials.ensure(
        state_dir,
        token=settings.token_file is None and not settings.insecure_no_auth,
        tls=settings.tls_cert is None and not settings.insecure_no_auth,
    )
    cert = settings.tls_cert or made.cert_file
    hosts = set(credentials.LOOPBACK_NAMES)
    if settings.host not in WILDCARDS:
        hosts.add(settings.host.strip("[]").lower())
    if cert is not None:
        try:
            hosts |= credentials.names_of(cert)
        except credentials.Unusable as exc:
            raise Refused(
                f"cannot load the TLS certificate {cert} or key {settings.tls_key}: {exc.why}"
            ) from None
    return _Access(
        token=token if token is not None else made.token,
        token_file=settings.token_file or made.token_file,
        cert_file=cert,
        key_file=settings.tls_key or made.key_file,
        ca_file=settings.tls_cert or made.ca_file,  # (a given certificate is its own CA)
        hosts=frozenset(hosts),
    )


def _user() -> str:
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return f"uid {os.geteuid()}"
