"""`jobRetainPolicy: delete` over the Kubernetes API, where a custom resource's DELETE answers
a Status, not the object (kube-apiserver; `vcflow server` now answers so too): the
controllers (`Manager`) over a `KubeStore` talking HTTP to `vcflow server`'s application
around a memory store, on which the test plays Volcano's job controller. The controller
deletes the completed vcjobs once the flow Succeed; the DELETE's answer has no phase, and
the outcome of each job must be the phase the controller last saw of it (Completed), not
`JobDeleted` — else every status written until the watch's DELETED event lists the jobs in
failedJobs, and a spurious Failed stays in their runningHistories (issue 25, defect 10)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from tests.store.kubeserver import Served

from vcflow.api.clock import FakeClock
from vcflow.api.jobflow import JobFlow
from vcflow.api.vcjob import VCJob
from vcflow.controller.manager import Manager
from vcflow.kubestore import KubeClient, KubeStore
from vcflow.server import watching
from vcflow.server.app import create_app
from vcflow.store import Cursor

from .volcano_player import START, Player, RecordingStore, flow, template

JOBS = ["f-a", "f-b", "f-c"]


class AnswerStore(KubeStore):
    """A KubeStore keeping each answer its `delete` returned."""

    answers: list[Any]

    def delete(self, kind: Any, *args: Any, **kwargs: Any) -> Any:
        answer = super().delete(kind, *args, **kwargs)
        self.answers.append(answer)
        return answer


class KubePlayer(Player):
    """Volcano's job controller on the server's store; the controllers settle once their
    watch has brought its writes."""

    def settle(self) -> None:
        latest = self.store.resource_version()
        store = self.manager.store
        assert isinstance(store, KubeStore)
        deadline = time.monotonic() + 30
        while latest > self.manager.cursor.rv and not store.wait(Cursor(latest - 1), 1.0):
            assert time.monotonic() < deadline, "the controllers' watch never brought the writes"
        self.manager.settle()


@pytest.fixture
def ran() -> Iterator[tuple[RecordingStore, AnswerStore]]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(watching, "POLL", 0.01)  # (a watch event at once, as kube sends it)
        clock = FakeClock(START)
        engine = RecordingStore(clock)
        stopping = threading.Event()
        served = Served(create_app(engine, stopping=stopping))
        store = AnswerStore(KubeClient.for_url(served.url, timeout=30, qps=0))
        store.answers = []
        try:
            entries: list[dict[str, Any]] = [
                {"name": "a"},
                {"name": "b", "dependsOn": {"targets": ["a"]}},
                {"name": "c", "dependsOn": {"targets": ["a"]}},
            ]
            templates = [template(e["name"]) for e in entries]
            engine.apply([*templates, flow("f", entries, retain="delete")])
            player = KubePlayer(engine, clock, Manager(store, clock))
            player.run()
            player.settle()  # (the vcjobs' DELETED events)
            yield engine, store
        finally:
            store.close()
            stopping.set()
            served.stop()
            engine.close()


def test_completed_jobs_deleted_by_the_retain_policy_stay_completed(
    ran: tuple[RecordingStore, AnswerStore],
) -> None:
    engine, store = ran
    assert not engine.list(VCJob)
    answers = {a.name: a for a in store.answers}
    assert sorted(answers) == JOBS
    jobs = {j.metadata.uid for j in engine.list(VCJob)}
    assert not jobs and all(a.phase == "" and a.metadata.uid for a in answers.values())
    written = [json.loads(w) for w in engine.writes]
    assert written and written[-1]["state"]["phase"] == "Succeed"
    for status in written:
        assert not status.get("failedJobs"), status
        for job in status.get("jobStatusList") or []:
            phases = [h.get("state") for h in job.get("runningHistories") or []]
            assert "Failed" not in phases, job
    final = engine.get(JobFlow, "default", "f").status
    assert final is not None and sorted(final.completed_jobs or []) == JOBS
