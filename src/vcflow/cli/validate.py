"""`vcflow validate -f PATH...`: schema and admission checks of manifests, against each other
and never against a store (none is opened); nothing is written.

Like `kubectl apply --dry-run`: one `<kind>.<group>/<name> validated` line per good object on
stdout, `Warning: …` lines on stderr, and every problem raised at once as ValidationFailed for
the error boundary in `cli/app.py` (one line each, exit 1); a field vcflow does not know is
one of them unless `--validate=warn|ignore` (as kubectl's `--validate`). A flow an entry of
which can never fit its Queue (one given alongside) or `--capacity` is warned of, as
`admission: Hold` would hold it (`reconcile.neverfits`, docs/scheduling.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

import typer

from vcflow.api import loading
from vcflow.api.errors import FieldError, Origin
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import templates_by_namespace
from vcflow.api.meta import Resource
from vcflow.api.queues import QueueTable
from vcflow.api.scheduling import Queue
from vcflow.cli import options
from vcflow.local import manifests
from vcflow.reconcile import neverfits
from vcflow.reconcile.vcjob.resources import UNLIMITED, Capacity
from vcflow.runtime import resources

CapacityOption = Annotated[
    str | None,
    options.capacity_option(
        "Warn of a flow an entry of which can never fit this capacity, e.g. cpu=8,"
        "memory=16Gi,nvidia.com/gpu=2 (as vcflow run --capacity; default: no machine check)."
    ),
]


def validate(
    filename: options.FilenameOption,
    field_validation: options.ValidateOption = "strict",
    capacity: CapacityOption = None,
) -> None:
    """Check manifests (schema and admission rules) without a store; nothing is written.

    All objects are checked together: a JobFlow's entries are resolved against the
    JobTemplates of its namespace given alongside it. Nothing already applied is read:
    `apply` also checks the objects against the store (a template it holds, a JobFlow's
    spec that cannot change). A field vcflow does not know is an error (--validate=warn
    makes it a warning). A flow a stage of which can never fit its Queue (given alongside)
    or --capacity is warned of.
    """
    loaded = manifests.load(filename, validation=options.validation(field_validation))
    loaded.require_objects("validate")
    machine = UNLIMITED if capacity is None else Capacity(resources.parse_capacity(capacity))
    for warning in [*loaded.warnings, *fit_warnings(loaded.valid, machine)]:
        typer.echo(f"Warning: {warning}", err=True)
    for item in loaded.valid:
        typer.echo(f"{manifests.reference(item.obj)} validated")
    loaded.raise_if_invalid()


def fit_warnings(items: Sequence[manifests.Item], machine: Capacity) -> list[FieldError]:
    """A warning for each flow an entry of which can never fit its Queue (those among
    `items`; `default` implicit and uncapped) or `machine`, naming the entry's field."""
    objects: list[Resource] = [item.obj for item in items]
    queues = QueueTable.of(o for o in objects if isinstance(o, Queue))
    templates = templates_by_namespace(objects)
    found: list[FieldError] = []
    for item in items:
        flow = item.obj
        if not isinstance(flow, JobFlow):
            continue
        misfit = neverfits.misfit(flow, templates.get(flow.namespace, {}), queues, machine)
        if misfit is not None:
            at, why = misfit
            found.append(
                FieldError(
                    f"{why}: the flow can never finish",
                    f"spec.flows[{at}]",
                    flow.kind,
                    flow.namespace,
                    flow.name,
                    _origin(item.doc, at),
                    warning=True,
                )
            )
    return found


def _origin(doc: loading.Document, at: int) -> Origin:
    """Where the flow's entry `at` is written."""
    line = doc.line_of(("spec", "flows", at))
    return Origin(doc.origin.source, doc.origin.document, line)
