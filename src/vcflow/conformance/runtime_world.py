"""The runtime harness's world (conformance README "Runtime cases", execution model): vcjobs
and pods held in memory, the job controller's request queue, a simulated kubelet and
scheduler, and a virtual clock. Every decision is made by `vcflow.reconcile.vcjob`; this
module only applies decisions and turns changes into the requests of reference §4.2.

`settle` is the README's loop: (1) handle the oldest queued request; (2) else fire the
earliest due timer; (3) else, unless `hold_deletions`, remove Terminating pods; (4) else run
one scheduler pass and loop again if it changed anything.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from vcflow.admission.jobtemplate import validate_vcjob
from vcflow.admission.review import errors_only
from vcflow.api import names
from vcflow.api.clock import FakeClock, rfc3339
from vcflow.api.phases import Action, JobPhase, PodPhase
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.reconcile.vcjob import events, gang, kubelet, lifecycle, pods, resources, ttl
from vcflow.reconcile.vcjob import spec as jobspec
from vcflow.reconcile.vcjob.model import Decision, DelayedAction, Group, JobContext, JobEvent
from vcflow.reconcile.vcjob.model import Request as JobRequest

#: A settle that takes more steps than this is a livelock in the code under test.
MAX_SETTLE_STEPS = 100_000


class HarnessError(Exception):
    """An action that is not possible as described (unknown or unplaced pod, wrong phase…),
    or a world that never settles; the case fails with this message."""


@dataclass
class JobRecord:
    """One vcjob and what the controller keeps about it."""

    job: VCJob
    group: Group = Group.NONE
    delayed: dict[str, DelayedAction] = field(default_factory=dict)
    unschedulable: str = ""
    phases_seen: list[str] = field(default_factory=list)
    restarts_entered: int = 0
    events: list[JobEvent] = field(default_factory=list)


@dataclass(frozen=True, order=True)
class _Timer:
    due: datetime
    rank: int  # 0 delayed action, 1 activeDeadlineSeconds, 2 TTL
    target: str
    key: str = ""


class RuntimeWorld:
    def __init__(
        self,
        *,
        capacity: resources.Capacity = resources.UNLIMITED,
        priorities: Mapping[str, int] | None = None,
        hold_deletions: bool = False,
        namespace: str = names.DEFAULT_NAMESPACE,
        clock: FakeClock | None = None,
    ) -> None:
        self.capacity = capacity
        self.priorities = dict(priorities or {})
        self.hold_deletions = hold_deletions
        self.namespace = namespace
        self.clock = clock or FakeClock()
        self.jobs: dict[str, JobRecord] = {}
        self.pods: dict[str, Pod] = {}
        self.queue: deque[tuple[str, JobRequest]] = deque()
        self.created: list[str] = []
        self.created_total = 0
        self._uids = itertools.count(1)

    @property
    def now(self) -> datetime:
        return self.clock.now()

    def begin_step(self) -> None:
        self.created = []
        for record in self.jobs.values():
            record.phases_seen = []

    # Actions ------------------------------------------------------------------------------

    def create_job(self, data: Mapping[str, Any]) -> None:
        job = VCJob.from_dict(dict(data))
        job.metadata.namespace = job.metadata.namespace or self.namespace
        problems = errors_only(validate_vcjob(job))
        if problems:
            raise HarnessError(f"job {job.name} rejected by admission: {problems[0]}")
        if job.name in self.jobs:
            raise HarnessError(f"job {job.name} already exists")
        job = jobspec.with_defaults(job)  # (its metadata is the parsed job's, ours to set)
        job.metadata.uid = self._uid()
        job.metadata.creation_timestamp = rfc3339(self.now)
        self.jobs[job.name] = JobRecord(job)
        self._enqueue(job.name, events.job_created(job))
        self.settle()

    def pod_running(self, name: str) -> None:
        pod = self._pod(name)
        if not pod.placed or pod.deleting or pod.phase != PodPhase.PENDING:
            raise HarnessError(f"pod {name} cannot start: {self._describe(pod)}")
        self._update_pod(pod, kubelet.start(pod, self.now))

    def pod_exit(self, name: str, code: int) -> None:
        pod = self._pod(name)
        if not pod.placed or pod.deleting or pod.phase not in kubelet.ALIVE:
            raise HarnessError(f"pod {name} cannot exit: {self._describe(pod)}")
        self._update_pod(pod, kubelet.exit_container(pod, code, self.now))

    def pod_evicted(self, name: str) -> None:
        self._remove_pod(self._pod(name))

    def pods_gone(self, which: list[str] | None) -> None:
        """`which` None: every Terminating pod."""
        if not self.hold_deletions:
            raise HarnessError("pods_gone needs hold_deletions: true")
        chosen = [self._pod(n) for n in which] if which is not None else self._terminating()
        for pod in chosen:
            if not pod.deleting:
                raise HarnessError(f"pod {pod.name} is not Terminating")
            self._remove_pod(pod)

    def command(self, job_name: str, action: str) -> None:
        record = self.jobs.get(job_name)
        if record is None:
            raise HarnessError(f"command for unknown job {job_name}")
        if action not in {a.value for a in Action}:
            raise HarnessError(f"unknown command action {action!r}")
        self._enqueue(job_name, events.command(Action(action), record.job))

    def wait(self, seconds: float) -> None:
        end = self.now + timedelta(seconds=seconds)
        while (timer := self._next_timer()) is not None and timer.due <= end:
            self._advance_to(timer.due)
            self.settle()
        self._advance_to(end)
        self.settle()

    # The settle loop ----------------------------------------------------------------------

    def settle(self) -> None:
        for _ in range(MAX_SETTLE_STEPS):
            if self.queue:
                self._handle(*self.queue.popleft())
                continue
            timer = self._next_timer()
            if timer is not None and timer.due <= self.now:
                self._fire(timer)
                continue
            if not self.hold_deletions and self._terminating():
                for pod in self._terminating():
                    self._remove_pod(pod)
                continue
            if not self._schedule():
                return
        raise HarnessError(f"the world did not settle within {MAX_SETTLE_STEPS} steps")

    def _handle(self, job_name: str, request: JobRequest) -> None:
        record = self.jobs.get(job_name)
        if record is None:
            return  # deleted job: cache cleanup only
        ctx = JobContext(
            record.job,
            self.pods_of(job_name),
            record.group,
            dict(record.delayed),
            record.unschedulable,
        )
        self._apply(record, lifecycle.handle(ctx, request, self.now))

    def _apply(self, record: JobRecord, decision: Decision) -> None:
        for name in decision.delete:
            pod = self.pods[name]
            doomed = pods.marked_out_of_sync(pod)
            doomed.metadata.deletion_timestamp = rfc3339(self.now)
            self._update_pod(pod, doomed)
        for pod in decision.create:
            self._create_pod(pod)
        record.group = decision.group
        record.delayed = dict(decision.delayed)
        record.events += decision.events
        old = record.job
        if (old.status.to_dict() if old.status else {}) != decision.status.to_dict():
            new = old.clone()
            new.status = decision.status
            record.job = new
            if new.phase != old.phase:
                record.phases_seen.append(new.phase)
                record.restarts_entered += int(new.phase == JobPhase.RESTARTING)
            request = events.job_updated(old, new)
            if request is not None:
                self._enqueue(new.name, request)

    def _next_timer(self) -> _Timer | None:
        return min(self._timers(), default=None)

    def _timers(self) -> Iterator[_Timer]:
        for name, record in self.jobs.items():
            for key, delayed in record.delayed.items():
                yield _Timer(delayed.due, 0, name, key)
            expiry = ttl.expires_at(record.job)
            if expiry is not None:
                yield _Timer(expiry, 2, name)
        for name, pod in self.pods.items():
            due = kubelet.deadline(pod)
            if due is not None:
                yield _Timer(due, 1, name)

    def _fire(self, timer: _Timer) -> None:
        if timer.rank == 0:
            record = self.jobs[timer.target]
            delayed = record.delayed.pop(timer.key)
            self._enqueue(timer.target, events.delayed_due(delayed))
        elif timer.rank == 1:
            pod = self.pods[timer.target]
            self._update_pod(pod, kubelet.exceed_deadline(pod, self.now))
        else:
            self._delete_job(timer.target)

    def _schedule(self) -> bool:
        jobs = [gang.GangJob(r.job, r.group) for r in self.jobs.values()]
        placement = gang.schedule(jobs, self.pods.values(), self.capacity, self.priorities)
        changed = False
        for key in placement.admitted:
            name = _name(key)
            self.jobs[name].group = Group.ADMITTED
            self._enqueue(name, events.group_changed())
            changed = True
        for key in placement.placed:
            pod = self.pods[_name(key)]
            self._update_pod(pod, kubelet.place(pod, self.now))
            changed = True
        for key, why in placement.unschedulable.items():
            record = self.jobs[_name(key)]
            if record.unschedulable != why:
                record.unschedulable = why
                self._enqueue(record.job.name, events.group_changed())
                changed = True
        return changed

    # Pods ---------------------------------------------------------------------------------

    def pods_of(self, job_name: str) -> dict[str, Pod]:
        return {n: p for n, p in self.pods.items() if pods.job_of(p) == job_name}

    def _create_pod(self, pod: Pod) -> None:
        if pod.name in self.pods:
            raise HarnessError(f"the controller created pod {pod.name}, which already exists")
        created = pod.clone()
        created.metadata.uid = self._uid()
        created.metadata.creation_timestamp = rfc3339(self.now)
        self.pods[pod.name] = created
        self.created.append(pod.name)
        self.created_total += 1
        self._enqueue(pods.job_of(created), events.pod_created(created))

    def _update_pod(self, old: Pod, new: Pod) -> None:
        self.pods[new.name] = new
        job_name = pods.job_of(new)
        record = self.jobs.get(job_name)
        if record is not None:
            siblings = self.pods_of(job_name).values()
            self._enqueue(job_name, events.pod_updated(record.job, old, new, siblings))

    def _remove_pod(self, pod: Pod) -> None:
        del self.pods[pod.name]
        self._enqueue(pods.job_of(pod), events.pod_deleted(pod))

    def _terminating(self) -> list[Pod]:
        return [p for p in self.pods.values() if p.deleting]

    def _delete_job(self, name: str) -> None:
        """TTL: the job and all its pods disappear at once."""
        del self.jobs[name]
        for pod_name in list(self.pods_of(name)):
            del self.pods[pod_name]
        self.queue = deque((j, r) for j, r in self.queue if j != name)

    def _pod(self, name: str) -> Pod:
        pod = self.pods.get(name)
        if pod is None:
            raise HarnessError(f"no pod {name}")
        return pod

    @staticmethod
    def _describe(pod: Pod) -> str:
        state = "Terminating" if pod.deleting else pod.phase
        return f"{state}, {'placed' if pod.placed else 'not placed'}"

    # Plumbing -----------------------------------------------------------------------------

    def _enqueue(self, job_name: str, request: JobRequest) -> None:
        if job_name in self.jobs:
            self.queue.append((job_name, request))

    def _uid(self) -> str:
        return f"00000000-0000-4000-8000-{next(self._uids):012d}"

    def _advance_to(self, moment: datetime) -> None:
        seconds = (moment - self.now).total_seconds()
        if seconds > 0:
            self.clock.advance(seconds)


def _name(key: str) -> str:
    return key.rsplit("/", 1)[-1]
