"""The admission entry point: one object, one operation, what already exists → problems.

The store calls `review` on every write, as the API server calls its webhooks; the CLI's
`validate` and the conformance runner call it directly. Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from vcflow.admission import configdata, jobflow, jobtemplate, local, metadata, queues, unknown
from vcflow.api.errors import FieldError
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.meta import Resource
from vcflow.api.platform import Platform
from vcflow.api.scheduling import PriorityClass
from vcflow.api.vcjob import VCJob


class Operation(StrEnum):
    CREATE = "CREATE"
    UPDATE = "UPDATE"
    DELETE = "DELETE"


@dataclass(frozen=True)
class Context:
    """What exists beside the object under review (same namespace or all; callers filter).

    `templates` resolves a flow's entries (pod-name lengths, patched specs);
    `flows` finds the flows that still use a template being deleted.
    `isolation` tells the local runtime's warnings what this machine allows.
    """

    templates: dict[str, JobTemplate] = field(default_factory=dict)
    flows: Sequence[JobFlow] = ()
    resolve_templates: bool = False
    #: Walk the object for unknown fields (warnings only): off for a caller that drops
    #: warnings, such as the store's create and update.
    unknown_fields: bool = True
    #: Can the local runtime here give pods private mount and network namespaces
    #: (`local.warnings`)? None: not known (nothing is said that depends on it).
    isolation: bool | None = None
    #: Where the pods run: locally, say what vcflow's local runtime cannot give
    #: (`local.warnings`); not where Volcano runs them (the webhook of a cluster).
    platform: Platform = Platform.LOCAL
    #: the stored PriorityClasses, for one being made the globalDefault
    priority_classes: Sequence[PriorityClass] = ()


def review(
    obj: Resource,
    *,
    operation: Operation = Operation.CREATE,
    old: Resource | None = None,
    context: Context | None = None,
) -> list[FieldError]:
    """Every problem admission finds with this operation; errors and warnings together."""
    ctx = context or Context()
    if operation is Operation.DELETE:
        found = _review_delete(obj, ctx)
    else:
        found = metadata.validate_metadata(obj)
        if isinstance(obj, JobFlow):
            old_flow = old if isinstance(old, JobFlow) else None
            found += jobflow.validate_jobflow(
                obj,
                old=old_flow,
                templates=ctx.templates,
                resolve_templates=ctx.resolve_templates,
                platform=ctx.platform,
            )
        elif isinstance(obj, JobTemplate):
            found += jobtemplate.validate_jobtemplate(obj)
        elif isinstance(obj, VCJob):
            found += jobtemplate.validate_vcjob(obj)
        if ctx.unknown_fields:
            found += unknown.unknown_fields(obj)
        found += configdata.validate(obj)
        found += queues.validate(obj, old, ctx.priority_classes)
        if ctx.platform.runs_pods_here:
            found += local.warnings(obj, ctx.isolation)
    return [e.with_object(kind=obj.kind, namespace=obj.namespace, name=obj.name) for e in found]


def errors_only(found: Sequence[FieldError]) -> list[FieldError]:
    return [e for e in found if not e.warning]


def warnings_only(found: Sequence[FieldError]) -> list[FieldError]:
    return [e for e in found if e.warning]


def _review_delete(obj: Resource, ctx: Context) -> list[FieldError]:
    if isinstance(obj, JobFlow):
        return jobflow.validate_delete(obj)
    if isinstance(obj, JobTemplate):
        return jobflow.validate_template_delete(obj, ctx.flows)
    return queues.validate_delete(obj)
