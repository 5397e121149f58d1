"""Rules for Volcano's Queue and Kubernetes' PriorityClass, with their words.

Queue: the CRD's bounds (`weight` 1–65535, `priority` ≥ 0), Volcano's webhook
(pkg/webhooks/admission/queues/validate): resource quantities non-negative, guarantee ≤
deserved ≤ capability per resource, a queue not its own parent, `default` and `root` never
deleted. `status.state` is any of the API's four states (Volcano's webhook allows only
Open and Closed in a written object, but status is a subresource here: only `validate`
sees it). The hierarchy checks that need the other queues are not made (no local
hierarchy). PriorityClass: kube-apiserver's ValidatePriorityClass (user values at most one
billion, `system-` names reserved, preemptionPolicy, value immutable) and the Priority
admission plugin's one globalDefault. Called by `review`. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from vcflow.admission import schema
from vcflow.admission.crd import QUANTITY_PATTERN
from vcflow.api import quantity
from vcflow.api.errors import Cause, FieldError
from vcflow.api.meta import Resource
from vcflow.api.scheduling import (
    CLOSED,
    CLOSING,
    DEFAULT_QUEUE,
    OPEN,
    PRIORITY_MAX,
    UNKNOWN,
    WEIGHT_MAX,
    WEIGHT_MIN,
    PriorityClass,
    Queue,
    QueueSpec,
)

STATES = (OPEN, CLOSED, CLOSING, UNKNOWN)
ROOT_QUEUE = "root"
#: Kubernetes' own classes: the only `system-` names, each with its value
SYSTEM_CLASSES = {"system-node-critical": 2_000_001_000, "system-cluster-critical": 2_000_000_000}
PREEMPTION_POLICIES = ("Never", "PreemptLowerPriority")


def validate(
    obj: Resource, old: Resource | None = None, classes: Sequence[PriorityClass] = ()
) -> list[FieldError]:
    """The problems of a Queue or PriorityClass being written; [] for any other kind.
    `classes` are the other stored PriorityClasses (a globalDefault is unique)."""
    if isinstance(obj, Queue):
        return _queue(obj)
    if isinstance(obj, PriorityClass):
        before = old if isinstance(old, PriorityClass) else None
        return _priority_class(obj, before, classes)
    return []


def validate_delete(obj: Resource) -> list[FieldError]:
    """Volcano refuses to delete the `default` and `root` queues."""
    if isinstance(obj, Queue) and obj.name in (DEFAULT_QUEUE, ROOT_QUEUE):
        return [FieldError(f"`{obj.name}` queue can not be deleted", reason=Cause.FORBIDDEN)]
    return []


def _queue(queue: Queue) -> list[FieldError]:
    found: list[FieldError] = []
    spec = queue.spec
    if spec is not None:
        if spec.weight is not None and not WEIGHT_MIN <= spec.weight <= WEIGHT_MAX:
            bound = (
                f"greater than or equal to {WEIGHT_MIN}"
                if spec.weight < WEIGHT_MIN
                else f"less than or equal to {WEIGHT_MAX}"
            )
            found.append(_range(spec.weight, "spec.weight", bound))
        if spec.priority is not None and spec.priority < 0:
            found.append(_range(spec.priority, "spec.priority", "greater than or equal to 0"))
        capability = _amounts(spec.capability, "spec.capability", found)
        deserved = _amounts(spec.deserved, "spec.deserved", found)
        guarantee = spec.guarantee.resource if spec.guarantee is not None else None
        guaranteed = _amounts(guarantee, "spec.guarantee.resource", found)
        found += _ordered(guaranteed, deserved, capability, spec)
        if spec.parent and spec.parent == queue.name:
            found.append(
                FieldError(f"queue {queue.name} cannot use itself as parent", "spec.parent")
            )
    state = queue.status.state if queue.status is not None else None
    if state:
        found += schema.enum(state, STATES, "status.state")
    return found


def _range(value: int, path: str, bound: str) -> FieldError:
    return FieldError(f"Invalid value: {value}: {path} in body should be {bound}", path)


def _amounts(
    values: Mapping[str, Any] | None, path: str, found: list[FieldError]
) -> dict[str, Fraction]:
    """Each value's amount; its problem (not a quantity, negative) into `found`."""
    amounts: dict[str, Fraction] = {}
    for name, value in (values or {}).items():
        at = f"{path}.{name}"
        problem = quantity.problem(value)
        shown = f'"{value}"' if isinstance(value, str) else str(value)
        if problem is not None:
            if problem == quantity.SYNTAX:
                problem = f"{at} in body should match '{QUANTITY_PATTERN}'"
            found.append(FieldError(f"Invalid value: {shown[:80]}: {problem}", at))
            continue
        amount = quantity.parse(value)
        assert amount is not None
        if amount < 0:
            found.append(
                FieldError(f"Invalid value: {shown}: must be greater than or equal to 0", at)
            )
            continue
        amounts[name] = amount
    return amounts


