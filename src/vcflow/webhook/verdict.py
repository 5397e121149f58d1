"""What the webhook answers one review: the embedded admission (`store.admit.review_write`,
the store's own review) run on the request's object — `oldObject` for a DELETE, both for an
UPDATE — with the cluster as the store it reads: a flow's templates, each it names read by
name (`admit.Named`: a review's cost does not grow with the namespace); a template's flows
for its DELETE (listed: any flow may use it).

The refusal is the vcflow server's for the same write: 422 Invalid, or 403 Forbidden when
no error names a field (a DELETE's); the message is admission's lines joined by "; ", the
warnings are the server's `Warning` lines. Called by `webhook.app`, in a worker thread.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from vcflow.admission.review import Operation
from vcflow.api import loading
from vcflow.api.errors import FieldError, Origin, StoreError
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.meta import Resource
from vcflow.api.platform import Platform
from vcflow.kubeapi import fieldvalidation, warningtext
from vcflow.kubeapi import status as kubestatus
from vcflow.kubeapi.fieldvalidation import Validation
from vcflow.store import admit
from vcflow.webhook.admissionreview import Malformed, Review, Verdict

GROUP, VERSION = "flow.volcano.sh", "v1alpha1"
KINDS: dict[str, type[Resource]] = {"JobFlow": JobFlow, "JobTemplate": JobTemplate}
#: Who deletes because an owner or a namespace went away: refusing them would leave the
#: namespace Terminating, or the garbage there, for ever (kube-controller-manager's users).
SYSTEM_DELETERS = frozenset(
    {
        "system:serviceaccount:kube-system:namespace-controller",
        "system:serviceaccount:kube-system:generic-garbage-collector",
    }
)


class ClusterUnreadable(Exception):
    """The cluster could not be read for the review: no verdict (the API server's
    failurePolicy decides)."""


def decide(review: Review, cluster: admit.Reader, kind: str) -> Verdict:
    """The verdict on `review`, which must be for `kind` (the path's); Malformed if not."""
    if (review.group, review.version, review.kind) != (GROUP, VERSION, kind):
        raise Malformed(
            f"this path reviews {kind}.{GROUP}/{VERSION}, not "
            f"{review.kind}.{review.group}/{review.version}: check the webhook's rules"
        )
    if review.sub_resource:  # (status writes get no admission, as on the vcflow server)
        return Verdict(True)
    if review.operation is Operation.DELETE:
        return _delete(review, cluster)
    obj, errors = _model(review.object, review, "object")
    if obj is None:
        return refusal(errors)
    old = None
    if review.operation is Operation.UPDATE:
        old, _ = _model(review.old_object, review, "oldObject")
    found = _reviewed(obj, review.operation, cluster, old)
    return _verdict(found, review.field_validation)


def _delete(review: Review, cluster: admit.Reader) -> Verdict:
    if review.username in SYSTEM_DELETERS or forced(review):
        return Verdict(True)
    if review.old_object is None:
        raise Malformed("a DELETE review without oldObject (kube-apiserver 1.15+ sends it)")
    obj, _ = _model(review.old_object, review, "oldObject")
    if obj is None:  # a stored object admission cannot read: nothing to check, let it go
        return Verdict(True)
    return _verdict(_reviewed(obj, Operation.DELETE, cluster, None), Validation.WARN)


def forced(review: Review) -> bool:
    """A DELETE with `gracePeriodSeconds: 0` (`vcflow delete --force`, kubectl's `--force
    --grace-period=0`): the unfinished-flow checks are skipped, as the vcflow server skips
    its DELETE review for it (compatibility row 11: force bypasses that safety check)."""
    grace = review.options.get("gracePeriodSeconds")
    return type(grace) is int and grace == 0


def _model(
    data: dict[str, object] | None, review: Review, field: str
) -> tuple[Resource | None, list[FieldError]]:
    if data is None:
        raise Malformed(f"a {review.operation} review without request.{field}")
    model, errors = loading.to_model(loading.Document(data, Origin()))
    if model is not None and not isinstance(model, KINDS[review.kind]):
        raise Malformed(f"request.{field} is not a {review.kind}")
    if model is not None and not model.metadata.namespace:
        model.metadata.namespace = review.namespace
    return model, errors


def _reviewed(
    obj: Resource, operation: Operation, cluster: admit.Reader, old: Resource | None
) -> list[FieldError]:
    try:
        return admit.review_write(
            obj,
            operation=operation,
            store=cluster,
            old=old,
            batch=admit.Named(cluster),
            platform=Platform.CLUSTER,
        )
    except StoreError as exc:
        raise ClusterUnreadable(f"cannot read the cluster: {exc}") from None


def _verdict(found: Sequence[FieldError], validation: Validation) -> Verdict:
    """Errors refuse; unknown fields are judged by the request's fieldValidation, as the
    vcflow server's writes are (`kubeapi.fieldvalidation.split`, `store.admit.judge`)."""
    errors, warnings = fieldvalidation.split(found, validation)
    said = tuple(warningtext.said(w) for w in warnings)
    if errors:
        return dataclasses.replace(refusal(errors), warnings=said)
    return Verdict(True, warnings=said)


def refusal(errors: Sequence[FieldError]) -> Verdict:
    """422 Invalid; 403 Forbidden when no error names a field (the vcflow server's codes)."""
    code, message = kubestatus.refusal(errors)
    return Verdict(False, code, kubestatus.REASONS[code], message)
