"""`vcflow logs POD [-c CONTAINER] [-f] [-p] [--tail N] [-n NS]`: a pod's container log, as
kubectl logs prints it, from the pod's directory in the state directory.

POD is a name or kubectl's `pod/NAME` (`pods/`, `po/`); another kind is a usage error. A pod
with no log — not launched yet, or one that failed to launch — is explained from its status
in the store (its reason and message), not reported as missing.
"""

from __future__ import annotations

from typing import Annotated, NoReturn

import typer

from vcflow.api.errors import NotFound
from vcflow.api.pod import Pod
from vcflow.cli import kinds, options
from vcflow.local import statedir
from vcflow.runtime import logs as podlogs
from vcflow.runtime import podfs

PodArg = Annotated[
    str, typer.Argument(metavar="POD", help="The pod's name, or pod/NAME as kubectl takes it.")
]
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
    name = pod_name(pod)
    pod_dir = options.state_dir(ctx).absolute() / podfs.PODS / namespace / name
    if not podlogs.container_names(pod_dir):
        _no_logs(ctx, namespace, name)
    chosen = container or podlogs.default_container(pod_dir)
    if follow and not previous:
        for chunk in podlogs.follow(pod_dir, chosen, tail=tail):
            typer.echo(chunk, nl=False)
        return
    typer.echo(podlogs.read_log(pod_dir, chosen, previous=previous, tail=tail), nl=False)


def pod_name(text: str) -> str:
    """The pod named by `NAME` or `pod/NAME`; a usage error for another kind."""
    kind, slash, name = text.partition("/")
    if not slash:
        return text
    try:
        resolved = kinds.resolve(kind)
    except typer.BadParameter:
        raise typer.BadParameter(f'unknown kind "{kind}" in "{text}"', param_hint="POD") from None
    if resolved is not kinds.POD:
        message = f'"{text}" is not a pod: only pods have logs (vcflow get pods lists them)'
        raise typer.BadParameter(message, param_hint="POD")
    if not name or "/" in name:
        raise typer.BadParameter(f'"{text}": give pod/NAME', param_hint="POD")
    return name


def _no_logs(ctx: typer.Context, namespace: str, name: str) -> NoReturn:
    """Why a pod has no log: not in the store, failed to launch, or not started yet."""
    with statedir.reading(options.state_dir(ctx)) as store:
        try:
            found = store.get(Pod, namespace, name)
        except NotFound:
            raise kinds.POD.not_found(name) from None
    status = found.status
    if status is not None and status.reason:
        detail = f": {status.message}" if status.message else ""
        raise podlogs.LogsError(
            f'pod "{name}" has no logs: it failed to start ({status.reason}){detail}'
        )
    phase = found.phase or "Pending"
    raise podlogs.LogsError(f'pod "{name}" has no logs yet: it is {phase} and has not started')
