"""`vcflow suspend|resume|terminate vcjob NAME...`: send a bus Command to a vcjob, as
`vcctl job suspend` / `resume` do (AbortJob / ResumeJob) and as Volcano's TerminateJob.

The Command is stored owned by the job (so deleting the job removes it); the local runtime
executes and deletes it. Without a running runtime it waits in the store. A job in a phase
where the command would change nothing (a Terminated job resumed, a Completed one suspended)
gets no Command: one line says why, exit 1 (README "Commands that would do nothing").
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Annotated

import typer

from vcflow.api.command import command_for
from vcflow.api.phases import Action, JobPhase
from vcflow.api.vcjob import VCJob
from vcflow.cli import kinds, options, remote
from vcflow.reconcile.vcjob import lifecycle
from vcflow.store import Store

KindArg = Annotated[str, typer.Argument(metavar="KIND", help="vcjob (vj, job).")]
NamesArg = Annotated[list[str], typer.Argument(metavar="NAME")]


#: What each command can act on, for the line that says it would do nothing.
_CAN = {
    Action.ABORT_JOB: "only a Pending or Running vcjob can be suspended",
    Action.TERMINATE_JOB: "only a Pending or Running vcjob can be terminated",
    Action.RESUME_JOB: "only a suspended vcjob (Aborting or Aborted) can be resumed",
}


def _send(
    ctx: typer.Context, kind: str, job_names: list[str], namespace: str, action: Action, verb: str
) -> None:
    """Send `action` to each job; a missing job, or one in a phase where the command would
    change nothing (`lifecycle.COMMAND_PHASES`), is a problem line and no Command."""
    if kinds.resolve(kind) is not kinds.VCJOB:
        raise typer.BadParameter("only vcjobs take this command", param_hint="KIND")
    with remote.writing(ctx, changes=True) as store:
        send = functools.partial(_send_one, store, action, verb)
        kinds.act_on_each(store, VCJob, namespace, job_names, send)


def _send_one(store: Store, action: Action, verb: str, job: VCJob) -> str:
    """Store `action`'s Command for `job` and say so; or why it would change nothing."""
    if not lifecycle.command_takes_effect(job.phase, action):
        return _does_nothing(job, action, verb)
    store.create(command_for(job, action))
    typer.echo(f"{kinds.VCJOB.ref(job.name)} {verb}")
    return ""


def _does_nothing(job: VCJob, action: Action, verb: str) -> str:
    ref = kinds.VCJOB.ref(job.name)
    if job.phase == JobPhase.RESTARTING:
        return (
            f"{ref} is Restarting: Volcano drops a command sent while a job restarts, so it "
            f"would not be {verb}; try again once it is Pending or Running"
        )
    return f"{ref} is {job.phase or 'new'}: it would not be {verb} ({_CAN[action]})"


def _command(action: Action, verb: str, doc: str) -> Callable[..., None]:
    """The verb that sends `action` to the vcjobs named (`doc`: its help)."""

    def command(
        ctx: typer.Context,
        kind: KindArg,
        job_names: NamesArg,
        namespace: options.NamespaceOption = options.DEFAULT_NAMESPACE,
    ) -> None:
        _send(ctx, kind, job_names, namespace, action, verb)

    command.__doc__ = doc
    return command


suspend = _command(
    Action.ABORT_JOB,
    "suspended",
    "Suspend vcjobs (AbortJob, as `vcctl job suspend`): pods are killed, phase Aborted.",
)
resume = _command(
    Action.RESUME_JOB,
    "resumed",
    "Resume suspended vcjobs (ResumeJob, as `vcctl job resume`; counts as a retry).",
)
terminate = _command(
    Action.TERMINATE_JOB,
    "terminated",
    "Terminate vcjobs (TerminateJob): pods are killed, phase Terminated, final.",
)
