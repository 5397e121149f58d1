"""`vcflow dashboard --kubeconfig F`: the dashboard on a port of its own over a cluster's
Kubernetes API (a `KubeStore` with the user's credentials: it reads, watches and acts as
they may), in the `serving` shell `vcflow server` uses — the same exposure rule (loopback
unless a token file and TLS are given, `serving.exposure`), the same connection bounds
(`telemetry.connections`), the same clean stop on SIGTERM/SIGINT (streams end, the store
is closed, exit 0).

The token is made fresh for each run (32 random bytes) unless `--token-file` gives one;
the start line prints the link that logs in with a made token (`#token=...`: a URL
fragment, which browsers never send, so it reaches no server log).
"""

from __future__ import annotations

import secrets
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from vcflow.dashboard import app as dashboard_app
from vcflow.dashboard.logs import ApiLogs
from vcflow.server import credentials
from vcflow.serving import Refused, exposure, listening, logs, shell, tls

if TYPE_CHECKING:
    from vcflow.kubestore import KubeStore

#: `vcflow dashboard`'s flags, as the exposure rule's refusals name them
FLAGS = exposure.Flags(address="--address", does="serve the dashboard")
PORT = 8090


@dataclass(frozen=True)
class Settings:
    address: str = listening.LOOPBACK
    port: int = PORT
    read_only: bool = False
    token_file: Path | None = None
    tls_cert: Path | None = None
    tls_key: Path | None = None
    log_level: str = "info"


def check(settings: Settings) -> str:
    """The token (read from `--token-file`, else made); Refused (one line) when the
    exposure rule does not allow the address, or the files do not load."""
    exposure.check_pair(settings.tls_cert, settings.tls_key, FLAGS)
    logs.check_level(settings.log_level)
    exposure.check(settings.address, settings.token_file, settings.tls_cert, FLAGS)
    if settings.token_file is None:
        return secrets.token_urlsafe(32)
    token = exposure.read_token(settings.token_file)
    exposure.check_strength(token, settings.address, settings.token_file)
    return token


def serve(
    settings: Settings,
    connect: Callable[[], KubeStore],
    where: str,
    say: Callable[[str], None] = print,
) -> None:
    """Serve the dashboard over the store `connect` makes (`where`: what it reaches, for
    the error when it cannot) until SIGTERM/SIGINT."""
    token = check(settings)
    context = None
    if settings.tls_cert is not None and settings.tls_key is not None:
        context = tls.context(settings.tls_cert, settings.tls_key)
    scheme = "https" if context is not None else "http"
    hosts = set(credentials.LOOPBACK_NAMES)
    if settings.address not in listening.WILDCARDS:
        hosts.add(settings.address.strip("[]").lower())
    if settings.tls_cert is not None:
        try:
            hosts |= credentials.names_of(settings.tls_cert)
        except credentials.Unusable as exc:
            raise Refused(
                f"cannot load the TLS certificate {settings.tls_cert}: {exc.why}"
            ) from None
    logs.configure(settings.log_level)
    with connect() as store:
        try:
            store.resource_version()
        except Exception as exc:  # (refused, unreachable, unauthorized: one line)
            raise Refused(f"cannot reach the Kubernetes API of {where}: {_brief(exc)}") from None
        with shell.endpoint(settings.address, settings.port) as endpoint:
            stopping = threading.Event()
            board = dashboard_app.Settings(
                reads=store,
                writes=store,
                logs=ApiLogs(store, stopping),
                stopping=stopping,
                token=token,
                read_only=settings.read_only,
                host=dashboard_app.CLUSTER,
                accepted_hosts=frozenset(hosts),
                scheme=scheme,
            )
            app = dashboard_app.create_app(board)
            server = endpoint.shell(
                app, log_level=settings.log_level, tls=context, stopping=stopping
            )
            url = endpoint.url(scheme)
            try:
                with server.signals_caught():
                    if settings.token_file is None:
                        say(f"vcflow dashboard: open {url}/#token={token}")
                    else:
                        given = settings.token_file
                        say(f"vcflow dashboard: open {url}/ (log in with the token in {given})")
                    sys.stdout.flush()
                    endpoint.serve(server)
            finally:
                stopping.set()
                app.state.dashboard.hub.close()


def _brief(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return (text[:300] + "...") if len(text) > 300 else text or type(exc).__name__
