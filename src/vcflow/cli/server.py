"""`vcflow server`: the embedded control plane as a daemon behind the Kubernetes API (see
`server.serve`); its flags, and SIGINT/SIGTERM as a clean stop with exit 0."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from vcflow.cli import options
from vcflow.cli.options import PortOption
from vcflow.serving.exposure import Exposure
from vcflow.serving.listening import LOOPBACK
from vcflow.serving.logs import LogLevel


class OnOff(StrEnum):
    ON = "on"
    OFF = "off"


class DashboardChoice(StrEnum):
    ON = "on"
    OFF = "off"
    READ_ONLY = "read-only"


class RuntimeChoice(StrEnum):
    LOCAL = "local"
    NONE = "none"


def server(
    ctx: typer.Context,
    state_dir: Annotated[
        Path | None,
        typer.Option(
            "--state-dir", metavar="DIR", help="State directory (default: the global one)."
        ),
    ] = None,
    host: Annotated[
        str,
        typer.Option("--host", help="Address to listen on; non-loopback needs a token and TLS."),
    ] = LOOPBACK,
    port: PortOption = 8700,
    runtime: Annotated[
        RuntimeChoice, typer.Option("--runtime", help="Run pods here (local) or not (none).")
    ] = RuntimeChoice.LOCAL,
    controllers: Annotated[
        OnOff, typer.Option("--controllers", help="Run the JobFlow/JobTemplate controllers.")
    ] = OnOff.ON,
    token_file: Annotated[
        Path | None,
        typer.Option(
            "--token-file", metavar="FILE", help="Bearer token clients must send (owner-only file)."
        ),
    ] = None,
    tls_cert: options.TlsCertOption = None,
    tls_key: options.TlsKeyOption = None,
    log_level: options.RequestLogLevelOption = LogLevel.INFO,
    working_dir: Annotated[
        Path | None,
        typer.Option(
            "--working-dir",
            metavar="DIR",
            help="Where containers with no workingDir start (and a relative one is resolved "
            "from), for the objects written through the API that record no directory "
            "(kubectl's): recorded on them as vcflow.io/working-dir. Default: the directory "
            "the server starts in.",
        ),
    ] = None,
    insecure_no_auth: Annotated[
        bool,
        typer.Option(
            "--insecure-no-auth",
            help="Plain HTTP, no token (loopback only): any local user can use the API.",
        ),
    ] = False,
    dashboard: Annotated[
        DashboardChoice,
        typer.Option(
            "--dashboard",
            help="Serve the web dashboard at / (read-only: without its Stop, Retry and "
            "Resubmit); `vcflow dashboard` prints its login link.",
        ),
    ] = DashboardChoice.ON,
) -> None:
    """Serve the state directory over the Kubernetes API until SIGINT/SIGTERM.

    Store, controllers and local runtime in one process; kubectl (with the kubeconfig it
    writes), the Kubernetes clients and curl talk to it. It holds the state directory's
    controller lock. A stop leaves running pods running; the next start adopts them.

    Without --token-file and --tls-cert it makes its own token, CA and certificate in
    <state dir>/serving/ (owner-only) and writes them into <state dir>/kubeconfig.

    JobFlows, JobTemplates and vcjobs created through it (kubectl apply) run their
    containers in the server's working directory (--working-dir, default: where it starts)
    unless they name one, as `vcflow apply` records the directory it runs in.

    The web dashboard is at / (--dashboard off: none); `vcflow dashboard` prints a link
    that logs in with the server's token.
    """
    # (the web stack is loaded only by the commands that serve)
    from vcflow.dashboard import mount
    from vcflow.server import compat
    from vcflow.server.app import Extensions, Host
    from vcflow.server.serve import Settings, serve

    runs_pods = runtime is RuntimeChoice.LOCAL

    def extend(host: Host) -> Extensions:
        found = compat.extend(host, runs_pods=runs_pods)
        return found.joined(mount.extend(host, mount.Mode(dashboard.value)))

    serve(
        Settings(
            state_dir=state_dir if state_dir is not None else options.state_dir(ctx),
            exposure=Exposure(host, token_file, tls_cert, tls_key),
            port=port,
            runtime=runtime is RuntimeChoice.LOCAL,
            controllers=controllers is OnOff.ON,
            log_level=log_level.value,
            insecure_no_auth=insecure_no_auth,
            working_dir=working_dir,
        ),
        extend=extend,
    )
