"""`vcflow logs POD [-c CONTAINER] [-f] [-p] [--tail N] [-n NS]`: a pod's container log, as
kubectl logs prints it, from the pod's directory in the state directory."""

from __future__ import annotations

from typing import Annotated

import typer

from vcflow.cli import options
from vcflow.runtime import logs as podlogs
from vcflow.runtime import podfs

PodArg = Annotated[str, typer.Argument(metavar="POD", help="The pod's name.")]
ContainerOption = Annotated[
    str | None,
    typer.Option("-c", "--container", metavar="NAME", help="Container (default: the first)."),
]
FollowOption = Annotated[
    bool, typer.Option("-f", "--follow", help="Stream the log until the container's run ends.")
]
PreviousOption = Annotated[
    bool, typer.Option("-p", "--previous", help="The previous run's log (after a restart).")
]
TailOption = Annotated[
    int | None, typer.Option("--tail", metavar="N", help="Only the last N lines.")
]


def logs(
    ctx: typer.Context,
    pod: PodArg,
    container: ContainerOption = None,
    follow: FollowOption = False,
    previous: PreviousOption = False,
    tail: TailOption = None,
    namespace: options.NamespaceOption = options.DEFAULT_NAMESPACE,
) -> None:
    """Print the log of a pod's container (stdout and stderr, as written)."""
    pod_dir = options.state_dir(ctx).absolute() / podfs.PODS / namespace / pod
    name = container or podlogs.default_container(pod_dir)
    if follow and not previous:
        for chunk in podlogs.follow(pod_dir, name, tail=tail):
            typer.echo(chunk, nl=False)
        return
    typer.echo(podlogs.read_log(pod_dir, name, previous=previous, tail=tail), nl=False)
