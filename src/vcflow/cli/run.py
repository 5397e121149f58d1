"""`vcflow run -f PATH... [-p NAME=VALUE] [--validate MODE] [--timeout S] [--capacity LIST]
[--fail-fast] [--no-live]`: apply,
then run the controllers and the local runtime in this process (`local.session.LocalRun`)
until every applied JobFlow (and vcjob applied alone) has ended and no pod process of theirs
is left. Only the flows the manifests name run: others in the state directory (one `vcflow
resubmit` made) are left as they are, for a run that names them (`vcflow get jf NAME -o
yaml | vcflow run -f -`) or for `vcflow run` without `-f`, which runs every flow (and vcjob
applied alone) of the state directory that has not ended.

It holds `<state dir>/controller.lock` for the whole run (a second `vcflow run` or a
`vcflow controller` on the same state directory is refused): only one process runs the
controllers and the pods of a state directory. Pods run detached, so a crashed run loses
nothing: running `vcflow run -f` again applies (`unchanged`), adopts the pods still
running and goes on. Ctrl-C (or SIGTERM) terminates the running pods and exits 130.

Exit status: 0 when every flow Succeed (and every vcjob run alone Completed), 1 otherwise
(a flow Failed, or `--timeout`), 130 when interrupted.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from vcflow.api.jobflow import JobFlow
from vcflow.api.vcjob import VCJob
from vcflow.cli import apply as apply_cmd
from vcflow.cli import options, remote, signals
from vcflow.kubeapi import fieldvalidation
from vcflow.local import manifests, running
from vcflow.local.following import Follow
from vcflow.local.progress import FLOW_ENDED, JOB_ENDED, SUSPENDED, Progress
from vcflow.local.result import RunResult
from vcflow.local.session import LocalRun, Options
from vcflow.podserver import logrotate
from vcflow.runtime.run import Ending
from vcflow.store import DB_FILE, SqliteStore

if TYPE_CHECKING:
    from rich.live import Live

    from vcflow.cli.runview import LiveView

REFRESH = 0.25  # seconds between live-view refreshes
WAITING_REFRESH = 1.0  # seconds between reads of the flows' waiting reasons (live view)


def _timeout(value: float | None) -> float | None:
    if value is not None and not value > 0:
        raise typer.BadParameter(f"{value:g} is not a number of seconds > 0")
    return value


TimeoutOption = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        metavar="S",
        callback=_timeout,
        help="Give up (terminating the pods) after S seconds.",
    ),
]
CapacityOption = Annotated[
    str | None,
    options.capacity_option(
        "The machine's capacity for gang scheduling, e.g. cpu=8,memory=16Gi,"
        "nvidia.com/gpu=2 (default: this host's CPUs and memory, and its GPUs as "
        "nvidia-smi -L lists them)."
    ),
]
FailFastOption = Annotated[
    bool,
    typer.Option(
        "--fail-fast",
        help="When a flow fails, terminate its jobs still running (default: wait for them "
        "and record how they end; nothing new starts either way).",
    ),
]


def _log_files(value: int | None) -> int | None:
    if value is not None and value < logrotate.MIN_MAX_FILES:
        raise typer.BadParameter(f"{value} is less than {logrotate.MIN_MAX_FILES}")
    return value


LogSizeOption = Annotated[
    str | None,
    typer.Option(
        "--container-log-max-size",
        metavar="SIZE",
        callback=options.parsed_by(logrotate.parse_size, ValueError),
        help="Rotate a container's log once it is larger (default 10Mi, as the kubelet).",
    ),
]
LogFilesOption = Annotated[
    int | None,
    typer.Option(
        "--container-log-max-files",
        metavar="N",
        callback=_log_files,
        help="Log files kept per container run, the current one included (default 5).",
    ),
]
LiveOption = Annotated[
    bool,
    typer.Option(
        "--live/--no-live",
        help="Live view of the flows (only on a terminal); else one line per phase change.",
    ),
]


RunFilenameOption = Annotated[
    list[str] | None,
    options.filename_option(
        "Manifest file, directory of manifests (not recursive) or - for stdin; "
        "repeatable. Without it: every flow (and vcjob applied alone) of the state "
        "directory that has not ended."
    ),
]


def run(
    ctx: typer.Context,
    filename: RunFilenameOption = None,
    timeout: TimeoutOption = None,
    capacity: CapacityOption = None,
    fail_fast: FailFastOption = False,
    live: LiveOption = True,
    log_max_size: LogSizeOption = None,
    log_max_files: LogFilesOption = None,
    namespace: options.ApplyNamespaceOption = None,
    argument: options.ArgumentsOption = None,
    field_validation: options.ValidateOption = "strict",
) -> None:
    """Apply manifests and run their JobFlows (and vcjobs) here until each has ended.

    The controllers and the local runtime run in this process (it holds the controller
    lock); jobs run as local processes. A flow that fails while some of its jobs still run
    waits for them (--fail-fast terminates them). Exit 0 when every flow Succeed, 1
    otherwise, 130 on Ctrl-C (the running pods are terminated). Run it again after a crash
    to resume.

    Only the flows the manifests name run; to run another flow of the state directory (one
    `vcflow resubmit` made): vcflow get jf NAME -o yaml | vcflow run -f -, or `vcflow run`
    without -f: every flow (and vcjob applied alone) of the state directory not ended.
    `-p NAME=VALUE` gives a flow argument's value (with -f), written into the stored flow.
    A field vcflow does not know is an error (--validate=warn makes it a warning).
    """
    if not filename:
        if argument:
            raise typer.BadParameter(
                "arguments are given to the flows of manifests: give -f with it (a stored "
                "flow keeps the values it has)",
                param_hint="-p",
            )
        _run_stored(ctx, timeout, capacity, fail_fast, live, log_max_size, log_max_files)
        return
    validation = options.validation(field_validation)
    loaded = manifests.load(filename, options.arguments(argument), validation)
    options.place(loaded, namespace)
    loaded.raise_if_invalid()
    loaded.require_objects("run")
    running.runnable(loaded.objects)
    state_dir = options.state_dir(ctx)
    server = remote.remote_of(ctx)
    if server is not None:
        _follow_remote(server, loaded, state_dir, validation, timeout=timeout, live=live)
        return
    settings = running.options(
        capacity,
        timeout=timeout,
        fail_fast=fail_fast,
        log_limits=running.log_limits(log_max_size, log_max_files),
    )
    with running.holding(state_dir) as store:
        flows, jobs = running.targets(apply_cmd.apply_and_report(store, loaded, validation))
        result = _run_collected(store, state_dir, flows, jobs, settings, live=live)
    _report(result, timeout)


def _run_stored(
    ctx: typer.Context,
    timeout: float | None,
    capacity: str | None,
    fail_fast: bool,
    live: bool,
    log_max_size: str | None,
    log_max_files: int | None,
) -> None:
    """`vcflow run` without -f: what the state directory holds that has not ended — its
    flows, and its vcjobs no flow owns — run here, as if their manifests were given."""
    if remote.remote_of(ctx) is not None:
        raise typer.BadParameter("give the manifests to run on a server", param_hint="-f")
    state_dir = options.state_dir(ctx)
    settings = running.options(
        capacity,
        timeout=timeout,
        fail_fast=fail_fast,
        log_limits=running.log_limits(log_max_size, log_max_files),
    )
    if not (state_dir / DB_FILE).is_file():
        # as a reading command: a state directory without a store holds nothing to run,
        # and none is made (a mistyped --state-dir, or a run in the wrong directory)
        typer.echo(f"nothing to run: {state_dir} holds no flow or vcjob (apply some, or give -f)")
        return
    with running.holding(state_dir) as store:
        flows = [f for f in store.list(JobFlow) if f.phase not in FLOW_ENDED]
        jobs = [
            j
            for j in store.list(VCJob)
            if j.phase not in JOB_ENDED or j.phase in SUSPENDED
            if (ref := j.metadata.controller_ref()) is None or ref.kind != "JobFlow"
        ]
        if not flows and not jobs:
            typer.echo("nothing to run: every flow and vcjob of the state directory has ended")
            return
        result = _run_collected(store, state_dir, flows, jobs, settings, live=live)
    _report(result, timeout)


def _run_collected(
    store: SqliteStore,
    state_dir: Path,
    flows: list[JobFlow],
    jobs: list[VCJob],
    settings: Options,
    *,
    live: bool,
) -> RunResult:
    """`_run` of the flows and vcjobs either way of `vcflow run` collected, with the
    collector paused as `_run_gc` does."""
    with _run_gc():
        return _run(store, state_dir, flows, jobs, settings, live=live)


def _report(result: RunResult, timeout: float | None) -> None:
    """The closing table and notes of a local run; exits with its code."""
    from vcflow.cli import runview

    runview.report(result, sys.stdout)
    if result.ending is Ending.INTERRUPTED:
        typer.echo(f"interrupted: terminated {result.terminated} running pods", err=True)
    elif result.ending is Ending.TIMEOUT:
        typer.echo(
            f"timeout: the flows did not finish within {timeout:g}s; "
            f"terminated {result.terminated} running pods",
            err=True,
        )
    raise typer.Exit(result.exit_code)


def _follow_remote(
    server: remote.Remote,
    loaded: manifests.Manifests,
    state_dir: Path,
    validation: fieldvalidation.Validation,
    *,
    timeout: float | None,
    live: bool,
) -> None:
    """`run -f` against a server: apply there, then follow the flows its controllers run
    (live view, final table, exit code). Ctrl-C or `--timeout` stop the following only:
    the flows go on in the server."""
    with server.connect() as store:
        flows, jobs = running.targets(apply_cmd.apply_and_report(store, loaded, validation))
        progress, view, live_view = _progress_view(flows, jobs, live=live, stamped=True)

        def tick() -> None:
            if live_view is not None:
                live_view.update(view.render(), refresh=True)

        follow = Follow(store, progress, state_dir, timeout=timeout)
        with signals.stop_on_signals() as stop, live_view or nullcontext():
            result = follow.run(stop=stop, on_tick=tick)
    from vcflow.cli import runview

    runview.report(result, sys.stdout)
    where = f"in the server ({store.url}); `vcflow get jobflows` shows them"
    if result.ending is Ending.INTERRUPTED:
        typer.echo(f"interrupted: stopped following; the flows go on {where}", err=True)
    elif result.ending is Ending.TIMEOUT:
        typer.echo(
            f"timeout: the flows did not finish within {timeout:g}s; they go on {where}",
            err=True,
        )
    raise typer.Exit(result.exit_code)


def _progress_view(
    flows: list[JobFlow], jobs: list[VCJob], *, live: bool, stamped: bool = False
) -> tuple[Progress, LiveView, Live | None]:
    """What a run shows: the live view on a terminal (when asked for), else a line per
    change; the same for a local run and for one followed on a server."""
    # (rich is loaded only by the runs that show a view: not `--help`, `get`, `version`...)
    from rich.console import Console
    from rich.live import Live

    from vcflow.cli import runview

    console = Console()
    use_live = live and console.is_terminal

    def said(what: str, phase: str, seconds: float) -> None:
        typer.echo(runview.change_line(what, phase, seconds))

    progress = Progress(flows, jobs, on_change=None if use_live else said, stamped=stamped)
    view = runview.LiveView(progress, lambda: console.size.height)
    live_view = Live(view.render(), console=console, auto_refresh=False) if use_live else None
    return progress, view, live_view


@contextmanager
def _run_gc() -> Iterator[None]:
    """The cyclic GC tuned for the run loop, as it was after. What start-up built (the
    manifests, the applied objects) lives for the whole run: frozen out of the collector's
    sight, full collections walk only what the run makes. The loop makes many short-lived
    acyclic objects: young collections every 10,000 allocations, not 700 (see
    docs/benchmarks.md)."""
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


def _run(
    store: SqliteStore,
    state_dir: Path,
    flows: list[JobFlow],
    jobs: list[VCJob],
    run_options: Options,
    *,
    live: bool,
) -> RunResult:
    progress, view, live_view = _progress_view(flows, jobs, live=live)

    def note(text: str) -> None:
        """A notice: under the live view, drawn at once (the stop's grace wait draws nothing
        else); else a line on stderr."""
        if live_view is None:
            typer.echo(text, err=True)
            return
        view.note(text)
        live_view.update(view.render(), refresh=True)

    session = LocalRun(store, state_dir, progress, run_options, note=note)
    last = {"drawn": 0.0, "waiting": 0.0}

    def tick() -> None:
        if live_view is None:
            return
        now = progress.now()
        if now - last["waiting"] >= WAITING_REFRESH:
            last["waiting"] = now
            session.refresh_waiting()
        if now - last["drawn"] >= REFRESH:
            last["drawn"] = now
            live_view.update(view.render(), refresh=True)

    with signals.stop_on_signals() as stop, live_view if live_view is not None else nullcontext():
        result = session.run(stop=stop, on_tick=tick)
        if live_view is not None:
            live_view.update(view.render(), refresh=True)
    return result
