"""A job that creates no pods, or can never complete, is a warning (Volcano admits it); what
Volcano's rules reject stays an error with Volcano's message (reference §6.4 rules 7, 17)."""

from __future__ import annotations

from typing import Any

import pytest

from vcflow.admission.jobtemplate import validate_job_spec
from vcflow.api.errors import FieldError
from vcflow.api.vcjob import JobSpec

POD = {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}
ALL_ZERO = (
    "every task has 0 replicas: the job creates no pods; it goes Running at once and never "
    "finishes (set tasks[].replicas)"
)


def task(name: str, replicas: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "template": POD}
    if replicas is not None:
        out["replicas"] = replicas
    return out


def check(*tasks: dict[str, Any], **fields: Any) -> list[FieldError]:
    return validate_job_spec(JobSpec.from_dict({"tasks": list(tasks), **fields}))


def said(found: list[FieldError], *, warning: bool) -> list[tuple[str, str]]:
    return [(e.path, e.message) for e in found if e.warning is warning]


@pytest.mark.parametrize("replicas", [0, None], ids=["zero", "omitted"])
def test_a_job_whose_tasks_all_have_no_replicas(replicas: int | None) -> None:
    found = check(task("a", replicas), task("b", 0))
    assert said(found, warning=False) == []
    assert said(found, warning=True) == [("spec.tasks", ALL_ZERO)]


def test_one_empty_task_beside_others() -> None:
    found = check(task("a", 2), task("b", 0), task("c", None))
    assert said(found, warning=True) == [
        ("spec.tasks[1].replicas", "0 replicas: the task creates no pods"),
        ("spec.tasks[2].replicas", "no replicas (0 when omitted): the task creates no pods"),
    ]


def test_every_task_with_replicas_is_quiet() -> None:
    assert check(task("a", 1), task("b", 3)) == []


def test_min_available_above_the_replicas_is_volcanos_error() -> None:
    found = check(task("a", 0), minAvailable=1)
    assert said(found, warning=False) == [
        (
            "spec.minAvailable",
            "job 'minAvailable' should not be greater than total replicas in tasks",
        )
    ]


def test_task_min_available_above_its_replicas_is_volcanos_error() -> None:
    found = check({**task("a", 1), "minAvailable": 2})
    assert (
        "spec.tasks[0].minAvailable",
        "'minAvailable' is greater than 'replicas' in task: a",
    ) in (said(found, warning=False))


def test_min_success_above_the_pods_can_never_complete() -> None:
    found = check(task("a", 2), task("b", 1), minSuccess=4)
    assert said(found, warning=True) == [
        (
            "spec.minSuccess",
            "minSuccess 4 is more than the job's 3 pods: the job can never complete, it ends "
            "Failed once every pod has finished",
        )
    ]
    assert check(task("a", 2), task("b", 1), minSuccess=3) == []
