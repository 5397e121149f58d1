"""The runtime harness's world (conformance README "Runtime cases"): vcflow's real runtime
shell (`runtime.executor.Executor`) on a memory store, with a simulated kubelet
(`kubelet_sim`) for the pods and a virtual clock. The case's actions are writes to the store
(vcjobs, Commands, evictions) or moves of the simulated kubelet; `settle` is the executor's.
What the checks read comes from the store — the vcjobs, the pods, the watch log for the pods
created — and from the executor's observer for the phases each job went through.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from vcflow.admission.jobtemplate import validate_vcjob
from vcflow.admission.review import errors_only
from vcflow.api import names
from vcflow.api.clock import FakeClock
from vcflow.api.command import Command
from vcflow.api.meta import ObjectMeta, Resource, controller_reference
from vcflow.api.phases import Action, JobPhase, PodPhase
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.conformance.kubelet_sim import SimHandle, SimulatedKubelet
from vcflow.reconcile.vcjob import kubelet, resources
from vcflow.reconcile.vcjob import spec as jobspec
from vcflow.runtime.executor import Executor
from vcflow.runtime.kubelet_bridge import FINALIZER
from vcflow.store.base import EventType
from vcflow.store.memory import MemoryStore

#: A settle that takes more steps than this is a livelock in the code under test.
MAX_SETTLE_STEPS = 100_000
#: Timers fired within one `wait` before the harness calls it a livelock.
MAX_TIMERS = 10_000


class HarnessError(Exception):
    """An action that is not possible as described (unknown or unplaced pod, wrong phase…),
    or a world that never settles; the case fails with this message."""


class RuntimeWorld:
    def __init__(
        self,
        *,
        capacity: resources.Capacity = resources.UNLIMITED,
        priorities: Mapping[str, int] | None = None,
        objects: Sequence[Resource] = (),
        hold_deletions: bool = False,
        namespace: str = names.DEFAULT_NAMESPACE,
        clock: FakeClock | None = None,
    ) -> None:
        self.hold_deletions = hold_deletions
        self.namespace = namespace
        self.clock = clock or FakeClock()
        self.store = MemoryStore(clock=self.clock)
        for obj in objects:  # Queues, PriorityClasses, JobFlows: before the runtime starts
            self.store.create(obj, admit=False)
        self.kubelet = SimulatedKubelet(self.clock, hold_deletions=hold_deletions)
        self.executor: Executor[SimHandle] = Executor(
            self.store,
            self.kubelet,
            capacity=capacity,
            priorities=priorities,
            clock=self.clock,
            observer=self._observe,
        )
        self.phases_seen: dict[str, list[str]] = {}  # this step's, by job name
        self.restarts_entered: dict[str, int] = {}  # by job name, over the whole case
        self._phase: dict[str, str] = {}  # last phase seen, by job uid
        self.created: list[str] = []  # pods created during this step
        self.created_total = 0
        self._counted_rv = 0  # the watch log is read for creations up to here

    @property
    def now(self) -> datetime:
        return self.clock.now()

    def begin_step(self) -> None:
        self.count_creations()
        self.created = []
        self.phases_seen = {}

    # -- views ------------------------------------------------------------------------------

    def job(self, name: str) -> VCJob | None:
        found = [j for j in self.store.list(VCJob, self.namespace) if j.name == name]
        return found[0] if found else None

    def jobs(self) -> list[VCJob]:
        return self.store.list(VCJob, self.namespace)

    def pods(self) -> dict[str, Pod]:
        return {p.name: p for p in self.store.list(Pod, self.namespace)}

    def count_creations(self) -> None:
        """Pods created since the last count (`created`, `created_total`): the watch log's
        ADDED events."""
        for event in self.store.events_since(self._counted_rv, kinds=[Pod]):
            if event.type is EventType.ADDED:
                self.created.append(event.key.rsplit("/", 1)[-1])
                self.created_total += 1
        self._counted_rv = self.store.resource_version()

    def _observe(self, job: VCJob, deleted: bool) -> None:
        uid = job.metadata.uid
        if deleted:
            self._phase.pop(uid, None)
            return
        phase = job.phase
        if phase != self._phase.get(uid, ""):
            self._phase[uid] = phase
            self.phases_seen.setdefault(job.name, []).append(phase)
            if phase == JobPhase.RESTARTING:
                self.restarts_entered[job.name] = self.restarts_entered.get(job.name, 0) + 1

    # -- actions ----------------------------------------------------------------------------

    def put_object(self, obj: Resource) -> None:
        """Create a Queue, PriorityClass or JobFlow, or replace it (status included)."""
        old = self._stored(type(obj), obj.name)
        if old is None:
            self.store.create(obj, admit=False)
            return
        obj.metadata.namespace = old.namespace
        obj.metadata.resource_version = old.metadata.resource_version
        written = self.store.update(obj, admit=False)
        if getattr(obj, "status", None) is not None:
            obj.metadata.resource_version = written.metadata.resource_version
            self.store.update_status(obj)

    def delete_object(self, kind: type[Resource], name: str) -> None:
        old = self._stored(kind, name)
        if old is None:
            raise HarnessError(f"no {kind.__name__} {name} to delete")
        self.store.delete(kind, old.namespace, name, force=True)

    def _stored(self, kind: type[Resource], name: str) -> Resource | None:
        """The stored object of that kind and name (Queues and PriorityClasses are
        cluster-scoped, JobFlows in the case's namespace)."""
        found = [o for o in self.store.list(kind) if o.name == name]
        return found[0] if found else None

    def create_job(self, data: Mapping[str, Any]) -> None:
        job = VCJob.from_dict(dict(data))
        job.metadata.namespace = job.metadata.namespace or self.namespace
        problems = errors_only(validate_vcjob(job))
        if problems:
            raise HarnessError(f"job {job.name} rejected by admission: {problems[0]}")
        if self.job(job.name) is not None:
            raise HarnessError(f"job {job.name} already exists")
        self.store.create(jobspec.with_defaults(job))
        self.settle()

    def pod_running(self, name: str) -> None:
        pod = self._pod(name)
        if not pod.placed or pod.deleting or pod.phase != PodPhase.PENDING:
            raise HarnessError(f"pod {name} cannot start: {_describe(pod)}")
        self.kubelet.start(self._launched(pod))

    def pod_exit(self, name: str, code: int) -> None:
        pod = self._pod(name)
        if not pod.placed or pod.deleting or pod.phase not in kubelet.ALIVE:
            raise HarnessError(f"pod {name} cannot exit: {_describe(pod)}")
        self.kubelet.exit(self._launched(pod), code)

    def pod_evicted(self, name: str) -> None:
        """Deleted by someone else, at once: the pod goes, finalizer and all."""
        pod = self._pod(name)
        with self.store.transaction():
            last = self.store.delete(Pod, pod.namespace, pod.name, force=True)
            if last.deleting:
                last.metadata.finalizers = [f for f in last.metadata.finalizers if f != FINALIZER]
                last.metadata.resource_version = ""
                self.store.update(last, admit=False)

    def pods_gone(self, which: list[str] | None) -> None:
        """`which` None: every Terminating pod."""
        if not self.hold_deletions:
            raise HarnessError("pods_gone needs hold_deletions: true")
        every = self.pods()
        if which is None:
            chosen = [p for p in every.values() if p.deleting]
        else:
            chosen = [self._pod(n) for n in which]
        for pod in chosen:
            if not pod.deleting:
                raise HarnessError(f"pod {pod.name} is not Terminating")
        self.kubelet.release(p.key for p in chosen)

    def command(self, job_name: str, action: str) -> None:
        job = self.job(job_name)
        if job is None:
            raise HarnessError(f"command for unknown job {job_name}")
        if action not in {a.value for a in Action}:
            raise HarnessError(f"unknown command action {action!r}")
        ref = controller_reference(job, block_owner_deletion=False)
        command = Command(
            metadata=ObjectMeta(name=f"{job.name}-{action.lower()}", namespace=job.namespace),
            action=action,
            target_object=ref,
        )
        self.store.create(command, admit=False)

    def wait(self, seconds: float) -> None:
        """Advance the clock to each timer due in the next `seconds` — the executor's
        (delayed actions, TTL) and the kubelet's (activeDeadlineSeconds) — and settle there."""
        end = self.now + timedelta(seconds=seconds)
        for _ in range(MAX_TIMERS):
            due = min(
                (d for d in (self.executor.next_due(), self.kubelet.next_due()) if d is not None),
                default=None,
            )
            if due is None or due > end:
                break
            self._advance_to(due)
            self.kubelet.fire_due()
            self.settle()
        else:
            raise HarnessError(f"more than {MAX_TIMERS} timers within {seconds} s")
        self._advance_to(end)
        self.settle()

    def settle(self) -> None:
        try:
            self.executor.settle(max_steps=MAX_SETTLE_STEPS)
        except RuntimeError as exc:
            raise HarnessError(str(exc)) from None

    # -- plumbing ---------------------------------------------------------------------------

    def _pod(self, name: str) -> Pod:
        pod = self.pods().get(name)
        if pod is None:
            raise HarnessError(f"no pod {name}")
        return pod

    def _launched(self, pod: Pod) -> names.ObjectKey:
        run = self.kubelet.runs.get(pod.key)
        if run is None or run.uid != pod.metadata.uid:
            raise HarnessError(f"pod {pod.name} is placed but was never launched")
        return pod.key

    def _advance_to(self, moment: datetime) -> None:
        seconds = (moment - self.now).total_seconds()
        if seconds > 0:
            self.clock.advance(seconds)


def _describe(pod: Pod) -> str:
    state = "Terminating" if pod.deleting else pod.phase
    return f"{state}, {'placed' if pod.placed else 'not placed'}"
