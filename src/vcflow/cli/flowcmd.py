"""`vcflow retry jobflow NAME` and `vcflow resubmit jobflow NAME` (docs/flow-features.md §5).

Each is one write the controllers carry out, crash-safe like every other write:
- retry sets the annotation `vcflow.io/retry` (a JSON request with a unique id) and lifts
  `vcflow.io/stop`, in one update of a `Failed` flow; the JobFlow controller resets the
  entries that failed or were skipped (and, with `--restart-successful`, completed ones) and
  records the request in `status.lastRetry`;
- resubmit creates a new JobFlow with the same spec (`--name`, else `<name>-` and five random
  characters), annotated `vcflow.io/resubmitted-from`; `-p NAME=VALUE` changes an argument's
  value in the copy.
The writes are `controller.userrequests`', which the dashboard's Retry and Resubmit share.
"""

from __future__ import annotations

import shlex
from typing import Annotated

import typer

from vcflow.api import clock
from vcflow.cli import kinds, options, remote
from vcflow.controller import userrequests
from vcflow.local import statedir

KindArg = Annotated[str, typer.Argument(metavar="KIND", help="jobflow (jf).")]
NameArg = Annotated[str, typer.Argument(metavar="NAME")]


def retry(
    ctx: typer.Context,
    kind: KindArg,
    name: NameArg,
    restart_successful: Annotated[
        bool,
        typer.Option(
            "--restart-successful",
            help="Also run Completed entries again: those --entries names (and what follows "
            "them), else all of them.",
        ),
    ] = False,
    entries: Annotated[
        str | None,
        typer.Option(
            "--entries",
            metavar="A,B",
            help="With --restart-successful: the Completed entries to run again.",
        ),
    ] = None,
    namespace: options.NamespaceOption = options.DEFAULT_NAMESPACE,
) -> None:
    """Run a Failed JobFlow again from where it failed.

    Its failed and skipped entries are reset and run again, entries that never ran run, and
    Completed ones are kept (upstream work is never re-run). Embedded, with no controller
    running the state directory, run it here with `vcflow run` (every unfinished flow).
    """
    _jobflow(kind)
    named = [e.strip() for e in entries.split(",") if e.strip()] if entries else None
    if named and not restart_successful:
        raise typer.BadParameter(
            "--entries names Completed entries to run again: give --restart-successful with it",
            param_hint="--entries",
        )
    with remote.writing(ctx, changes=True) as store:
        said = userrequests.retry(
            store,
            namespace,
            name,
            clock.SystemClock().now(),
            restart_successful=restart_successful,
            entries=named,
        )
        typer.echo(f"{said}{_run_hint(ctx)}")


def resubmit(
    ctx: typer.Context,
    kind: KindArg,
    name: NameArg,
    new_name: Annotated[
        str | None,
        typer.Option("--name", metavar="NEW", help="The new flow's name (default: NAME-xxxxx)."),
    ] = None,
    namespace: options.NamespaceOption = options.DEFAULT_NAMESPACE,
    argument: options.ArgumentsOption = None,
) -> None:
    """Create a new JobFlow with the same spec as NAME, which is left as it is.

    `-p NAME=VALUE` changes an argument's value in the new flow only. Embedded, with no
    controller running the state directory, run it here with `vcflow run` (every
    unfinished flow)."""
    _jobflow(kind)
    given = options.arguments(argument)
    with remote.writing(ctx, changes=True) as store:
        created = userrequests.resubmit(store, namespace, name, new_name=new_name, arguments=given)
        typer.echo(f"{kinds.JOBFLOW.ref(created.name)} created{_run_hint(ctx)}")


def _run_hint(ctx: typer.Context) -> str:
    """`; run it with: vcflow run` when nothing runs the flow: embedded, and no controller,
    run or server holds the state directory (the writer's own reconcile creates its vcjobs,
    but no pod runs without `vcflow run`). A `--state-dir` given is repeated in it."""
    if remote.is_remote(ctx):
        return ""
    state_dir = options.state_dir(ctx)
    if statedir.runs_here(state_dir):
        return ""
    root = ctx.find_root()
    source = root.get_parameter_source("state_dir")
    given = source is not None and source.name == "COMMANDLINE"  # (not VCFLOW_STATE_DIR)
    where = f"--state-dir {shlex.quote(str(state_dir))} " if given else ""
    return f"; run it with: vcflow {where}run"


def _jobflow(kind: str) -> None:
    if kinds.resolve(kind) is not kinds.JOBFLOW:
        raise typer.BadParameter("only jobflows can be retried or resubmitted", param_hint="KIND")
