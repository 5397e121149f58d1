"""`vcflow logs POD [-c CONTAINER] [-f] [-p] [--tail N] [--timestamps] [--since DURATION |
--since-time TIME] [--attempt N] [--attempts] [-n NS]`: a pod's container log, as kubectl
logs prints it, from the pod's directory in the state directory — or from the logs kept of
its earlier attempts (`runtime.loghistory`: the pods of that name that ran before, deleted
by RestartJob, an interrupted run, a rerun).

POD is a name or kubectl's `pod/NAME` (`pods/`, `po/`); `jobflow/NAME` (`jf/`) and
`vcjob/NAME` (`vj/`, `job/`) print the log of every pod of the flow or job (`grouplogs`):
in flow order, each line prefixed `[pod/NAME/CONTAINER] ` (`--prefix`, on by default for
more than one pod), and with `-f` followed until the flow or job ends, its new pods too.
`-p` is the run before the current one: an in-place restart of this pod, else the last run
of its previous attempt. `--attempt N` reads attempt N (1 = the first, -1 the latest),
`--attempts` lists them. A pod that has not started, or failed to launch, is explained from
its status in the store (its reason and message), not reported as missing; a pod removed
from the store shows its latest attempt.

`--timestamps` puts each line's time in front of it, as kubectl does
(`2026-12-01T23:00:00.123456789Z line`; after the `[pod/NAME/CONTAINER] ` prefix);
`--since 5m` (a Go duration) and `--since-time` (RFC 3339) leave out the lines before. The
times come from the log's time index (`podserver.logtimes`): the pod server notes a log's
size with the time every 0.2 s while it grows, so a line's time is when the pod server
first saw it — at most 0.2 s after it was written. Lines written since its last look, and
every line of a log from before vcflow kept the index, have the log's modification time.
Through a server, `--since` goes as kubectl sends it: whole seconds (at least 1).

Only the pod's own log files are read: POD and the namespace must be names Kubernetes would
take (no `/`, no `..`), and a log is read from its directory under the state directory by
name, never through a link (`runtime.podlog`, which the server's log route shares).
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Annotated

import typer

from vcflow.api.errors import NotFound, StoreError
from vcflow.api.pod import Pod
from vcflow.cli import grouplogs, kinds, options, output, remote
from vcflow.kubeapi import logrefusal
from vcflow.runtime import logs as podlogs
from vcflow.runtime import podlog
from vcflow.runtime.loghistory import Attempt
from vcflow.store.base import Store

PodArg = Annotated[
    str,
    typer.Argument(
        metavar="POD",
        help="The pod's name, or pod/NAME as kubectl takes it; jobflow/NAME or vcjob/NAME: "
        "every pod of the flow or job.",
    ),
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
PrefixOption = Annotated[
    bool | None,
    typer.Option(
        "--prefix/--no-prefix",
        help="Prefix each line with [pod/NAME/CONTAINER] (default: for more than one pod).",
        show_default=False,
    ),
]
TimestampsOption = Annotated[
    bool,
    typer.Option(
        "--timestamps",
        help="Put each line's time in front of it (RFC3339 with nanoseconds; the time the "
        "pod server first saw the line: at most 0.2 s late).",
    ),
]
SinceOption = Annotated[
    str | None,
    typer.Option(
        "--since",
        metavar="DURATION",
        help="Only the lines newer than this (5s, 2m, 3h), by the times --timestamps shows.",
        show_default=False,
    ),
]
SinceTimeOption = Annotated[
    str | None,
    typer.Option(
        "--since-time",
        metavar="TIME",
        help="Only the lines of this RFC3339 time (2026-12-01T23:00:00Z) or later.",
        show_default=False,
    ),
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
    prefix: PrefixOption = None,
    timestamps: TimestampsOption = False,
    since: SinceOption = None,
    since_time: SinceTimeOption = None,
    namespace: options.NamespaceOption = options.DEFAULT_NAMESPACE,
) -> None:
    """Print the log of a pod's container (stdout and stderr, as written), or of every pod
    of jobflow/NAME or vcjob/NAME."""
    times = grouplogs.times(timestamps, since, since_time)
    name = target_of(pod)
    if isinstance(name, grouplogs.Owner):
        if previous or attempt is not None or list_attempts:
            raise typer.BadParameter("-p, --attempt and --attempts take one pod", param_hint="POD")
        grouplogs.group_logs(ctx, name, namespace, container, follow, tail, prefix, times)
        return
    podlog.check_names(namespace, name)
    server = remote.remote_of(ctx)
    # (the state directory's own server: its attempts are listed from the directory here)
    if server is not None and not (list_attempts and not remote.names_a_server(ctx)):
        if list_attempts:
            raise podlogs.LogsError(
                "--attempts reads the state directory; the server's API does not list "
                "attempts (use --attempt N)"
            )
        wanted = _Wanted(container, follow, previous, tail, attempt, times)
        _remote_logs(server, namespace, name, wanted)
        return
    state_dir = options.state_dir(ctx).absolute()
    with remote.reading(ctx) as store:
        try:
            stored: Pod | None = store.get(Pod, namespace, name)
        except NotFound:
            stored = None
    request = podlog.LogRequest(namespace, name, container, previous, tail, attempt, times)
    try:
        if list_attempts:
            found, unstarted = podlog.every_attempt(state_dir, namespace, name, stored)
            output.table(ATTEMPT_HEADERS, [_attempt_row(a) for a in found + unstarted], sys.stdout)
            return
        chosen = podlog.choose(state_dir, request, stored)
    except NotFound:
        raise kinds.POD.not_found(name) from None
    if follow and not previous and chosen.live:
        for chunk in podlog.stream(state_dir, chosen, tail, times=times):
            typer.echo(chunk, nl=False)
        return
    typer.echo(podlog.read(state_dir, request, chosen), nl=False)


@dataclasses.dataclass(frozen=True)
class _Wanted:
    container: str | None
    follow: bool
    previous: bool
    tail: int | None
    attempt: int | None
    times: podlog.Times


_BAD_REQUEST = "Error from server (BadRequest): "


def _remote_logs(server: remote.Remote, namespace: str, name: str, wanted: _Wanted) -> None:
    """The log through the server's `pods/NAME/log`, written as it comes."""
    out = sys.stdout.buffer
    with server.connect() as store:
        try:
            for chunk in store.pod_log(
                namespace,
                name,
                container=wanted.container,
                follow=wanted.follow,
                tail=wanted.tail,
                previous=wanted.previous,
                attempt=wanted.attempt,
                **grouplogs.query(wanted.times),
            ):
                out.write(chunk)
                out.flush()
        except NotFound:
            raise kinds.POD.not_found(name) from None
        except StoreError as exc:  # the server's own words, as embedded prints them
            said = str(exc).removeprefix(_BAD_REQUEST)
            if logrefusal.SERVER_FAILED.match(said):  # (the kubelet could not be reached)
                said = logrefusal.explained(said, _pod_or_none(store, namespace, name))
            raise podlogs.LogsError(said) from None
        except KeyboardInterrupt:
            raise typer.Exit(130) from None


