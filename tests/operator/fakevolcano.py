"""Volcano's job controller as the operator's tests and bench play it: every vcjob that
appears on the API server (one watch of all namespaces) is noted — name, uid, when it was
seen — and moved Pending → Running → Completed by merge patches of its `status`
subresource, the fields Volcano's controller writes (`state.phase` with its
`lastTransitionTime`, `minAvailable`, the pod counters, `taskStatusCount`). A vcjob whose
name `hold` names stays Running until `release`d. With `make_pods` (off by default: the
bench does without), each vcjob's pods are created first, as Volcano's job controller
creates them (`pod_of`), and noted in `pods`."""

from __future__ import annotations

import heapq
import json
import ssl
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx

JOBS = "/apis/batch.volcano.sh/v1alpha1/jobs"
PODS = "/api/v1/namespaces/{namespace}/pods"
MERGE = {"Content-Type": "application/merge-patch+json"}
STEPS = ("Pending", "Running", "Completed")


@dataclass
class Seen:
    namespace: str
    name: str
    uid: str
    at: float  # (monotonic) when the watch showed it first
    replicas: dict[str, int] = field(default_factory=dict)
    min_available: int = 0
    phase: str = ""
    completed_at: float | None = None  # (monotonic) when our Completed patch was answered
    spec: dict[str, Any] = field(default_factory=dict)


def pod_of(job: Seen, task: dict[str, Any], index: int) -> dict[str, Any]:
    """Replica `index` of `task` as Volcano's job controller creates it: named
    `<job>-<task>-<index>`, the pod template's labels and Volcano's own (not the vcjob's
    other labels: JobFlow's `createdBy...` ones are not copied), and the vcjob as its
    controller owner, by uid."""
    name = str(task.get("name") or "default")
    template = task.get("template") or {}
    meta = template.get("metadata") or {}
    spec = dict(template.get("spec") or {})
    spec.setdefault("containers", [{"name": "main", "image": "busybox"}])
    labels = {
        **(meta.get("labels") or {}),
        "volcano.sh/job-name": job.name,
        "volcano.sh/job-namespace": job.namespace,
        "volcano.sh/queue-name": str(job.spec.get("queue") or "default"),
        "volcano.sh/task-spec": name,
        "volcano.sh/task-index": str(index),
    }
    annotations = {
        **(meta.get("annotations") or {}),
        "volcano.sh/job-name": job.name,
        "volcano.sh/task-spec": name,
        "scheduling.k8s.io/group-name": f"{job.name}-{job.uid}",
    }
    owner = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "name": job.name,
        "uid": job.uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{job.name}-{name}-{index}",
            "namespace": job.namespace,
            "labels": labels,
            "annotations": annotations,
            "ownerReferences": [owner],
        },
        "spec": spec,
    }


def _status(job: Seen, phase: str) -> dict[str, Any]:
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    total = sum(job.replicas.values())
    counts: dict[str, Any] = {}
    for task, n in job.replicas.items():
        pods = {"Pending": {"Pending": n}, "Running": {"Running": n, "Pending": None}}
        done = {"Succeeded": n, "Running": None}
        counts[task] = {"phase": pods.get(phase, done)}
    status: dict[str, Any] = {
        "state": {"phase": phase, "lastTransitionTime": now},
        "minAvailable": job.min_available,
        "taskStatusCount": counts,
    }
    if phase == "Pending":
        status.update(pending=total)
    elif phase == "Running":
        status.update(pending=0, running=total)
    else:
        status.update(running=0, succeeded=total)
    return {"status": status}


