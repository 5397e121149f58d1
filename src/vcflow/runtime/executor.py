"""The runtime shell: watches vcjobs, pods and Commands in the store and carries out the pure
vcjob runtime's decisions (`vcflow.reconcile.vcjob`, see its package docstring for the
contract) with the pods a `runner.Runner` runs (local processes; a simulated kubelet in the
conformance runner). It meets the JobFlow controller only through the store. This module is
the job controller's and the scheduler's side; it keeps the store's pods in a
`podcache.PodCache` and has a `node.Node`, the kubelet's side (processes, pod status).

Per job it keeps a `JobRecord` (the stored vcjob with the webhook's defaults, the PodGroup
state, the delayed actions, the scheduler's verdict); one FIFO of (job, request) serves every
job. The caches are written through: each write's result is observed at once (the requests
it causes are queued then), and the store's events for writes already seen (by
resourceVersion) are skipped, so other writers' changes — the controller's vcjobs, the
garbage collector's deletions, Commands — are the only ones the watch adds. A job's status
is written once per burst (`flush`, when idle), however many requests changed it.

Pods are created with a finalizer (`kubelet_bridge.FINALIZER`): a deleted pod stays
Terminating until its processes ended; then the runtime removes the finalizer (the store
removes the pod) and the pod directory. `settle()` works until idle: requests, due timers
(delayed actions, `ttlSecondsAfterFinished`; `activeDeadlineSeconds` is the runner's),
Terminating pods, process changes, the store's events, one gang-scheduler pass, the status
flush — all in one store transaction (one commit), cut short when pods were bound: they are
launched only once their binding is committed, so a pod never runs unless the store has it.
The scheduler looks only at the jobs a pass can decide for (`gang.needs_pass`), with the
resources every placed pod holds kept as pods come and go; it also reads the Queues and
PriorityClasses and keeps the flows' hand-over holds (`gangpass`, docs/scheduling.md).
Pods are created `POD_BATCH` at a time — the rest of a decision's wait (`creating`) until
nothing else is to be done, and the job's syncs create none meanwhile — and bound as many
per pass; `settle(stop=...)` returns as soon as `stop()` holds (a deadline, a Ctrl-C),
committing what it did.

Given `follows`, it runs only the vcjobs that predicate accepts (`vcflow run` follows the
flows its manifests name): the others are left as they are — not synced, their pods neither
launched nor adopted, their Commands left in the store for whoever runs them — but for their
pods being deleted, whose processes are stopped and whose deletion is finished.
"""

from __future__ import annotations

import contextlib
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Generic, TypeVar

from vcflow.api import clock as clocks
from vcflow.api import names
from vcflow.api.command import Command
from vcflow.api.errors import Conflict, NotFound
from vcflow.api.meta import Resource
from vcflow.api.phases import FINISHED_JOB_PHASES, Action
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.reconcile.vcjob import events, kubelet, lifecycle
from vcflow.reconcile.vcjob import resources as jobres
from vcflow.reconcile.vcjob.model import Decision, Group, JobContext
from vcflow.reconcile.vcjob.model import Request as JobRequest
from vcflow.reconcile.vcjob.spec import forget_shape, with_defaults
from vcflow.runtime import kubelet_bridge as bridge
from vcflow.runtime import schedinputs
from vcflow.runtime.gangpass import GangPass
from vcflow.runtime.jobrecord import JobRecord, as_of, rv, version
from vcflow.runtime.jobtimers import JobTimers
from vcflow.runtime.node import Node
from vcflow.runtime.podcache import PodCache, job_key_of
from vcflow.runtime.retired import Retired
from vcflow.runtime.retiring import Retiring
from vcflow.runtime.runner import H, Runner
from vcflow.store.base import Cursor, EventType, Expired, Store, WatchEvent, batched
from vcflow.store.events import Recorder