def _pod_or_none(store: Store, namespace: str, name: str) -> Pod | None:
    try:
        return store.get(Pod, namespace, name)
    except StoreError:
        return None


def _attempt_row(attempt: Attempt) -> list[str]:
    status = attempt.status
    statuses = [
        *(status.get("initContainerStatuses") or []),
        *(status.get("containerStatuses") or []),
    ]
    restarts = sum(int(c.get("restartCount") or 0) for c in statuses)
    label = f"{attempt.number} (current)" if attempt.current else str(attempt.number)
    return [
        label,
        str(status.get("phase") or "Pending"),
        str(restarts),
        str(status.get("startTime") or "-"),
        _finished(attempt),
        attempt.uid or "-",
    ]


def _finished(attempt: Attempt) -> str:
    """When the attempt ended (its containers' last end); for the current attempt that only
    once its pod has ended (an init container's end is not the pod's), `running` while its
    pod runs, `-` before it starts."""
    ended = str(attempt.record.get("finishedAt") or "-")
    if not attempt.current:
        return ended
    phase = attempt.status.get("phase")
    if phase == "Running":
        return "running"
    return ended if phase in ("Succeeded", "Failed") else "-"


def target_of(text: str) -> str | grouplogs.Owner:
    """The pod named by `NAME` or `pod/NAME`, or the flow or job of `jobflow/NAME` or
    `vcjob/NAME`; a usage error for another kind."""
    word, slash, name = text.partition("/")
    if not slash:
        return text
    try:
        kind = kinds.resolve(word)
    except typer.BadParameter:
        raise typer.BadParameter(f'unknown kind "{word}" in "{text}"', param_hint="POD") from None
    if kind not in (kinds.POD, kinds.JOBFLOW, kinds.VCJOB):
        message = f'"{text}" has no logs: give a pod, jobflow/NAME or vcjob/NAME'
        raise typer.BadParameter(message, param_hint="POD")
    if not name or "/" in name:
        raise typer.BadParameter(f'"{text}": give {kind.singular}/NAME', param_hint="POD")
    return name if kind is kinds.POD else grouplogs.Owner(kind, name)