def _ordered(
    guaranteed: dict[str, Fraction],
    deserved: dict[str, Fraction],
    capability: dict[str, Fraction],
    spec: QueueSpec,
) -> list[FieldError]:
    """Volcano's guarantee ≤ deserved ≤ capability, per resource named in both; values
    shown as written."""
    given = spec.deserved or {}
    floors = (spec.guarantee.resource if spec.guarantee is not None else None) or {}
    caps = spec.capability or {}
    found: list[FieldError] = []
    for name, floor in guaranteed.items():
        at, least = f"spec.deserved.{name}", f"guarantee[{name}]={floors[name]}"
        if name not in given:
            message = f"deserved[{name}] must be >= {least}"
            found.append(FieldError(f'Invalid value: "<nil>": {message}', at))
        elif name in deserved and deserved[name] < floor:
            message = f"deserved[{name}]={given[name]} must be >= {least}"
            found.append(FieldError(f'Invalid value: "{given[name]}": {message}', at))
    for name, amount in deserved.items():
        cap = capability.get(name)
        if cap is not None and amount > cap:
            shown = given[name]
            message = f"deserved[{name}]={shown} must be <= capability[{name}]={caps[name]}"
            found.append(
                FieldError(f'Invalid value: "{shown}": {message}', f"spec.deserved.{name}")
            )
    return found


def _priority_class(
    pc: PriorityClass, old: PriorityClass | None, classes: Sequence[PriorityClass]
) -> list[FieldError]:
    found: list[FieldError] = []
    if pc.name.startswith("system-"):
        if SYSTEM_CLASSES.get(pc.name) != pc.value or pc.global_default:
            found.append(
                FieldError(
                    "Forbidden: priority class names with 'system-' prefix are reserved for "
                    f"system use only. error: {pc.name!r} is not a known system priority class",
                    "metadata.name",
                    reason=Cause.FORBIDDEN,
                )
            )
    elif pc.value > PRIORITY_MAX:
        found.append(
            FieldError(
                f"Forbidden: maximum allowed value of a user defined priority is {PRIORITY_MAX}",
                "value",
                reason=Cause.FORBIDDEN,
            )
        )
    policy = pc.preemption_policy
    found += schema.enum(policy, PREEMPTION_POLICIES, "preemptionPolicy")
    if old is not None:
        if old.value != pc.value:
            message = "Forbidden: may not be changed in an update."
            found.append(FieldError(message, "value", reason=Cause.FORBIDDEN))
        if (old.preemption_policy or "PreemptLowerPriority") != (policy or "PreemptLowerPriority"):
            message = "Forbidden: may not be changed in an update."
            found.append(FieldError(message, "preemptionPolicy", reason=Cause.FORBIDDEN))
    if pc.global_default:
        for other in classes:
            if other.global_default and other.name != pc.name:
                found.append(
                    FieldError(
                        f"PriorityClass {other.name} is already marked as default. "
                        "Only one default can exist",
                        "globalDefault",
                        reason=Cause.FORBIDDEN,
                    )
                )
                break
    return found
