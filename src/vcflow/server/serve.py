"""`vcflow server`'s process: the exposure rule checked first (loopback only, unless a
token file and TLS files are given), then the state directory's controller lock (role
`server`), the credentials (`credentials`: without `--token-file` and `--tls-cert` the
server makes its own token, CA and certificate; `--insecure-no-auth` serves plain HTTP with
neither, loopback only), the control plane (`local.controlplane`) in a background thread,
the API in the `serving.shell` (uvicorn) in the foreground behind the connection bounds of
`telemetry.connections` (read deadlines, a connection cap), and the advert files
(`advertise`) while it serves. The exposure rule, the TLS files, the socket and the log
levels are `serving`'s, as `vcflow webhook` and `vcflow operator` have them.

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

import logging
import os
import pwd
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from vcflow.api import workdir
from vcflow.api.errors import VcflowError
from vcflow.controller.observer import Observer
from vcflow.local import controlplane, statedir
from vcflow.server import advertise, credentials
from vcflow.server.app import Extend, Extensions, Host, create_app
from vcflow.serving import Refused, listening, logs, shell, tls
from vcflow.serving.exposure import Exposure, is_loopback
from vcflow.store.base import Store

log = logging.getLogger("vcflow.server")
INSECURE_WARNING = (
    "WARNING: --insecure-no-auth: plain HTTP and no token; any user of this machine, and any "
    "program of theirs, can create jobs that run as {user}"
)


@dataclass(frozen=True)
class Settings:
    state_dir: Path
    exposure: Exposure = field(default_factory=Exposure)
    port: int = 8700
    runtime: bool = True
    controllers: bool = True
    log_level: str = "info"
    #: serve plain HTTP with no token (loopback only): any local user can then use the API
    insecure_no_auth: bool = False
    #: recorded on the objects written through the API that record none (None: the
    #: current directory)
    working_dir: Path | None = None


def check_exposure(settings: Settings) -> str | None:
    """The token of `--token-file` (None: none given). Refused unless the address is
    loopback, or a token file and TLS are both given (`serving.exposure`);
    `--insecure-no-auth` on loopback only, and with no token."""
    exposed = settings.exposure
    logs.check_level(settings.log_level)
    if settings.insecure_no_auth:
        if exposed.token_file is not None:
            raise Refused("--insecure-no-auth and --token-file contradict each other: give one")
        if not is_loopback(exposed.host):
            raise Refused(
                f"refusing to listen on {exposed.host} with --insecure-no-auth: without "
                f"a token the server listens on loopback only ({listening.LOOPBACK})"
            )
    return exposed.token()


def serve(
    settings: Settings, say: Callable[[str], None] = print, extend: Extend | None = None
) -> None:
    """Run the server until SIGTERM/SIGINT (see the module docstring); `extend` adds
    routes, middleware and views to the app (discovery, OpenAPI, metrics, tables)."""
    token = check_exposure(settings)
    state_dir = statedir.resolve(settings.state_dir).absolute()
    working_dir = _working_dir(settings.working_dir)
    logs.configure(settings.log_level)
    with (
        statedir.opened(state_dir) as store,
        statedir.ControllerLock(state_dir, statedir.SERVER) as lock,
        statedir.opened(state_dir) as reads,  # (reads never wait behind a waiting write)
    ):
        statedir.acquire_for_controller(lock)
        _stamp_working_dir(store, working_dir)
        access = _access(settings, state_dir, token)
        context = None
        if access.cert_file is not None and access.key_file is not None:
            context = tls.context(access.cert_file, access.key_file)
        if settings.insecure_no_auth:
            print(INSECURE_WARNING.format(user=_user()), file=sys.stderr)
        # (the soft file limit raised to the hard one; the connection cap follows from it)
        with shell.endpoint(settings.exposure.host, settings.port) as endpoint:
            stopping = threading.Event()
            url = endpoint.url(access.scheme)
            host = Host(
                store, reads, state_dir, stopping, access.token, access.hosts, access.scheme, url
            )
            more = extend(host) if extend is not None else Extensions()
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
            server = endpoint.shell(
                app, log_level=settings.log_level, tls=context, stopping=stopping
            )
            failed: list[BaseException] = []
            plane = threading.Thread(
                target=_control_plane,
                args=(state_dir, settings, stopping, server, failed, more.observer),
                name="vcflow-control-plane",
                daemon=True,
            )
            advert = advertise.Advert(
                url=url,
                pid=os.getpid(),
                token_file=access.token_file.absolute() if access.token_file else None,
                ca_file=access.ca_file.absolute() if access.ca_file else None,
            )
            try:
                with server.signals_caught():  # (from here on a signal is a clean stop)
                    config_path = advertise.publish(state_dir, advert, access.token)
                    plane.start()
                    say(
                        f"vcflow server: serving {advert.url} (state dir {state_dir}, "
                        f"pid {advert.pid}); kubeconfig {config_path}; working dir {working_dir}"
                    )
                    for note in more.notes:
                        say(note)
                    sys.stdout.flush()
                    endpoint.serve(server)
            finally:
                stopping.set()
                if plane.is_alive():
                    plane.join()
                advertise.withdraw(state_dir, advert.pid)
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


def _control_plane(
    state_dir: Path,
    settings: Settings,
    stopping: threading.Event,
    server: shell.Shell,
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
    given = settings.exposure
    made = credentials.ensure(
        state_dir,
        token=given.token_file is None and not settings.insecure_no_auth,
        tls=given.tls_cert is None and not settings.insecure_no_auth,
    )
    cert = given.tls_cert or made.cert_file
    try:
        hosts = credentials.accepted_hosts(given.host, cert)
    except credentials.Unusable as exc:
        raise Refused(
            f"cannot load the TLS certificate {cert} or key {given.tls_key}: {exc.why}"
        ) from None
    return _Access(
        token=token if token is not None else made.token,
        token_file=given.token_file or made.token_file,
        cert_file=cert,
        key_file=given.tls_key or made.key_file,
        ca_file=given.tls_cert or made.ca_file,  # (a given certificate is its own CA)
        hosts=hosts,
    )


def _user() -> str:
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return f"uid {os.geteuid()}"
