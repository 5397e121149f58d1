"""`vcflow dashboard`: the web dashboard's link, or the dashboard itself over a cluster.

- With `--kubeconfig F [--context C]` (or `--server URL`): serve the dashboard on
  `--address`:`--port` (127.0.0.1:8090) over that Kubernetes API with the user's
  credentials (`dashboard.hosting`), until Ctrl-C; it prints the link that logs in.
- Without: print the login link of the `vcflow server` that runs on the state directory
  (it serves the dashboard at `/`), its token in the URL's fragment; exit 1 with one line
  when none runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from vcflow.api.errors import VcflowError
from vcflow.cli import options, remote
from vcflow.serving.exposure import Exposure
from vcflow.serving.listening import LOOPBACK
from vcflow.serving.logs import LogLevel

PORT = 8090


def dashboard(
    ctx: typer.Context,
    address: Annotated[
        str,
        typer.Option("--address", help="Address to listen on; non-loopback needs a token and TLS."),
    ] = LOOPBACK,
    port: options.PortOption = PORT,
    read_only: Annotated[
        bool, typer.Option("--read-only", help="No Stop, Retry or Resubmit: look only.")
    ] = False,
    token_file: Annotated[
        Path | None,
        typer.Option(
            "--token-file",
            metavar="FILE",
            help="The token a browser logs in with (owner-only file; default: a new one).",
        ),
    ] = None,
    tls_cert: options.TlsCertOption = None,
    tls_key: options.TlsKeyOption = None,
    log_level: options.RequestLogLevelOption = LogLevel.INFO,
) -> None:
    """Open the web dashboard: JobFlows live, their DAGs, logs, Stop/Retry/Resubmit.

    With --kubeconfig (and --context) it serves the dashboard here over that cluster's
    Kubernetes API, with your credentials, until Ctrl-C, and prints the link to open.
    Without, it prints the link of the dashboard the state directory's `vcflow server`
    serves (exit 1 when none runs).
    """
    kubeconfig = ctx.meta.get(remote.KUBECONFIG)
    url = ctx.meta.get(remote.SERVER)
    if not kubeconfig and not url:
        _local_link(ctx, address, port, read_only, token_file, tls_cert, tls_key)
        return
    # (the web stack is loaded only by the commands that serve)
    from vcflow.dashboard import hosting

    found = remote.remote_of(ctx)
    if found is None:  # (not reached: --kubeconfig or --server was given)
        raise VcflowError("vcflow dashboard: give --kubeconfig FILE")
    where = found.kubeconfig or found.url
    hosting.serve(
        hosting.Settings(
            Exposure(address, token_file, tls_cert, tls_key),
            port=port,
            read_only=read_only,
            log_level=log_level.value,
        ),
        found.connect,
        where,
        say=typer.echo,
    )


def _local_link(ctx: typer.Context, *given: object) -> None:
    """The link of the state directory's server; its flags are the server's, not ours."""
    defaults = (LOOPBACK, PORT, False, None, None, None)
    if tuple(given) != defaults:
        raise typer.BadParameter(
            "--address, --port, --read-only, --token-file and --tls-* serve a dashboard over "
            "a cluster: give --kubeconfig FILE (the local server's dashboard takes `vcflow "
            "server`'s flags)",
            param_hint="--kubeconfig",
        )
    state_dir = options.state_dir(ctx)
    server = remote.owning_server(state_dir)
    if server is None:
        raise VcflowError(
            f"vcflow dashboard: no vcflow server runs on {state_dir}: start one (vcflow "
            "server), or give --kubeconfig FILE to serve the dashboard over a cluster"
        )
    if server.token:
        typer.echo(f"vcflow dashboard: open {server.url}/#token={server.token}")
    else:
        typer.echo(f"vcflow dashboard: open {server.url}/")
    if server.ca_file:
        typer.echo(
            f"vcflow dashboard: the server's certificate is signed by {server.ca_file}: "
            "trust it in your browser, or accept the warning"
        )
