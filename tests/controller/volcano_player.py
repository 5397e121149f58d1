"""Runs flows through the real controllers on a memory store with a fake clock, playing
Volcano's job controller: each vcjob the controller creates goes Running, then Completed,
with the times, `runningDuration` and `taskStatusCount` Volcano writes. `RecordingStore`
keeps every JobFlow status write as the bytes the store holds. Used by test_status_size.py
(and, run as a script, writes the Volcano example's statuses: `golden`)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vcflow.api import bounds, loading
from vcflow.api.clock import FakeClock
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.meta import Resource
from vcflow.api.vcjob import VCJob, VCJobStatus
from vcflow.controller.manager import Manager
from vcflow.store import MemoryStore
from vcflow.store.base import EventType

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "jobflow"
START = datetime(2026, 12, 1, tzinfo=UTC)


class RecordingStore(MemoryStore):
    """A memory store that sees every JobFlow status write: `check(size, flow)` is called
    with the whole object's bytes as JSON, `writes` keeps each written status's JSON."""

    def __init__(self, clock: FakeClock, check: Callable[[int, JobFlow], None] | None = None):
        super().__init__(clock=clock)
        self.check = check
        self.writes: list[str] = []
        self.sizes: list[int] = []

    def update_status(self, obj: Any) -> Any:
        written = super().update_status(obj)
        self._seen(written)
        return written

    def update_status_data(self, kind: Any, *args: Any, **kwargs: Any) -> Any:
        written = super().update_status_data(kind, *args, **kwargs)
        self._seen(written)
        return written

    def _seen(self, obj: Resource) -> None:
        if not isinstance(obj, JobFlow):
            return
        data = obj.to_dict()
        size = bounds.object_size(data)
        self.sizes.append(size)
        self.writes.append(json.dumps(data.get("status"), separators=(",", ":")))
        if self.check is not None:
            self.check(size, obj)


def layered(n: int, width: int) -> list[dict[str, Any]]:
    """n entries in layers of `width`, each targeting 2 entries of the layer before."""
    flows: list[dict[str, Any]] = []
    for i in range(n):
        layer, j = divmod(i, width)
        entry: dict[str, Any] = {"name": f"l{layer:02d}-{j:04d}"}
        if layer:
            other = (j + width // 2) % width
            entry["dependsOn"] = {
                "targets": [f"l{layer - 1:02d}-{j:04d}", f"l{layer - 1:02d}-{other:04d}"]
            }
        flows.append(entry)
    return flows


def template(name: str) -> JobTemplate:
    pod = {"spec": {"containers": [{"name": "main", "image": "busybox"}], "restartPolicy": "Never"}}
    task = {"name": "main", "replicas": 1, "template": pod}
    return JobTemplate.from_dict(
        {
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"minAvailable": 1, "tasks": [task]},
        }
    )


def flow(name: str, flows: list[dict[str, Any]], retain: str = "retain") -> JobFlow:
    spec = {"jobRetainPolicy": retain, "flows": flows}
    return JobFlow.from_dict({"metadata": {"name": name, "namespace": "default"}, "spec": spec})


def example_objects() -> list[Resource]:
    docs = loading.read_documents(
        [str(EXAMPLE / "JobTemplate.yaml"), str(EXAMPLE / "JobFlow.yaml")]
    )
    objects = []
    for doc in docs:
        obj, errors = loading.to_model(doc)
        assert obj is not None and not errors, errors
        objects.append(obj)
    return objects


class Player:
    """Volcano's job controller, by rounds: `step()` takes every vcjob created since the last
    step to Running, lets the controllers sync, then to Completed (a few seconds apart each,
    so the records differ as a real run's do); False when there was none."""

    def __init__(self, store: MemoryStore, clock: FakeClock, manager: Manager) -> None:
        self.store, self.clock, self.manager = store, clock, manager
        self.rv = store.resource_version()
        self.serial = 0

    def step(self) -> bool:
        events = list(self.store.events_since(self.rv, kinds=[VCJob]))
        self.rv = max([self.rv, *(e.resource_version for e in events)])
        new = [e.object for e in events if e.type == EventType.ADDED]
        for job in new:
            self._tick(7)
            assert isinstance(job, VCJob)
            job.status = _status("Running", self._now(), running=1)
            self.store.update_status(job)
        self.settle()
        for job in new:
            self._tick(5)
            fresh = self.store.get(VCJob, job.namespace, job.name)
            seconds = 20 + self.serial % 611
            fresh.status = _status("Completed", self._now(), succeeded=1, duration=f"{seconds}s")
            self.store.update_status(fresh)
        self.settle()
        return bool(new)

    def run(self) -> None:
        self.settle()
        while self.step():
            pass

    def settle(self) -> None:
        """Let the controllers act on what was written (over an API: once they see it)."""
        self.manager.settle()

    def _tick(self, every: int) -> None:
        self.serial += 1
        if self.serial % every == 0:
            self.clock.advance(1)

    def _now(self) -> str:
        return self.clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")


def _status(
    phase: str, now: str, *, running: int = 0, succeeded: int = 0, duration: str = ""
) -> VCJobStatus:
    pods = {"Running": running} if running else {"Succeeded": succeeded}
    data: dict[str, Any] = {
        "state": {"phase": phase, "lastTransitionTime": now},
        "minAvailable": 1,
        "taskStatusCount": {"main": {"phase": pods}},
    }
    if running:
        data["running"] = running
    if succeeded:
        data["succeeded"] = succeeded
    if duration:
        data["runningDuration"] = duration
    return VCJobStatus.from_dict(data)


def run_example() -> RecordingStore:
    """The Volcano example (examples/jobflow) to Succeed; the store with its status writes."""
    clock = FakeClock(START)
    store = RecordingStore(clock)
    store.apply(example_objects())
    manager = Manager(store, clock)
    Player(store, clock, manager).run()
    return store


if __name__ == "__main__":  # the golden statuses: `python tests/controller/volcano_player.py`
    sys.stdout.write("\n".join(run_example().writes) + "\n")