class FakeVolcano:
    """Plays Volcano's job controller against `url` until `stop`; `step` seconds between
    two phases of one vcjob, `workers` threads patching."""

    def __init__(
        self,
        url: str,
        *,
        step: float = 0.05,
        hold: Iterable[str] = (),
        workers: int = 4,
        token: str | None = None,
        ca_file: str | None = None,
        make_pods: bool = False,
    ) -> None:
        self.url = url
        self.step = step
        self.hold = set(hold)
        self.make_pods = make_pods
        #: "namespace/name" of each pod created → its resourceVersion then
        self.pods: dict[str, str] = {}
        self.jobs: dict[str, Seen] = {}  # by uid
        self.lock = threading.Condition()
        self.due: list[tuple[float, int, str]] = []
        self.count = 0
        self.done = threading.Event()
        self.errors: list[BaseException] = []
        self.patches = 0  # requests made, so a bench can tell them from the operator's
        self.watches = 0
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        verify = ssl.create_default_context(cafile=ca_file) if ca_file else True
        self.client = httpx.Client(base_url=url, timeout=30, headers=headers, verify=verify)
        self.watcher = threading.Thread(target=self._watch, daemon=True)
        #: as Volcano's job controller, several workers; one vcjob's steps stay in order
        self.steppers = [threading.Thread(target=self._steps, daemon=True) for _ in range(workers)]

    def __enter__(self) -> FakeVolcano:
        self.watcher.start()
        for stepper in self.steppers:
            stepper.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self.done.set()
        with self.lock:
            self.lock.notify_all()
        for stepper in self.steppers:
            stepper.join(timeout=10)
        self.client.close()

    # -- what the tests read ------------------------------------------------------------

    def created(self) -> dict[str, list[str]]:
        """The uids each vcjob name was created with, in order."""
        with self.lock:
            found: dict[str, list[str]] = {}
            for job in sorted(self.jobs.values(), key=lambda j: j.at):
                found.setdefault(f"{job.namespace}/{job.name}", []).append(job.uid)
            return found

    def phase_of(self, name: str) -> str:
        with self.lock:
            phases = [j.phase for j in self.jobs.values() if j.name == name]
            return phases[-1] if phases else ""

    def release(self, *names: str) -> None:
        """Let held vcjobs (all, when no name is given) go on to Completed."""
        with self.lock:
            freed = set(names) if names else set(self.hold)
            self.hold -= freed
            for job in self.jobs.values():
                if job.name in freed and job.phase == "Running":
                    self._schedule(job.uid, 0.0)
            self.lock.notify_all()

    # -- the controller -----------------------------------------------------------------

    def _schedule(self, uid: str, delay: float) -> None:
        self.count += 1
        heapq.heappush(self.due, (time.monotonic() + delay, self.count, uid))

    def _watch(self) -> None:
        rv = "0"
        while not self.done.is_set():
            query = {"watch": "true", "resourceVersion": rv, "timeoutSeconds": "30"}
            self.watches += 1
            try:
                with self.client.stream("GET", JOBS, params=query, timeout=60) as answer:
                    for line in answer.iter_lines():
                        if self.done.is_set():
                            return
                        if line.strip():
                            rv = self._frame(json.loads(line)) or rv
            except httpx.HTTPError:
                if self.done.wait(0.2):
                    return

    def _frame(self, frame: dict[str, Any]) -> str:
        obj = frame.get("object") or {}
        meta = obj.get("metadata") or {}
        if frame.get("type") == "ADDED" and meta.get("uid") not in self.jobs:
            spec = obj.get("spec") or {}
            job = Seen(
                str(meta.get("namespace")),
                str(meta.get("name")),
                str(meta.get("uid")),
                time.monotonic(),
                {str(t.get("name")): int(t.get("replicas") or 1) for t in spec.get("tasks") or []},
                int(spec.get("minAvailable") or 0),
                spec=spec,
            )
            with self.lock:
                self.jobs[job.uid] = job
                self._schedule(job.uid, 0.0)
                self.lock.notify_all()
        return str(meta.get("resourceVersion") or "")

    def _steps(self) -> None:
        while not self.done.is_set():
            with self.lock:
                while not self.done.is_set() and (
                    not self.due or self.due[0][0] > time.monotonic()
                ):
                    wait = self.due[0][0] - time.monotonic() if self.due else None
                    self.lock.wait(wait)
                if self.done.is_set():
                    return
                _, _, uid = heapq.heappop(self.due)
                job = self.jobs[uid]
                at = STEPS.index(job.phase) + 1 if job.phase in STEPS else 0
                if at >= len(STEPS) or (job.phase == "Running" and job.name in self.hold):
                    continue
                phase = STEPS[at]
            try:
                if phase == STEPS[0] and self.make_pods:
                    self._create_pods(job)
                self._patch(job, phase)
            except Exception as exc:  # (shown by the test that reads `errors`)
                self.errors.append(exc)
                continue
            with self.lock:
                self.patches += 1
                job.phase = phase
                if phase == "Completed":
                    job.completed_at = time.monotonic()
                else:
                    self._schedule(uid, self.step)

    def _create_pods(self, job: Seen) -> None:
        for task in self._tasks(job):
            for index in range(int(task.get("replicas") or 1)):
                pod = pod_of(job, task, index)
                path = PODS.format(namespace=job.namespace)
                answer = self.client.post(path, json=pod)
                if answer.status_code == 409:
                    continue  # (made already: a vcjob seen again after a watch restart)
                answer.raise_for_status()
                meta = answer.json()["metadata"]
                with self.lock:
                    self.pods[f"{job.namespace}/{meta['name']}"] = str(meta["resourceVersion"])

    @staticmethod
    def _tasks(job: Seen) -> list[dict[str, Any]]:
        return [t for t in job.spec.get("tasks") or () if isinstance(t, dict)]

    def _patch(self, job: Seen, phase: str) -> None:
        path = f"/apis/batch.volcano.sh/v1alpha1/namespaces/{job.namespace}/jobs/{job.name}"
        body = json.dumps(_status(job, phase))
        answer = self.client.patch(f"{path}/status", content=body, headers=MERGE)
        if answer.status_code == 404:
            return  # deleted meanwhile (a flow's retain policy, a retry)
        answer.raise_for_status()
