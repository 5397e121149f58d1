"""Admission of Queues (Volcano's CRD bounds and webhook rules) and PriorityClasses
(kube-apiserver's): each refusal names the object and the field in Kubernetes' words;
what the rules allow is admitted."""

from __future__ import annotations

from typing import Any

import pytest

from vcflow.admission.review import Context, Operation, errors_only, review
from vcflow.api.scheduling import PriorityClass, Queue


def queue(name: str = "q", status: dict[str, Any] | None = None, **spec: Any) -> Queue:
    body: dict[str, Any] = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": spec,
    }
    if status is not None:
        body["status"] = status
    return Queue.from_dict(body)


def pclass(name: str = "pc", value: int = 10, **more: Any) -> PriorityClass:
    return PriorityClass.from_dict(
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
            **more,
        }
    )


def errors(obj: Queue | PriorityClass, **options: Any) -> list[str]:
    return [str(e) for e in errors_only(review(obj, **options))]


def test_a_full_queue_is_admitted() -> None:
    good = queue(
        weight=65535,
        priority=0,
        capability={"cpu": "8", "memory": "16Gi", "nvidia.com/gpu": 2},
        deserved={"cpu": "4"},
        guarantee={"resource": {"cpu": "500m"}},
        reclaimable=False,
        status={"state": "Closing"},
    )
    assert errors(good) == []
    assert errors(queue()) == []


BAD_QUEUES: list[tuple[str, Queue, str]] = [
    (
        "weight-zero",
        queue(weight=0),
        "Queue q: spec.weight: Invalid value: 0: spec.weight in body should be greater than "
        "or equal to 1",
    ),
    (
        "weight-too-big",
        queue(weight=65536),
        "Queue q: spec.weight: Invalid value: 65536: spec.weight in body should be less than "
        "or equal to 65535",
    ),
    (
        "negative-priority",
        queue(priority=-1),
        "Queue q: spec.priority: Invalid value: -1: spec.priority in body should be greater "
        "than or equal to 0",
    ),
    (
        "not-a-quantity",
        queue(capability={"cpu": "two"}),
        'Queue q: spec.capability.cpu: Invalid value: "two": spec.capability.cpu in body '
        "should match",
    ),
    (
        "negative-quantity",
        queue(deserved={"memory": "-1Gi"}),
        'Queue q: spec.deserved.memory: Invalid value: "-1Gi": must be greater than or equal to 0',
    ),
    (
        "guarantee-without-deserved",
        queue(guarantee={"resource": {"cpu": "2"}}),
        'Queue q: spec.deserved.cpu: Invalid value: "<nil>": deserved[cpu] must be >= '
        "guarantee[cpu]=2",
    ),
    (
        "deserved-below-guarantee",
        queue(deserved={"cpu": "1"}, guarantee={"resource": {"cpu": "2"}}),
        'Queue q: spec.deserved.cpu: Invalid value: "1": deserved[cpu]=1 must be >= '
        "guarantee[cpu]=2",
    ),
    (
        "milli-cpus-as-written",
        queue(deserved={"cpu": "250m"}, guarantee={"resource": {"cpu": "500m"}}),
        'Queue q: spec.deserved.cpu: Invalid value: "250m": deserved[cpu]=250m must be >= '
        "guarantee[cpu]=500m",
    ),
    (
        "deserved-above-capability",
        queue(deserved={"cpu": "4"}, capability={"cpu": "2"}),
        'Queue q: spec.deserved.cpu: Invalid value: "4": deserved[cpu]=4 must be <= '
        "capability[cpu]=2",
    ),
    ("own-parent", queue(parent="q"), "Queue q: spec.parent: queue q cannot use itself as parent"),
    (
        "unknown-state",
        queue(status={"state": "Ajar"}),
        'Queue q: status.state: Unsupported value: "Ajar": supported values: "Open", '
        '"Closed", "Closing", "Unknown"',
    ),
]


@pytest.mark.parametrize(("case", "obj", "message"), BAD_QUEUES, ids=[b[0] for b in BAD_QUEUES])
def test_a_bad_queue_is_refused_naming_the_field(case: str, obj: Queue, message: str) -> None:
    found = errors(obj)
    assert len(found) == 1, found
    assert found[0].startswith(message), found


@pytest.mark.parametrize("name", ["default", "root"])
def test_default_and_root_queues_cannot_be_deleted(name: str) -> None:
    found = errors(queue(name), operation=Operation.DELETE)
    assert found == [f"Queue {name}: `{name}` queue can not be deleted"]
    assert errors(queue("team-a"), operation=Operation.DELETE) == []


def test_a_priority_class_within_bounds_is_admitted() -> None:
    assert errors(pclass(value=1_000_000_000, preemptionPolicy="Never")) == []
    assert errors(pclass("system-cluster-critical", 2_000_000_000)) == []


BAD_CLASSES: list[tuple[str, PriorityClass, str]] = [
    (
        "too-high",
        pclass(value=1_000_000_001),
        "PriorityClass pc: value: Forbidden: maximum allowed value of a user defined priority "
        "is 1000000000",
    ),
    (
        "system-prefix",
        pclass("system-mine", 5),
        "PriorityClass system-mine: metadata.name: Forbidden: priority class names with "
        "'system-' prefix are reserved for system use only.",
    ),
    (
        "preemption-policy",
        pclass(preemptionPolicy="Always"),
        'PriorityClass pc: preemptionPolicy: Unsupported value: "Always": supported values: '
        '"Never", "PreemptLowerPriority"',
    ),
]


@pytest.mark.parametrize(("case", "obj", "message"), BAD_CLASSES, ids=[b[0] for b in BAD_CLASSES])
def test_a_bad_priority_class_is_refused(case: str, obj: PriorityClass, message: str) -> None:
    found = errors(obj)
    assert len(found) == 1, found
    assert found[0].startswith(message), found


def test_a_class_value_is_immutable() -> None:
    found = errors(pclass(value=20), operation=Operation.UPDATE, old=pclass(value=10))
    assert found == ["PriorityClass pc: value: Forbidden: may not be changed in an update."]
    assert errors(pclass(value=10), operation=Operation.UPDATE, old=pclass(value=10)) == []


def test_a_second_global_default_is_refused_naming_the_first() -> None:
    stored = [pclass("first", 5, globalDefault=True), pclass("other", 1)]
    context = Context(priority_classes=stored)
    found = errors(pclass("second", globalDefault=True), context=context)
    assert found == [
        "PriorityClass second: globalDefault: PriorityClass first is already marked as "
        "default. Only one default can exist"
    ]
    # (the class that is the default already may be written again)
    assert errors(pclass("first", 5, globalDefault=True), context=context) == []
    assert errors(pclass("second", globalDefault=False), context=context) == []
