"""`vcflow suspend|resume|terminate vcjob NAME...`: send a bus Command to a vcjob, as
`vcctl job suspend` / `resume` do (AbortJob / ResumeJob) and as Volcano's TerminateJob.

The Command is stored owned by the job (so deleting the job removes it); the local runtime
executes and deletes it. Without a running runtime it waits in the store.
"""

from __future__ import annotations

from typing import Annotated

import typer

from vcflow.api.command import command_for
from vcflow.api.errors import NotFound
from vcflow.api.phases import Action
from vcflow.api.vcjob import VCJob
from vcflow.cli import kinds, options
from vcflow.local import statedir

KindArg = Annotated[str, typer.Argument(metavar="KIND", help="vcjob (vj, job).")]
NamesArg = Annotated[list[str], typer.Argument(metavar="NAME")]


def _send(
    ctx: typer.Context, kind: str, job_names: list[str], namespace: str, action: Action, verb: str
) -> None:
    if kinds.resolve(kind) is not kinds.VCJOB:
        raise typer.BadParameter("only vcjobs take this command", param_hint="KIND")
    with statedir.writing(options.state_dir(ctx)) as store:
        for name in dict.fromkeys(job_names):
            try:
                job = store.get(VCJob, namespace, name)
            except NotFound:
                raise kinds.VCJOB.not_found(name) from None
            store.create(command_for(job, action))
            typer.echo(f"{kinds.VCJOB.ref(name)} {verb}")


def suspend(
    ctx: typer.Context,
    kind: KindArg,
    job_names: NamesArg,
    namespace: options.NamespaceOption = options.DEFAULT_NAMESPACE,
) -> None:
    """Suspend vcjobs (AbortJob, as `vcctl job suspend`): pods are killed, phase Aborted."""
    _send(ctx, kind, job_names, namespace, Action.ABORT_JOB, "suspended")


def resume(
    ctx: typer.Context,
    kind: KindArg,
    job_names: NamesArg,
    namespace: options.NamespaceOption = options.DEFAULT_NAMESPACE,
) -> None:
    """Resume suspended vcjobs (ResumeJob, as `vcctl job resume`; counts as a retry)."""
    _send(ctx, kind, job_names, namespace, Action.RESUME_JOB, "resumed")


def terminate(
    ctx: typer.Context,
    kind: KindArg,
    job_names: NamesArg,
    namespace: options.NamespaceOption = options.DEFAULT_NAMESPACE,
) -> None:
    """Terminate vcjobs (TerminateJob): pods are killed, phase Terminated, final."""
    _send(ctx, kind, job_names, namespace, Action.TERMINATE_JOB, "terminated")
