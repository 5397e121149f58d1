"""`vcflow webhook`: the cluster's validating admission webhook (see `webhook.serve`); its
flags, and SIGINT/SIGTERM as a clean stop with exit 0."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from vcflow.cli import options
from vcflow.cli.options import PortOption
from vcflow.serving.listening import LOOPBACK
from vcflow.serving.logs import LogLevel


def webhook(
    ctx: typer.Context,
    tls_cert: Annotated[
        Path,
        typer.Option(
            "--tls-cert", metavar="FILE", help="TLS certificate (PEM); re-read when it changes."
        ),
    ],
    tls_key: Annotated[
        Path, typer.Option("--tls-key", metavar="FILE", help="TLS private key (PEM).")
    ],
    host: Annotated[
        str,
        typer.Option("--host", help="Address to listen on (in a pod: 0.0.0.0, for the Service)."),
    ] = LOOPBACK,
    port: PortOption = 8443,
    kubeconfig: options.InClusterKubeconfigOption = None,
    context: options.KubeContextOption = None,
    log_level: Annotated[
        LogLevel, typer.Option("--log-level", help="info logs one line per review.")
    ] = LogLevel.INFO,
) -> None:
    """Answer kube-apiserver's AdmissionReviews for JobFlows and JobTemplates over HTTPS.

    POST /validate-jobflow and /validate-jobtemplate (CREATE, UPDATE, DELETE) with the
    rules, messages and warnings vcflow applies embedded; GET /healthz and /readyz. The
    certificate is re-read at the first handshake after its files change, and on SIGHUP.
    """
    from vcflow.webhook.serve import Settings, serve  # (the web stack: only when serving)

    kubeconfig, context = options.in_cluster_target(ctx, kubeconfig, context)
    serve(
        Settings(
            tls_cert=tls_cert,
            tls_key=tls_key,
            host=host,
            port=port,
            kubeconfig=Path(kubeconfig) if kubeconfig else None,
            context=context,
            log_level=log_level.value,
        )
    )