Key = names.ObjectKey
#: Called with a vcjob whenever the runtime sees it change, and with `deleted=True` last.
Observer = Callable[[VCJob, bool], None]
WATCHED: tuple[type[Resource], ...] = (VCJob, Pod, Command)
W = TypeVar("W", bound=Resource)
#: Pods created in one go (one transaction): a job's next batch is created once the runtime
#: has nothing else to do — its first pods may be placed and started meanwhile, and a stop
#: or a deadline is seen between two batches.
POD_BATCH = 200


class Executor(Generic[H]):
    def __init__(
        self,
        store: Store,
        runner: Runner[H],
        *,
        capacity: jobres.Capacity = jobres.UNLIMITED,
        gpus: Sequence[str] = (),
        priorities: Mapping[str, int] | None = None,
        clock: clocks.Clock | None = None,
        observer: Observer | None = None,
        follows: Callable[[VCJob], bool] | None = None,
    ) -> None:
        self.store = store
        self.follows = follows
        self.ignored: set[Key] = set()  # the vcjobs `follows` refused
        self.clock = clock or clocks.SystemClock()
        self.recorder = Recorder(store, self.clock)
        self.pods = PodCache()
        # `gpus`: the machine's GPU device indices, handed out to the pods at launch
        self.node = Node(store, runner, self.clock, self.pods, self, gpus=gpus)
        self.gang = GangPass(capacity, priorities or {}, store)
        self.watched = WATCHED + self.gang.inputs.kinds(store)  # (+ Queues, PriorityClasses)
        self.observer = observer
        self.jobs: dict[Key, JobRecord] = {}
        self.retiring = Retiring(store, self.jobs, self.pods, self.node, self.gang)
        self.queue: deque[tuple[Key, JobRequest]] = deque()
        self.timers = JobTimers()
        self.unwritten: set[Key] = set()  # jobs whose status changed since the last flush
        self.bound: list[Pod] = []  # pods bound in the open transaction, to launch after it
        # pods decided but not created yet, by job (`_apply`, `_create_next`); while a job
        # has some, its syncs create none (`JobContext.creating`)
        self.creating: dict[Key, deque[Pod]] = {}
        self.cut = False  # end the open transaction now (a batch of pods was created)
        self.seq = 0
        self.cursor = Cursor()
        self.started = False

    def _job(self, key: Key) -> VCJob | None:
        record = self.jobs.get(key)
        return record.job if record is not None else None

    # -- start and watch ------------------------------------------------------------------

    def start(self) -> None:
        """Resync from the store: every vcjob gets a sync request, every placed pod that
        has not ended is tracked or adopted (or launched, if it never was), every Command is
        run."""
        self.cursor = Cursor.now(self.store)
        self.gang.inputs.load(self.store)
        for pod in self.store.list(Pod):
            self.pods.put(pod)
        for job in self.store.list(VCJob):
            if self._followed(job):
                self._resync(job)
        self.node.reconcile()
        for pod in self.pods.every():
            if job_key_of(pod) in self.ignored and not pod.deleting:
                continue  # (another's pod: left as it is)
            if pod.placed and (pod.deleting or pod.phase in kubelet.ALIVE):
                self.node.resume(pod, self._job(job_key_of(pod)))
        for command in self.store.list(Command):
            self._command(command)
        self.started = True

    def pump(self) -> int:
        """Turn the store's events since the last call into requests."""
        try:
            found, cursor = self.store.poll_events(self.cursor, self.watched)
        except Expired:
            self._reset()
            return 1
        for event in found:
            self._event(event)
        self.cursor = cursor
        return len(found)

    def _wrote(self, obj: W) -> W:
        # The watch resumes after a write of ours that directly follows what it has read:
        # the write is applied already (the cache is written through), and its event would
        # be read back only to be skipped (a pump per request, ~a dozen per job).
        self.cursor = self.cursor.own(rv(obj))
        return obj

    def _reset(self) -> None:
        """The watch expired: list the store again. The node keeps the runs it tracks, but
        those whose pod went meanwhile (`node.Node.reconcile`)."""
        self.jobs.clear()
        self.pods.reset()
        self.queue.clear()
        self.unwritten.clear()
        self.gang.forget_all()
        self.timers.clear()
        self.creating.clear()
        self.ignored.clear()
        self.retiring.clear()
        self.start()

    def _event(self, event: WatchEvent) -> None:
        # An event no newer than the cached object is this runtime's own write (the cache is
        # written through): skipped before its object is parsed. A new object of the same
        # name carries a newer resourceVersion, so it is never skipped.
        deleted = event.type is EventType.DELETED
        if event.model in schedinputs.KINDS:
            self.gang.inputs.observe(event)
            self.gang.dirty = True
            return
        skip, revived = self.retiring.reviving(event, deleted)
        if skip:
            return
        if revived is not None:
            self._revive(revived)
        if event.model is Pod:
            cached = self.pods.get(event.key)
            if not deleted and cached is not None and rv(cached) >= event.resource_version:
                return
            pod = event.object
            assert isinstance(pod, Pod)
            if not deleted:
                self._observe_pod(pod)
            elif cached is not None and cached.metadata.uid == pod.metadata.uid:
                self.pod_gone(pod.key, cached)
        elif event.model is VCJob:
            record = self.jobs.get(event.key)
            if not deleted and record is not None and rv(record.job) >= event.resource_version:
                return
            job = event.object
            assert isinstance(job, VCJob)
            if deleted:
                if record is not None and record.job.metadata.uid == job.metadata.uid:
                    self._job_gone(job.key)
                elif record is None and self.retiring.vanished.get(job.key) == job.metadata.uid:
                    del self.retiring.vanished[job.key]  # (revived after it went: told now)
                    if self.observer is not None:
                        self.observer(job, True)
            elif record is None or record.job.metadata.uid != job.metadata.uid:
                if record is not None:
                    self._job_gone(job.key)
                if self._followed(job):
                    self._add_job(job)
            else:
                old, record.job = record.job, with_defaults(job)
                self.gang.dirty = True
                self._job_changed(job.key, record)
                request = events.job_updated(old, record.job)
                if request is not None:
                    self.queue.append((job.key, request))
        elif event.model is Command and event.type is EventType.ADDED:
            command = event.object
            assert isinstance(command, Command)
            self._command(command)

    def _resync(self, job: VCJob) -> None:
        """Track a job found in the store with its pods cached: a sync request, and its
        PodGroup admitted if it has placed pods."""
        record = self._add_job(job)
        if any(p.placed and not p.deleting for p in self.pods.of_job(job.key).values()):
            record.group = Group.ADMITTED
            self._job_changed(job.key, record)

    def _followed(self, job: VCJob) -> bool:
        """Does this runtime run `job` (`follows`)? Those it does not are remembered."""
        if self.follows is None or self.follows(job):
            self.ignored.discard(job.key)
            return True
        self.ignored.add(job.key)
        return False

    def _add_job(self, job: VCJob) -> JobRecord:
        key = job.key
        self.seq += 1
        record = JobRecord(with_defaults(job), seq=self.seq)
        self.jobs[key] = record
        self._job_changed(key, record)
        self.queue.append((key, events.job_created(record.job)))
        return record

    def _job_changed(self, key: Key, record: JobRecord) -> None:
        self.timers.update(key, record)
        if record.job.phase in FINISHED_JOB_PHASES:
            self.retiring.finishing.add(key)
        self.gang.touch(key)
        if self.observer is not None:
            self.observer(record.job, False)

    def _job_gone(self, key: Key) -> None:
        record = self.jobs.pop(key, None)
        self.retiring.finishing.discard(key)
        self.timers.discard(key)
        self.gang.forget(key)
        self.creating.pop(key, None)
        self.gang.dirty = True
        if any(k == key for k, _ in self.queue):
            self.queue = deque((k, r) for k, r in self.queue if k != key)
        if record is not None:
            forget_shape(record.job)
            self.gang.handovers.gone(record.job.metadata.uid)
            if self.observer is not None:
                self.observer(record.job, True)

    def _command(self, command: Command) -> None:
        target = command.target_object
        key = names.object_key(command.namespace, target.name) if target else None
        if key in self.ignored:
            return  # (for whoever runs that job)
        if key is not None and key in self.retiring.retired:
            self._revive(key)
        record = self.jobs.get(key) if key is not None else None
        if record is not None and target is not None:
            if not target.uid or target.uid == record.job.metadata.uid:
                with contextlib.suppress(ValueError):
                    request = events.command(Action(command.action), record.job)
                    self.queue.append((record.job.key, request))
        with contextlib.suppress(NotFound):
            self.store.delete(Command, command.namespace, command.name, force=True)

    # -- pods -----------------------------------------------------------------------------

    def _observe_pod(self, pod: Pod) -> None:
        """Cache the pod and queue the request its change makes for its job."""
        old = self.pods.put(pod)
        job_key = job_key_of(pod)
        record = self.jobs.get(job_key)
        if record is None:
            if (
                pod.deleting
                and pod.placed
                and job_key in self.ignored
                and pod.key not in self.node.handles
            ):
                self.node.resume(pod, None)  # (its processes stopped, its deletion finished)
            return
        if old is None:
            request = events.pod_created(pod)
        else:
            siblings = self.pods.of_job(job_key)
            request = events.pod_updated(record.job, old, pod, siblings)
        self.queue.append((job_key, request))

    def pod_written(self, pod: Pod) -> None:
        """(`node.PodEvents`) The node wrote `pod`."""
        self._observe_pod(self._wrote(pod))

    def pod_gone(self, key: Key, pod: Pod) -> None:
        """(`node.PodEvents`) The pod is no longer in the store: forgotten, its processes
        killed, and its job told."""
        self.pods.remove(key)
        self.node.forget(key)
        job_key = job_key_of(pod)
        if job_key in self.jobs:
            self.queue.append((job_key, events.pod_deleted(pod)))

    def wait(self, timeout: float) -> bool:
        """Block until a process changes or `timeout` passes (`node.Node.wait`)."""
        return self.node.wait(timeout)

    def terminate_all(self, grace: float, patience: float, *, evict: bool = False) -> int:
        """Stop every running pod (`node.Node.terminate_all`); the count stopped."""
        return self.node.terminate_all(grace, patience, evict=evict)

    # -- the settle loop ------------------------------------------------------------------

    def settle(
        self,
        *,
        max_steps: int = 10_000_000,
        idle: Callable[[], bool] | None = None,
        schedule: bool = True,
        stop: Callable[[], bool] | None = None,
        budget: float | None = None,
        between: Callable[[], object] | None = None,
    ) -> bool:
        """Work until idle, or until `stop()` holds (checked at every step: a deadline, a
        Ctrl-C — what was done is committed); True if anything happened.

        `idle` is called whenever the runtime has nothing left to do, inside its burst
        (True: it wrote, and the runtime looks again): `vcflow run` settles the controllers
        there, so that a pod's end, the vcjob it lets the flow create and that vcjob's pod,
        bound, commit together — one commit where a chain took three. Without `schedule`
        no pod is placed (nor launched): a run that stops records what its stop did to
        the jobs, and starts nothing. With a `budget` (seconds) a burst commits once that
        much time went by and the call returns (True), the rest left for the next call;
        `between` is called after each commit (the server lets its API's writes in there)."""
        if not self.started:
            self.start()
        worked = False
        steps = 0
        while True:
            # One commit per burst (half the cost of a small write is its commit), cut short
            # by pods to launch: a pod is launched only once its binding is committed.
            until = None if budget is None else time.monotonic() + budget
            spent = False
            with batched(self.store):
                while not (self.bound or self.cut):
                    if until is not None and time.monotonic() >= until:
                        spent = True
                        break
                    steps += 1
                    if steps > max_steps:
                        raise RuntimeError(f"the runtime did not settle within {max_steps} steps")
                    if stop is not None and stop():
                        return worked
                    if self.queue:
                        self._handle(*self.queue.popleft())
                    elif not (
                        self._fire_timers()
                        or self.node.reap_terminating()
                        or self.node.poll(0)
                        or self.pump()
                        or (schedule and self._schedule())
                        or (schedule and self._create_next())
                        or self.flush()
                        or (idle is not None and idle())
                    ):
                        return worked
                    worked = True
            self.cut = False
            bound, self.bound = self.bound, []
            with batched(self.store):  # (their first statuses)
                for pod in bound:
                    if stop is not None and stop():
                        # the rest stay bound, not launched: a later run's `start` does it
                        return True
                    self.node.launch(pod, self._job(job_key_of(pod)))
            if between is not None:
                between()
            if spent:
                return True  # (the caller turns the controllers, then calls again)

    def busy(self) -> bool:
        """Does a pod process still run, or a deleted pod wait for its processes to end?"""
        return bool(self.node.active or self.pods.deleting)

    def busy_pods(self) -> tuple[list[Key], list[Key]]:
        """What `busy` waits for: the pods whose processes run, and those deleted."""
        return sorted(set(self.node.active) - self.pods.deleting), sorted(self.pods.deleting)

    def _handle(self, key: Key, request: JobRequest) -> None:
        record = self.jobs.get(key)
        if record is None:
            return
        ctx = JobContext(
            record.job,
            self.pods.of_job(key),  # (read only, while it handles the request)
            record.group,
            dict(record.delayed),
            record.unschedulable,
            creating=len(self.creating.get(key, ())),
            waiting=record.waiting,
        )
        now = self.clock.now()
        at = as_of(request, record.job, now)
        decision = lifecycle.handle(ctx, request, at)
        self._apply(key, record, decision, at=at if at < now else None)

    def _apply(
        self, key: Key, record: JobRecord, decision: Decision, *, at: datetime | None = None
    ) -> None:
        """Carry out `decision`; `at`: the past time it was made as of (`as_of`), which the
        sync its phase change causes is made as of too."""
        job = record.job
        if decision.group is not record.group or decision.status.phase != job.phase:
            self.gang.dirty = True
        if decision.delete or version(decision.status) != version(job.status):
            self.creating.pop(key, None)  # (decided before a kill: never created)
        if decision.delete:
            mine = self.pods.of_job(key)
            for name in decision.delete:
                pod = mine.get(name)
                if pod is not None and not pod.deleting:
                    self.node.delete(pod)
        if decision.create:
            later = self.creating.setdefault(key, deque())
            later.extend(decision.create)
            self._create(key, later)
        record.group = decision.group
        record.delayed = dict(decision.delayed)
        for note in decision.events:
            self.recorder.record(job, note.type, note.reason, note.message)
        if job.status != decision.status:
            # A shallow copy (the spec is shared, never modified), written at `flush`.
            record.job = job.model_copy(update={"status": decision.status})
            self.unwritten.add(key)
            if record.job.phase != job.phase:  # = events.job_updated, spec unchanged
                self.queue.append((key, JobRequest(job_uid=job.metadata.uid, at=at)))
        self._job_changed(key, record)

    def _create(self, key: Key, pods: deque[Pod]) -> None:
        """Create the next `POD_BATCH` of the job's pods (the rest wait for
        `_create_next`), and end the open transaction after them."""
        for _ in range(min(POD_BATCH, len(pods))):
            pod = pods.popleft()
            # the store writes a copy: only the metadata this changes is copied here
            meta = pod.metadata.model_copy(update={"finalizers": [bridge.FINALIZER]})
            created = pod.model_copy(update={"metadata": meta})
            self._observe_pod(self._wrote(self.store.create(created, admit=False)))
        if not pods:
            self.creating.pop(key, None)
        else:
            self.cut = True

    def _create_next(self) -> bool:
        """When nothing else is to be done: the next batch of pods a job has to create
        (the jobs in turn); True if there was one."""
        if not self.creating:
            return False
        key = next(iter(self.creating))
        self.creating[key] = later = self.creating.pop(key)  # (then the next job's turn)
        self._create(key, later)
        return True

    def flush(self) -> bool:
        """Write the job statuses changed since the last flush (one write per job however
        many requests changed it); True if any was written."""
        worked = False
        for key in sorted(self.unwritten):
            record = self.jobs.get(key)
            if record is None:
                continue
            job = record.job
            status = job.status.to_dict() if job.status else {}
            try:
                # (`job` is the stored vcjob with the webhook's defaults, which stored vcjobs
                # have: only the status is validated, and `job` is the rest of the result)
                record.job = self._wrote(
                    self.store.update_status_data(
                        VCJob, job.namespace, job.name, status, uid=job.metadata.uid, base=job
                    )
                )
            except (NotFound, Conflict):
                continue  # deleted (or replaced): its events say so
            worked = True
        self.unwritten.clear()
        self._retire_finished()
        return worked

    # -- retiring finished jobs -----------------------------------------------------------

    def _retire_finished(self) -> None:
        """Drop from the caches the finished jobs nothing is left to do for (`retiring`):
        run when the runtime is idle but for writing, after the statuses are written."""
        if not (self.queue or self.node.seen):
            self.retiring.retire_finished(self._held)

    def _held(self, key: Key, record: JobRecord) -> bool:
        return bool(record.delayed) or any(
            key in held for held in (self.timers, self.creating, self.unwritten)
        )

    def _revive(self, key: Key) -> None:
        """Sync a retired job again, as `start` does each job: a newer event about it, or a
        Command, came."""
        job = self.retiring.revive(key)
        if job is not None and self._followed(job):
            self._resync(job)

    @property
    def retired(self) -> Retired:
        return self.retiring.retired

    # -- timers ---------------------------------------------------------------------------

    def next_wakeup(self) -> float | None:
        """Seconds until the earliest timer (0 if one is due), None without timers."""
        due = self.next_due()
        if due is None:
            return None
        return max(0.0, (due - self.clock.now()).total_seconds())

    def next_due(self) -> datetime | None:
        """When the earliest timer is due (delayed actions, TTL, hand-over holds), None
        without timers."""
        dues = (self.timers.next_due(self.jobs), self.gang.next_due())
        return min((d for d in dues if d is not None), default=None)

    def _fire_timers(self) -> bool:
        if self.gang.expire(self.clock.now()):
            return True
        found = self.timers.due(self.jobs, self.clock.now())
        if found is None:
            return False
        key, name = found
        record = self.jobs[key]
        if name is not None:
            delayed = record.delayed.pop(name)
            self._job_changed(key, record)
            self.queue.append((key, events.delayed_due(delayed)))
        else:
            with contextlib.suppress(NotFound):
                self.store.delete(VCJob, record.job.namespace, record.job.name, force=True)
            self._job_gone(key)
        return True

    # -- the scheduler --------------------------------------------------------------------

    def _schedule(self) -> bool:
        placement = self.gang.place(self.jobs, self.pods, self.clock.now())
        if placement is None:
            return False
        told = self.gang.decided(placement, self.jobs)  # (admitted, or their wait changed)
        for key in told:
            self.queue.append((key, events.group_changed()))
        for key in placement.placed[:POD_BATCH]:  # (the rest: placed again by the next pass)
            pod = self.pods.get(key)
            assert pod is not None  # (placed from the cache's pods)
            self.bound.append(self.node.bind(pod))  # launched once committed (`settle`)
        if len(placement.placed) > POD_BATCH:
            self.gang.dirty = True
        return bool(told or placement.placed)
