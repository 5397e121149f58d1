"""The store's admission hook: what the API server does when it calls vcflow's webhook.

`engine.StoreEngine` calls `review_write` for every create, update and delete (unless the
caller opts out: `admit=False` for internal writes, `force=True` for deletes). It builds the
admission Context from the store — the namespace's JobTemplates for a JobFlow, its JobFlows
for a JobTemplate delete — with the objects of an `apply` batch laid over the stored ones,
so a flow applied together with its templates resolves them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

from vcflow.admission import review
from vcflow.api.errors import FieldError, ValidationFailed
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.meta import Resource

Operation = review.Operation
R = TypeVar("R", bound=Resource)


class Lister(Protocol):
    """The one store call admission needs (any `base.Store` is one)."""

    def list(self, kind: type[R], namespace: str | None = None) -> list[R]: ...


def review_write(
    obj: Resource,
    *,
    operation: Operation,
    store: Lister,
    old: Resource | None = None,
    batch: Sequence[Resource] = (),
) -> list[FieldError]:
    """Every problem admission finds (errors and warnings), with the store as context."""
    context = _context(obj, operation, store, batch)
    return review.review(obj, operation=operation, old=old, context=context)


def check(
    obj: Resource,
    *,
    operation: Operation,
    store: Lister,
    old: Resource | None = None,
) -> list[FieldError]:
    """Raise ValidationFailed with every error; return the warnings (which do not reject)."""
    found = review_write(obj, operation=operation, store=store, old=old)
    return raise_errors(found)


def raise_errors(found: Sequence[FieldError]) -> list[FieldError]:
    """Raise ValidationFailed if any of `found` is an error; else return them (warnings)."""
    errors = review.errors_only(found)
    if errors:
        raise ValidationFailed(errors)
    return list(found)


def _context(
    obj: Resource, operation: Operation, store: Lister, batch: Sequence[Resource]
) -> review.Context:
    ns = obj.namespace
    if isinstance(obj, JobFlow) and operation is not Operation.DELETE:
        templates = {t.name: t for t in store.list(JobTemplate, ns)}
        for other in batch:
            if isinstance(other, JobTemplate) and other.namespace == ns:
                templates[other.name] = other
        return review.Context(templates=templates, resolve_templates=True)
    if isinstance(obj, JobTemplate) and operation is Operation.DELETE:
        return review.Context(flows=store.list(JobFlow, ns))
    return review.Context()
