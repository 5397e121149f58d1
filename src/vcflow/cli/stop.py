"""`vcflow stop jobflow NAME`: ask the controllers to stop a flow (SEMANTICS rows 7, 11).

Sets the annotation `vcflow.io/stop` (its value: when it was asked, RFC 3339) with an
ordinary update. The JobFlow controller then deletes the flow's vcjobs (phase
Terminating) and ends it Failed; after that `delete` is allowed.
"""

from __future__ import annotations

from typing import Annotated

import typer

from vcflow.api import clock
from vcflow.api.errors import NotFound
from vcflow.api.jobflow import JobFlow
from vcflow.cli import kinds, options, patch
from vcflow.local import statedir
from vcflow.reconcile.flow import STOP_ANNOTATION


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
    with statedir.writing(options.state_dir(ctx)) as store:
        for name in dict.fromkeys(names):
            try:
                flow = store.get(JobFlow, namespace, name)
            except NotFound:
                raise kinds.JOBFLOW.not_found(name) from None
            if STOP_ANNOTATION not in flow.metadata.annotations:
                body = {"metadata": {"annotations": {STOP_ANNOTATION: stamp}}}
                patch.apply_patch(store, kinds.JOBFLOW, namespace, name, body, status=False)
            typer.echo(f"{kinds.JOBFLOW.ref(name)} stopping")
