"""`vcflow stop jobflow NAME`: ask the controllers to stop a flow (compatibility rows 7, 11).

Sets the annotation `vcflow.io/stop` (its value: when it was asked, RFC 3339) with an
ordinary update (`controller.userrequests`, which the dashboard's Stop shares). The JobFlow
controller then deletes the flow's vcjobs (phase Terminating) and ends it Failed; after
that `delete` is allowed. A flow that has finished with nothing left running is not
stopped: one line says so, exit 1.
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Annotated

import typer

from vcflow.api import clock
from vcflow.api.jobflow import JobFlow
from vcflow.cli import kinds, options, remote
from vcflow.controller import userrequests
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
    now = clock.SystemClock().now()
    with remote.writing(ctx, changes=True) as store:
        stop_one = functools.partial(_stop_one, store, now)
        kinds.act_on_each(store, JobFlow, namespace, names, stop_one)


def _stop_one(store: Store, now: datetime, flow: JobFlow) -> str:
    """Ask the controllers to stop `flow` (`userrequests.stop`) and say so; or why stopping
    it would change nothing."""
    try:
        said = userrequests.stop(store, flow, now)
    except userrequests.Refused as exc:
        return str(exc)
    typer.echo(said)
    return ""
