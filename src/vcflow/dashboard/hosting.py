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
from typing import TYPE_CHECKING

from vcflow.dashboard import app as dashboard_app
from vcflow.dashboard.logs import ApiLogs
from vcflow.server import credentials
from vcflow.serving import Refused, exposure, logs, shell, tls
from vcflow.serving.exposure import Exposure

if TYPE_CHECKING:
    from vcflow.kubestore import KubeStore

#: `vcflow dashboard`'s flags, as the exposure rule's refusals name them
FLAGS = exposure.Flags(address="--address", does="serve the dashboard")
PORT = 8090


@dataclass(frozen=True)
class Settings:
    exposure: Exposure
    port: int = PORT
    read_only: bool = False
    log_level: str = "info"


def check(settings: Settings) -> str:
    """The token (read from `--token-file`, else made); Refused (one line) when the
    exposure rule does not allow the address, or the files do not load."""
    token = settings.exposure.token(FLAGS)
    logs.check_level(settings.log_level)
    return token if token is not None else secrets.token_urlsafe(32)


def serve(
    settings: Settings,
    connect: Callable[[], KubeStore],
    where: str,
    say: Callable[[str], None] = print,
) -> None:
    """Serve the dashboard over the store `connect` makes (`where`: what it reaches, for
    the error when it cannot) until SIGTERM/SIGINT."""
    token = check(settings)
    exposed = settings.exposure
    context = None
    if exposed.tls_cert is not None and exposed.tls_key is not None:
        context = tls.context(exposed.tls_cert, exposed.tls_key)
    scheme = "https" if context is not None else "http"
    try:
        hosts = credentials.accepted_hosts(exposed.host, exposed.tls_cert)
    except credentials.Unusable as exc:
        raise Refused(f"cannot load the TLS certificate {exposed.tls_cert}: {exc.why}") from None
    logs.configure(settings.log_level)
    with connect() as store:
        try:
            store.resource_version()
        except Exception as exc:  # (refused, unreachable, unauthorized: one line)
            raise Refused(f"cannot reach the Kubernetes API of {where}: {_brief(exc)}") from None
        with shell.endpoint(exposed.host, settings.port) as endpoint:
            stopping = threading.Event()
            board = dashboard_app.Settings(
                reads=store,
                writes=store,
                logs=ApiLogs(store, stopping),
                stopping=stopping,
                token=token,
                read_only=settings.read_only,
                host=dashboard_app.CLUSTER,
                accepted_hosts=hosts,
                scheme=scheme,
            )
            app = dashboard_app.create_app(board)
            server = endpoint.shell(
                app, log_level=settings.log_level, tls=context, stopping=stopping
            )
            url = endpoint.url(scheme)
            try:
                with server.signals_caught():
                    if exposed.token_file is None:
                        say(f"vcflow dashboard: open {url}/#token={token}")
                    else:
                        given = exposed.token_file
                        say(f"vcflow dashboard: open {url}/ (log in with the token in {given})")
                    sys.stdout.flush()
                    endpoint.serve(server)
            finally:
                stopping.set()
                app.state.dashboard.hub.close()


def _brief(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return (text[:300] + "...") if len(text) > 300 else text or type(exc).__name__
