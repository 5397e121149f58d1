"""`vcflow logs POD [-c CONTAINER] [-f] [-p] [--tail N] [--attempt N] [--attempts] [-n NS]`:
a pod's container log, as kubectl logs prints it, from the pod's directory in the state
directory — or from the logs kept of its earlier attempts (`runtime.loghistory`: the pods of
that name that ran before, deleted by RestartJob, an interrupted run, a rerun).

POD is a name or kubectl's `pod/NAME` (`pods/`, `po/`); another kind is a usage error.
`-p` is the run before the current one: an in-place restart of this pod, else the last run
of its previous attempt. `--attempt N` reads attempt N (1 = the first, -1 the latest),
`--attempts` lists them. A pod that has not started, or failed to launch, is explained from
its status in the store (its reason and message), not reported as missing; a pod removed
from the store shows its latest attempt.

Only the pod's own log files are read: POD and the namespace must be names Kubernetes would
take (no `/`, no `..`), and a log is read from its directory under the state directory by
name, never through a link (`runtime.ownership.check_beneath`, `logs.open_log`).
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from vcflow.api import names
from vcflow.api.errors import InvalidName, NotFound
from vcflow.api.pod import Pod
from vcflow.cli import kinds, options, output
from vcflow.local import statedir
from vcflow.runtime import logs as podlogs
from vcflow.runtime import ownership, podfs
from vcflow.runtime.loghistory import Attempt, attempts

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
    bool,
    typer.Option(
        "-p",
        "--previous",
        help="The run before: after an in-place restart, or the previous attempt's last run.",
    ),
]
TailOption = Annotated[
    int | None, typer.Option("--tail", metavar="N", help="Only the last N lines.")
]
AttemptOption = Annotated[
    int | None,
    typer.Option(
        "--attempt",
        metavar="N",
        help="Attempt N of the pod (1 = the first, -1 = the latest); see --attempts.",
    ),
]
AttemptsOption = Annotated[
    bool, typer.Option("--attempts", help="List the pod's attempts whose logs are kept.")
]
ATTEMPT_HEADERS = ("attempt", "phase", "restarts", "started", "finished", "uid")


def logs(
    ctx: typer.Context,
    pod: PodArg,
    container: ContainerOption = None,
    follow: FollowOption = False,
    previous: PreviousOption = False,
    tail: TailOption = None,
    attempt: AttemptOption = None,
    list_attempts: AttemptsOption = False,
    namespace: options.NamespaceOption = options.DEFAULT_NAMESPACE,
) -> None:
    """Print the log of a pod's container (stdout and stderr, as written)."""
    name = pod_name(pod)
    _check_names(namespace, name)
    state_dir = options.state_dir(ctx).absolute()
    found = attempts(state_dir, namespace, name)
    unstarted = _unstarted(ctx, namespace, name, found)
    if unstarted and found and found[-1].current:  # an ended pod its successor will replace
        found[-1] = dataclasses.replace(found[-1], current=False)
    found += unstarted
    if list_attempts:
        rows = [_attempt_row(a) for a in found]
        output.table(ATTEMPT_HEADERS, rows, sys.stdout)
        return
    chosen = podlogs.pick_attempt(found, attempt, name)
    if chosen in unstarted and not previous:
        _no_logs(ctx, namespace, name)
    picked = container or chosen.default_container
    if picked is None:
        raise podlogs.LogsError(f'pod "{name}" not found')
    podlogs.check_container(chosen, picked, name)
    if follow and not previous and chosen.current:
        _check_directory(state_dir, chosen.directory)
        for chunk in podlogs.follow(chosen.directory, picked, tail=tail):
            typer.echo(chunk, nl=False)
        return
    where = (state_dir, namespace, name)
    typer.echo(_read(where, unstarted, chosen.number, picked, previous, tail), nl=False)


def _read(
    where: tuple[Path, str, str],
    unstarted: list[Attempt],
    number: int,
    container: str,
    previous: bool,
    tail: int | None,
) -> bytes:
    """The log of `container` in attempt `number` (or the run before it); found again if it
    was moved (kept) while it was being read."""
    name = where[2]
    for _ in range(2):
        found = attempts(*where) + unstarted
        chosen = next((a for a in found if a.number == number), None)
        path = podlogs.run_log(found, chosen, container, previous=previous) if chosen else None
        if path is None:
            break
        try:
            _check_directory(where[0], path.parent)
            return podlogs.read_path(path, tail)
        except FileNotFoundError:
            continue
    if previous:
        raise podlogs.LogsError(
            f'previous terminated container "{container}" in pod "{name}" not found'
        )
    return b""


def _check_names(namespace: str, name: str) -> None:
    """InvalidName unless both are names Kubernetes takes (they become paths)."""
    for what, value, problems in (
        ("namespace", namespace, names.dns1123_label_errors(namespace)),
        ("pod name", name, names.dns1123_subdomain_errors(name)),
    ):
        if problems or "\n" in value:
            why = "; ".join(problems) or "it holds a line break"
            raise InvalidName(f"invalid {what} {value!r}: {why}")


def _check_directory(state_dir: Path, directory: Path) -> None:
    """LogsError unless `directory` is a real directory of this user under `state_dir`
    (no link on the way: a log is read only where vcflow keeps it)."""
    try:
        ownership.check_beneath(str(state_dir), str(directory))
    except ownership.Unsafe as exc:
        raise podlogs.LogsError(f"the log is not read: {exc}") from None
    except FileNotFoundError:
        pass  # (moved while being read: found again by the caller)


def _unstarted(
    ctx: typer.Context, namespace: str, name: str, found: list[Attempt]
) -> list[Attempt]:
    """The store's pod of that name as the latest attempt when it has not been launched (it
    is none of those `found`; the pod directory may still hold the pod it replaces, which
    ended): no log, its containers from its spec. [] if the store has it launched, or has
    no pod of that name (NotFound if nothing is known of it)."""
    with statedir.reading(options.state_dir(ctx)) as store:
        try:
            stored = store.get(Pod, namespace, name)
        except NotFound:
            if not found:
                raise kinds.POD.not_found(name) from None
            return []
    uid = stored.metadata.uid
    if any(a.uid == uid for a in found):
        return []
    spec = stored.spec
    mains = [c.name or "" for c in (spec.containers or [])] if spec else []
    inits = [c.name or "" for c in (spec.init_containers or [])] if spec else []
    record = {
        "uid": uid,
        "containers": [*inits, *mains],
        "defaultContainer": mains[0] if mains else None,
        "status": stored.status.to_dict() if stored.status else {},
    }
    number = found[-1].number + 1 if found else 1
    pod_dir = options.state_dir(ctx).absolute() / podfs.PODS / namespace / name
    return [Attempt(number, pod_dir, record, current=True)]


def _attempt_row(attempt: Attempt) -> list[str]:
    status = attempt.status
    statuses = [
        *(status.get("initContainerStatuses") or []),
        *(status.get("containerStatuses") or []),
    ]
    restarts = sum(int(c.get("restartCount") or 0) for c in statuses)
    finished = attempt.record.get("finishedAt") if not attempt.current else None
    label = f"{attempt.number} (current)" if attempt.current else str(attempt.number)
    return [
        label,
        str(status.get("phase") or "Pending"),
        str(restarts),
        str(status.get("startTime") or "-"),
        str(finished or "-"),
        attempt.uid or "-",
    ]


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
