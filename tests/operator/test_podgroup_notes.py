"""The operator's PodGroup notes (`operator.podgroups`): the latest condition of a waiting
vcjob's PodGroup, when it is Unschedulable, copied onto the vcjob as
`vcflow.io/unschedulable` — one patch when it changes, one to drop it when the PodGroup no
longer waits with one, none for a PodGroup that never waited — and shown by the flow
controller as that job's reason in the flow's status."""

from __future__ import annotations

from typing import Any

import pytest

from vcflow.api.clock import FakeClock
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.vcjob import JobState, VCJob, VCJobStatus
from vcflow.controller.manager import Manager
from vcflow.kubestore.client import Response
from vcflow.operator.podgroups import PodGroupNotes, note_of
from vcflow.reconcile.entries import UNSCHEDULABLE_ANNOTATION
from vcflow.store import MemoryStore

WHY = "1/0 tasks in gang unschedulable: pod group is not ready, 1 minAvailable"


def group(phase: str, *conditions: dict[str, str], owner: str | None = "f-a") -> dict[str, Any]:
    refs = [{"kind": "Job", "name": owner, "controller": True}] if owner else []
    return {
        "metadata": {"namespace": "ns", "name": "f-a-uid", "ownerReferences": refs},
        "status": {"phase": phase, "conditions": list(conditions)},
    }


UNSCHEDULABLE = {"type": "Unschedulable", "status": "True", "reason": "NotEnoughResources",
                 "message": WHY}  # fmt: skip
SCHEDULED = {"type": "Scheduled", "status": "True", "reason": "tasks in gang are ready"}


@pytest.mark.parametrize(
    ("found", "note"),
    [
        (group("Pending", UNSCHEDULABLE), f"NotEnoughResources: {WHY}"),
        (group("Inqueue", SCHEDULED, UNSCHEDULABLE), f"NotEnoughResources: {WHY}"),
        (group("Inqueue", UNSCHEDULABLE, SCHEDULED), None),
        (group("Running", UNSCHEDULABLE), None),
        (group("Pending"), None),
        (group("Pending", {**UNSCHEDULABLE, "status": "False"}), None),
    ],
    ids=["pending", "latest-unschedulable", "scheduled-since", "running", "none", "false"],
)
def test_the_note_is_the_latest_unschedulable_condition_of_a_waiting_podgroup(
    found: dict[str, Any], note: str | None
) -> None:
    assert note_of(found) == (("ns", "f-a"), note)


def test_a_podgroup_no_vcjob_controls_is_ignored() -> None:
    assert note_of(group("Pending", UNSCHEDULABLE, owner=None)) == (None, None)


class Client:
    """Records the requests; answers 200."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, Any]] = []

    def request(self, method: str, path: str, **kw: Any) -> Response:
        self.sent.append((method, path, kw.get("body")))
        return Response(200, b"{}")


def test_one_patch_a_change_and_one_to_drop_it() -> None:
    client = Client()
    notes = PodGroupNotes(client)  # type: ignore[arg-type]
    notes.look("ADDED", group("Pending"))  # never waited with a note: nothing
    notes.look("MODIFIED", group("Pending", UNSCHEDULABLE))
    notes.look("MODIFIED", group("Pending", UNSCHEDULABLE))  # the same note: nothing
    notes.look("MODIFIED", group("Running", UNSCHEDULABLE, SCHEDULED))
    notes.look("MODIFIED", group("Running", UNSCHEDULABLE, SCHEDULED))
    path = "/apis/batch.volcano.sh/v1alpha1/namespaces/ns/jobs/f-a"
    annotation = {UNSCHEDULABLE_ANNOTATION: f"NotEnoughResources: {WHY}"}
    assert client.sent == [
        ("PATCH", path, {"metadata": {"annotations": annotation}}),
        ("PATCH", path, {"metadata": {"annotations": {UNSCHEDULABLE_ANNOTATION: None}}}),
    ]


def test_other_namespaces_are_left_alone() -> None:
    client = Client()
    PodGroupNotes(client, ["other"]).look("ADDED", group("Pending", UNSCHEDULABLE))  # type: ignore[arg-type]
    assert client.sent == []


def _template() -> JobTemplate:
    spec = {"restartPolicy": "Never", "containers": [{"name": "main", "image": "x"}]}
    task = {"name": "main", "replicas": 1, "template": {"spec": spec}}
    return JobTemplate.from_dict(
        {"metadata": {"name": "a", "namespace": "default"}, "spec": {"tasks": [task]}}
    )


@pytest.mark.parametrize(("phase", "shown"), [("Pending", True), ("Running", False)])
def test_the_flows_status_shows_a_pending_vcjobs_note(phase: str, shown: bool) -> None:
    clock = FakeClock()
    store = MemoryStore(clock=clock)
    flow = {"metadata": {"name": "f", "namespace": "default"}, "spec": {"flows": [{"name": "a"}]}}
    store.apply([_template(), JobFlow.from_dict(flow)])
    manager = Manager(store, clock)
    manager.settle()
    job = store.get(VCJob, "default", "f-a")
    job.metadata.annotations[UNSCHEDULABLE_ANNOTATION] = f"NotEnoughResources: {WHY}"
    job = store.update(job)
    job.status = VCJobStatus(state=JobState(phase=phase))
    store.update_status(job)
    manager.settle()
    status = store.get(JobFlow, "default", "f").status
    assert status is not None
    condition = status.conditions["f-a"]
    expected = ("Unschedulable", f"NotEnoughResources: {WHY}") if shown else (None, None)
    assert (condition.reason, condition.message) == expected
