"""`vcflow webhook`'s process: the cluster's client (`--kubeconfig`, else the pod's service
account when in a pod, else the default kubeconfig), the certificates (always TLS,
`serving.tls.Certificates`: re-read when they change), the app in the `serving.shell`
behind the bounds of `telemetry.connections` (`LIMITS`: read deadlines, a connection cap)
until SIGTERM or SIGINT — open reviews get `serving.shell.GRACE` seconds, then it returns —
and SIGHUP as "re-read the certificate now". Called by `cli.webhook`.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vcflow.kubestore import KubeClient, KubeStore
from vcflow.serving import listening, logs, shell
from vcflow.serving.tls import Certificates
from vcflow.telemetry import connections
from vcflow.webhook.app import create_app

log = logging.getLogger("vcflow.webhook")
#: seconds one read of the cluster may take: well inside the API server's webhook
#: timeoutSeconds (10 by default), so a slow cluster is our 500, not its timeout
CLUSTER_TIMEOUT = 5.0
#: the webhook's connection bounds (docs/webhook.md): the API server sends a review at once
#: and waits timeoutSeconds (10 by default) for the answer, so a body not in within that
#: is no review; the API servers' connections are few and reused, and each connection may
#: buffer up to about a MiB before the app reads it, so the cap bounds that memory too
LIMITS = connections.Limits(body_seconds=10.0, most_connections=64)


@dataclass(frozen=True)
class Settings:
    tls_cert: Path
    tls_key: Path
    host: str = listening.LOOPBACK
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


def serve(settings: Settings, say: Callable[[str], None] = print) -> None:
    """Serve until SIGTERM/SIGINT (see the module docstring)."""
    logs.configure(settings.log_level)
    certs = Certificates(settings.tls_cert, settings.tls_key)
    with (
        KubeStore(cluster_client(settings)) as cluster,
        shell.endpoint(settings.host, settings.port, LIMITS) as endpoint,
    ):
        server = endpoint.shell(
            create_app(cluster),
            log_level=settings.log_level,
            tls=certs.context,
            access_log=False,  # (the app logs one line per review)
            hangup=certs.reload,
        )
        with server.signals_caught():
            url = listening.url("https", settings.host, endpoint.sock.getsockname()[1])
            say(f"vcflow webhook: serving {url} (cluster {cluster.url}, pid {os.getpid()})")
            sys.stdout.flush()
            log.info("connections: %s", endpoint.guard.describe())
            endpoint.serve(server)
    log.info("stopped")
