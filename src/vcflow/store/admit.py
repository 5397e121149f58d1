"""The store's admission hook: what the API server does when it calls vcflow's webhook.

`engine.StoreEngine` calls `review_write` once for every create, update and delete (unless
the caller opts out: `admit=False` for internal writes, `force=True` for deletes); a
client's write (`create_reviewed`, `update_reviewed`) gets the warnings of that one review,
fieldValidation applied (`judge`). It builds the
admission Context from the store — the namespace's JobTemplates for a JobFlow, its JobFlows
for a JobTemplate delete — with the objects of an `apply` batch laid over the stored ones,
so a flow applied together with its templates resolves them. The webhook reviews with
`Named`: a flow's templates read by name from the cluster, not listed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Protocol, TypeVar

from vcflow.admission import review
from vcflow.api.errors import FieldError, NotFound, ValidationFailed
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate, templates_by_namespace
from vcflow.api.meta import Resource
from vcflow.api.platform import Platform
from vcflow.api.scheduling import PriorityClass
from vcflow.kubeapi import fieldvalidation
from vcflow.kubeapi.fieldvalidation import Validation

Operation = review.Operation
R = TypeVar("R", bound=Resource)


class Lister(Protocol):
    """The one store call admission needs (any `base.Store` is one)."""

    def list(self, kind: type[R], namespace: str | None = None) -> list[R]: ...


class Reader(Lister, Protocol):
    """A Lister that also reads one object by name (a cluster's client: the webhook's)."""

    def get(self, kind: type[R], namespace: str, name: str) -> R: ...


class Batch:
    """The objects of an `apply` batch, as context for reviewing each of them.

    A JobFlow resolves its namespace's JobTemplates: the stored ones with the batch's laid
    over them. They are gathered once per namespace, when a flow first needs them, not once
    per flow (each time a store read and a walk of the whole batch).
    """

    def __init__(self, store: Lister, objects: Sequence[Resource] = ()) -> None:
        self._store = store
        self._given = templates_by_namespace(objects)
        #: the batch's PriorityClasses (one globalDefault among them and the stored)
        self.classes = [obj for obj in objects if isinstance(obj, PriorityClass)]
        self._templates: dict[str, dict[str, JobTemplate]] = {}

    def templates(self, namespace: str) -> dict[str, JobTemplate]:
        """The namespace's templates by name; shared by the flows reviewed with this batch
        (admission only reads them)."""
        found = self._templates.get(namespace)
        if found is None:
            found = {t.name: t for t in self._store.list(JobTemplate, namespace)}
            found.update(self._given.get(namespace, {}))
            self._templates[namespace] = found
        return found

    def templates_for(self, flow: JobFlow) -> dict[str, JobTemplate]:
        """The templates a flow is reviewed against (admission reads only the ones its
        entries name): here, its namespace's."""
        return self.templates(flow.namespace)


class Named(Batch):
    """The context of reviews on a cluster (the webhook): a flow's templates are the ones
    its entries name, each read by name (once: a missing one too), never the namespace's
    list, so a review's cost does not grow with the templates a namespace holds."""

    def __init__(self, store: Reader) -> None:
        super().__init__(store)
        self._reader = store
        self._read: dict[tuple[str, str], JobTemplate | None] = {}

    def templates_for(self, flow: JobFlow) -> dict[str, JobTemplate]:
        found: dict[str, JobTemplate] = {}
        for name in dict.fromkeys(n for entry in flow.flows for n in entry.templates_named):
            key = (flow.namespace, name)
            if key not in self._read:
                try:
                    self._read[key] = self._reader.get(JobTemplate, *key)
                except NotFound:
                    self._read[key] = None
            template = self._read[key]
            if template is not None:
                found[name] = template
        return found


def review_write(
    obj: Resource,
    *,
    operation: Operation,
    store: Lister,
    old: Resource | None = None,
    batch: Sequence[Resource] | Batch = (),
    warnings: bool = True,
    platform: Platform = Platform.LOCAL,
) -> list[FieldError]:
    """Every problem admission finds (errors and, unless `warnings` is False, the warnings
    that cost a walk of the object), with the store as context; `Platform.CLUSTER`
    leaves out what only vcflow's local runtime cannot do (a cluster's webhook)."""
    given = batch if isinstance(batch, Batch) else Batch(store, batch)
    context = dataclasses.replace(
        _context(obj, operation, store, given),
        unknown_fields=warnings,
        platform=platform,
    )
    return review.review(obj, operation=operation, old=old, context=context)


def check(
    obj: Resource,
    *,
    operation: Operation,
    store: Lister,
    old: Resource | None = None,
) -> list[FieldError]:
    """Raise ValidationFailed with every error; return the cheap warnings (which do not
    reject). Its callers, create and update, report none, so unknown fields go unlooked
    for: every vcjob a flow creates passes here."""
    found = review_write(obj, operation=operation, store=store, old=old, warnings=False)
    return raise_errors(found)


def judge(found: Sequence[FieldError], validation: Validation) -> list[FieldError]:
    """A client's write reviewed: raise ValidationFailed with every error (and the
    warnings: a refusal says them too), else return the warnings; unknown fields are errors
    with fieldValidation Strict and unsaid with Ignore (`kubeapi.fieldvalidation`)."""
    errors, warnings = fieldvalidation.split(found, validation)
    if errors:
        raise ValidationFailed(errors, warnings)
    return warnings


def raise_errors(found: Sequence[FieldError]) -> list[FieldError]:
    """Raise ValidationFailed if any of `found` is an error (the warnings carried along);
    else return them (warnings)."""
    errors = review.errors_only(found)
    if errors:
        raise ValidationFailed(errors, review.warnings_only(found))
    return list(found)


def _context(obj: Resource, operation: Operation, store: Lister, batch: Batch) -> review.Context:
    ns = obj.namespace
    if isinstance(obj, JobFlow) and operation is not Operation.DELETE:
        return review.Context(templates=batch.templates_for(obj), resolve_templates=True)
    if isinstance(obj, JobTemplate) and operation is Operation.DELETE:
        return review.Context(flows=store.list(JobFlow, ns))
    if isinstance(obj, PriorityClass) and obj.global_default and operation is not Operation.DELETE:
        given = {c.name: c for c in batch.classes}
        stored = [c for c in store.list(PriorityClass) if c.name not in given]
        return review.Context(priority_classes=[*stored, *given.values()])
    return review.Context()
