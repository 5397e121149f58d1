"""`vcflow webhook`'s process: the cluster's client (`--kubeconfig`, else the pod's service
account when in a pod, else the default kubeconfig), the certificates (`certificates`:
always TLS), the app on uvicorn behind the bounds of `telemetry.connections` (`LIMITS`:
read deadlines, a connection cap) until SIGTERM or SIGINT — open reviews get `GRACE`
seconds, then it returns — and SIGHUP as "re-read the certificate now". Called by
`cli.webhook`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

import uvicorn

from vcflow.api.errors import VcflowError
from vcflow.kubestore import KubeClient, KubeStore
from vcflow.telemetry import connections
from vcflow.webhook.app import create_app
from vcflow.webhook.certificates import Certificates

log = logging.getLogger("vcflow.webhook")
GRACE = 5  # seconds open reviews get to finish at a stop
#: seconds one read of the cluster may take: well inside the API server's webhook
#: timeoutSeconds (10 by default), so a slow cluster is our 500, not its timeout
CLUSTER_TIMEOUT = 5.0
STOPS = (signal.SIGINT, signal.SIGTERM)
#: the webhook's connection bounds (docs/webhook.md): the API server sends a review at once
#: and waits timeoutSeconds (10 by default) for the answer, so a body not in within that
#: is no review; the API servers' connections are few and reused, and each connection may
#: buffer up to about a MiB before the app reads it, so the cap bounds that memory too
LIMITS = connections.Limits(body_seconds=10.0, most_connections=64)


class Refused(VcflowError):
    """A start that cannot listen."""


@dataclass(frozen=True)
class Settings:
    tls_cert: Path
    tls_key: Path
    host: str = "0.0.0.0"
    port: int = 8443
    kubeconfig: Path | None = None
    context: str | None = None
    log_level: str = "info"


def cluster_client(settings: Settings) -> KubeClient:
    """`--kubeconfig` if given; in a pod (KUBERNETES_SERVICE_HOST set) its service account;
    else $KUBECONFIG or ~/.kube/config."""
    if settings.kubeconfig is None and os.environ.get("KUBERNETES_SERVICE_HOST"):
        return KubeClient.in_cluster(timeout=CLUSTER_TIMEOUT)
    path = str(settings.kubeconfig) if settings.kubeconfig is not None else None
    return KubeClient.from_kubeconfig(path, context=settings.context, timeout=CLUSTER_TIMEOUT)


class _Server(uvicorn.Server):
    """uvicorn's server with the webhook's signals: SIGHUP re-reads the certificate."""

    def __init__(self, config: uvicorn.Config, certs: Certificates) -> None:
        super().__init__(config)
        self.certs = certs

    def on_hangup(self, _sig: int, _frame: FrameType | None) -> None:
        self.certs.reload()


def serve(settings: Settings, say: Callable[[str], None] = print) -> None:
    """Serve until SIGTERM/SIGINT (see the module docstring)."""
    logging.basicConfig(
        level=settings.log_level.upper() if settings.log_level != "trace" else "DEBUG",
        format="%(levelname)s: %(message)s",
    )
    certs = Certificates(settings.tls_cert, settings.tls_key)
    guard = connections.guard(LIMITS)
    with KubeStore(cluster_client(settings)) as cluster:
        sock = guard.listener(_listen(settings.host, settings.port))
        config = uvicorn.Config(
            create_app(cluster),
            log_level=settings.log_level,
            timeout_graceful_shutdown=GRACE,
            lifespan="off",
            access_log=False,  # (the app logs one line per review)
            **guard.uvicorn_options(),
        )
        config.load()
        config.ssl = certs.context  # (uvicorn serves sockets with the context it holds)
        server = _Server(config, certs)
        try:
            with _signals_caught(server):
                port = sock.getsockname()[1]
                say(
                    f"vcflow webhook: serving https://{_shown(settings.host)}:{port} "
                    f"(cluster {cluster.url}, pid {os.getpid()})"
                )
                sys.stdout.flush()
                log.info("connections: %s", guard.describe())
                server.run(sockets=[sock])
        finally:
            sock.close()
    log.info("stopped")


@contextlib.contextmanager
def _signals_caught(server: _Server) -> Iterator[None]:
    """Our handlers under uvicorn's: uvicorn raises a stop signal it caught again once it
    has shut down, which would otherwise end the process with it instead of exit 0."""
    previous = {sig: signal.signal(sig, server.handle_exit) for sig in STOPS}
    previous[signal.SIGHUP] = signal.signal(signal.SIGHUP, server.on_hangup)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: a free one)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # (see server.serve)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        raise Refused(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(False)
    return sock


def _shown(host: str) -> str:
    return f"[{host}]" if ":" in host else host
