"""`vcflow stop jobflow NAME`: ask the controllers to stop a flow (compatibility rows 7, 11).

Sets the annotation `vcflow.io/stop` (its value: when it was asked, RFC 3339) with an
ordinary update. The JobFlow controller then deletes the flow's vcjobs (phase
Terminating) and ends it Failed; after that `delete` is allowed. A flow that has finished
with nothing left running is not stopped: one line says so, exit 1.
"""

from __future__ import annotations

import functools
from typing import Annotated

import typer

from vcflow.api import clock, names
from vcflow.api.jobflow import JobFlow
from vcflow.api.phases import FINISHED_JOB_PHASES, FlowPhase
from vcflow.api.vcjob import VCJob
from vcflow.cli import kinds, options, patch, remote
from vcflow.reconcile import jobs as jobbuild
from vcflow.reconcile.flow import STOP_ANNOTATION
from vcflow.store import Store


def stop(
    ctx: typer.Context,
    kind: Annotated[str, typer.Argument(metavar="KIND", help="jobflow (jf).")],
    names: Annotated[list[str], typer.Argument(metavar="NAME")],
    namespace: options.NamespaceOption = options.DEFAULT_NAMESPACE,
) -> None:
    """Stop JobFlows: their vcjobs are deleted (phase Terminating), then they end Failed.

    Sets the annotation vcflow.io/stop. A stopped flow can then be deleted. The controllers
    run in-process until settled, unless a `vcflow controller` runs them.
    """
    if kinds.resolve(kind) is not kinds.JOBFLOW:
        raise typer.BadParameter("only jobflows can be stopped", param_hint="KIND")
    stamp = clock.rfc3339(clock.SystemClock().now())
    with remote.writing(ctx) as store:
        stop_one = functools.partial(_stop_one, store, stamp)
        kinds.act_on_each(store, JobFlow, namespace, names, stop_one)


def _stop_one(store: Store, stamp: str, flow: JobFlow) -> str:
    """Ask the controllers to stop `flow` (once: a stop asked before keeps its time) and
    say so; or why stopping it would change nothing."""
    why = nothing_to_stop(store, flow)
    if why:
        return why
    if STOP_ANNOTATION not in flow.metadata.annotations:
        body = {"metadata": {"annotations": {STOP_ANNOTATION: stamp}}}
        patch.apply_patch(store, kinds.JOBFLOW, flow.namespace, flow.name, body, status=False)
    typer.echo(f"{kinds.JOBFLOW.ref(flow.name)} stopping")
    return ""


def nothing_to_stop(store: Store, flow: JobFlow) -> str:
    """Why stopping `flow` would change nothing, or `""`: a flow that Succeed, or one that
    Failed with none of its vcjobs left unfinished (a Failed flow's running jobs are what a
    stop is for: it deletes them)."""
    ref = kinds.JOBFLOW.ref(flow.name)
    if flow.phase == FlowPhase.SUCCEED:
        return f"{ref} has already finished (Succeed): there is nothing to stop"
    if flow.phase == FlowPhase.FAILED and not _unfinished_jobs(store, flow):
        return (
            f"{ref} has already finished (Failed) and none of its vcjobs is unfinished: "
            "there is nothing to stop"
        )
    return ""


def _unfinished_jobs(store: Store, flow: JobFlow) -> list[str]:
    selector = {names.LABEL_CREATED_BY_FLOW: names.created_by_value(flow.namespace, flow.name)}
    jobs = store.list(VCJob, flow.namespace, label_selector=selector)
    return [
        job.name
        for job in jobs
        if jobbuild.is_owned_by(job, flow) and job.phase not in FINISHED_JOB_PHASES
    ]
