"""The JobFlow controller: routes store events to per-flow indexes and syncs flows.

A sync (`_syncing`): the flow from the controller's cache (kept from the watch, as an
informer's lister is) → (first sight: a full `reconcile.flow.plan`; after: the index's
incremental `decide`) → create/delete vcjobs. A vcjob's change costs O(its edges)
(`FlowIndex.observe`), and nothing in a sync is O(flow) after the first. With `sync_batch`
(the operator) several flows are synced together and their creates posted at once, and a
flush writes its statuses at once (`createpool`). With `create_batch` (`vcflow run`) a sync
creates at most that many vcjobs and leaves the flow `deferred`: the manager syncs it again
at its next settle, after the runtime has run the pods of those created.

Status writes are coalesced: a sync marks its flow dirty and `flush()` renders and writes
the status (O(flow)). The manager flushes when it is idle — so `settle()` ends with every
status written — and during long bursts whenever `flush_due()`: a flow whose phase changed
soon, alone (a phase change must not bring every other dirty flow's write forward: on a busy
kube-apiserver a status patch is a slow request); every dirty flow once its interval is up
(`statusdue`). A flow whose vcjob finished is synced ahead of the flows queued before it,
so a burst of new flows does not hold back the status of those ending. A flow is flushed
only between its syncs, and a vcjob ADDED event (which never triggers a sync: Volcano has no Add
handler) reaches the index at the flow's next sync or event, so every status written is
the one a sync saw. Retryable problems requeue with backoff; nothing is dropped
(compatibility row 9).

The flow features (docs/flow-features.md) are the index's timers: each sync ends by
queueing the flow again for its next one (`FlowIndex.next_wakeup`: a retry due, a
deadline, a probe round), so a delayed key is the timer, and `Manager.next_due` keeps a
`vcflow run` alive while one is set. A sync carries out what `decide` found due: failed
attempts deleted and their next attempt created once their pods are gone, vcjobs past
their deadline terminated (`flowactions`), probe rounds run (`prober`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from vcflow.api import clock as clocks
from vcflow.api import names
from vcflow.api.errors import AlreadyExists, Conflict, NotFound, StoreError, ValidationFailed
from vcflow.api.jobflow import Condition, JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.meta import Resource
from vcflow.api.phases import FINISHED_JOB_PHASES
from vcflow.api.scheduling import Queue
from vcflow.api.vcjob import VCJob
from vcflow.controller import flowactions, scheduling, statuswrite
from vcflow.controller.createpool import CreatePool, Refusal
from vcflow.controller.events import NORMAL, WARNING, Recorder
from vcflow.controller.observer import Observer
from vcflow.controller.options import ControllerOptions
from vcflow.controller.prober import Prober, SocketProber
from vcflow.controller.queue import WorkQueue
from vcflow.controller.queuewatch import QueueWatch
from vcflow.controller.statusdue import StatusDue
from vcflow.controller.templates import Templates
from vcflow.reconcile import flow as reconcile
from vcflow.reconcile import jobs as jobbuild
from vcflow.store.base import EventType, Store, Transactional, WatchEvent, batched

#: Consecutive failures after which a flow gets a Warning event and a condition.
WARN_AFTER = 16
#: a vcjob and its create's answer: the vcjob created, or the error the store raised
_Answered = tuple[VCJob, object]
#: a flow's sync in two steps: it yields the vcjobs to create and is sent their answers
_Sync = Generator[list[VCJob], list[_Answered], None]


@dataclass(frozen=True)
class FlowKey:
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


class FlowController:
    def __init__(
        self,
        store: Store,
        clock: clocks.Clock,
        recorder: Recorder,
        options: ControllerOptions,
    ) -> None:
        self.store = store
        #: how it works: the vcjobs of one sync are POSTed `create_workers` at a time (1:
        #: one after another; their answers are taken in plan order), at most
        #: `create_batch` per sync, and so on (`ControllerOptions`)
        self.options = options
        # An embedded store's transaction (a sync's writes, one commit) holds its lock
        # across the sync: its calls run one by one, one sync at a time.
        alone = isinstance(store, Transactional)
        self.creates = CreatePool(1 if alone else options.create_workers)
        self._sync_batch = 1 if alone else options.sync_batch
        self.clock = clock
        self.recorder = recorder
        self.observer = options.observer or Observer()
        #: per flow, when each entry's dependencies were met (monotonic), by vcjob name,
        #: until its vcjob is created; and when the flow was first seen (its roots' time)
        self.met_at: dict[FlowKey, dict[str, float]] = {}
        self.seen_at: dict[FlowKey, float] = {}
        self.prober: Prober = options.prober or SocketProber()
        self.scheduling_mode = scheduling.Scheduling(options.sla, options.ladder)  # (operator)
        self.queue: WorkQueue[FlowKey] = WorkQueue(clock)
        self.indexes: dict[FlowKey, reconcile.FlowIndex] = {}
        #: by flow uid: the last phase of each vcjob of that flow object deleted while it
        #: had no index, for its next full plan (by uid, not name: a flow deleted and
        #: created again must not inherit the outcomes of the earlier one's vcjobs)
        self.tombstones: dict[str, dict[str, str]] = {}
        self.last_error: str | None = None
        #: the latest JobFlow seen (watch events, our own writes): what a sync reads
        self.cache: dict[FlowKey, JobFlow] = {}
        #: vcjob ADDED events not yet given to the flow's index (with their time)
        self.added: dict[FlowKey, list[tuple[VCJob, datetime]]] = {}
        #: flows whose last sync stopped at `create_batch`, synced again at `requeue_deferred`
        self.deferred: dict[FlowKey, None] = {}
        self.retrying: set[FlowKey] = set()
        #: the flows whose status waits to be written, and when each is due
        self.status_due: StatusDue[FlowKey] = StatusDue(
            clock, options.status_interval, options.phase_interval
        )
        #: the status each flow has in the store, as we wrote it, and that write's rv
        self.written: dict[FlowKey, tuple[int, dict[str, Any]]] = {}
        self.queue_watch = QueueWatch(store, options.capacity, recorder)  # (`admission: Hold`)
        self.watches = self.queue_watch.watched(self.watches)

    # -- event routing -----------------------------------------------------------------------

    name = "jobflow"

    def queue_depth(self) -> int:
        return len(self.queue)

    def resync(self) -> None:
        """Queue every flow (start-up): each gets a full plan on its first sync."""
        self._forget_all()
        seen = self.clock.monotonic()
        for flow in self.store.list(JobFlow):
            key = FlowKey(flow.namespace, flow.name)
            self.cache[key] = flow
            self.seen_at[key] = seen
            self.queue.add(key)
        live = {flow.metadata.uid for flow in self.cache.values()}
        for uid in [u for u in self.tombstones if u not in live]:
            del self.tombstones[uid]  # (flows deleted while the watch was not read)

    #: the kinds whose events `handle` takes
    watches: tuple[type[Resource], ...] = (VCJob, JobFlow)

    def handle(self, event: WatchEvent) -> None:
        if event.model is JobFlow and event.type is EventType.MODIFIED:
            cached = self.cache.get(FlowKey(event.namespace, event.name))
            if cached is not None and _rv(cached) >= event.resource_version:
                return  # our own status write, cached as written: not parsed again
        if event.model is JobTemplate and not self._waited_for(event):
            return  # (most are our own template status writes): not parsed
        obj = event.object
        if isinstance(obj, Queue):
            for key in self.queue_watch.queues_changed(self.indexes):
                self.queue.add(key)  # (a flow it held is checked again)
        elif isinstance(obj, VCJob):
            self._handle_job(event.type, obj)
        elif isinstance(obj, JobFlow):
            key = FlowKey(obj.namespace, obj.name)
            if event.type == EventType.DELETED:
                if self._holds(key, obj.metadata.uid):
                    self._drop(key)
                self.tombstones.pop(obj.metadata.uid, None)
                return
            self._cache(key, obj, event.resource_version)
            if event.type == EventType.ADDED:
                self.seen_at.setdefault(key, self.clock.monotonic())
                self.queue.add(key)
            elif event.type == EventType.MODIFIED and self._request_changed(key, obj):
                self.queue.add(key)
        elif isinstance(obj, JobTemplate) and event.type != EventType.DELETED:
            for key, index in self.indexes.items():
                if key.namespace == obj.namespace and obj.name in index.template_waiters:
                    index.template_appeared(obj.name)
                    self.queue.add(key)

    def _waited_for(self, event: WatchEvent) -> bool:
        """A flow of the template's namespace waits for a template of that name."""
        return any(
            key.namespace == event.namespace and event.name in index.template_waiters
            for key, index in self.indexes.items()
        )

    def _holds(self, key: FlowKey, uid: str) -> bool:
        """The flow object of that uid is the one cached under its name (or none is)."""
        return self._cached_uid(key) in (None, uid)

    def _cached_uid(self, key: FlowKey) -> str | None:
        cached = self.cache.get(key)
        return None if cached is None else cached.metadata.uid

    def _cache(self, key: FlowKey, flow: JobFlow, rv: int) -> None:
        """Keep the newest state of a flow; a write after our last status write (someone
        else's) means we no longer know the stored status. Another object of the same name
        (deleted and created again, its DELETED event not seen) starts afresh: nothing
        kept for the earlier object carries over."""
        cached = self.cache.get(key)
        if cached is not None and cached.metadata.uid != flow.metadata.uid:
            if _rv(cached) > rv:
                return  # the earlier object's late event
            self._drop(key)
            cached = None
        if cached is None or _rv(cached) <= rv:
            self.cache[key] = flow
        written = self.written.get(key)
        if written is not None and written[0] < rv:
            del self.written[key]

    def _drop(self, key: FlowKey) -> None:
        self.indexes.pop(key, None)
        self.deferred.pop(key, None)
        self.cache.pop(key, None)
        self.added.pop(key, None)
        self.status_due.drop(key)
        self.written.pop(key, None)
        self.met_at.pop(key, None)
        self.seen_at.pop(key, None)
        self.retrying.discard(key)
        self.queue.forget(key)  # (a new flow of that name starts without a backoff)

    def _forget_all(self) -> None:
        self.queue_watch.forget()  # (Queue events may have been missed: listed again)
        self.indexes.clear()
        self.deferred.clear()
        self.cache.clear()
        self.added.clear()
        self.status_due.clear()
        self.written.clear()
        self.met_at.clear()
        self.seen_at.clear()

    def _request_changed(self, key: FlowKey, flow: JobFlow) -> bool:
        """A stop or a `vcflow retry` was asked for (or the flow is new to us)."""
        index = self.indexes.get(key)
        if index is None:
            return True
        annotations = flow.metadata.annotations
        asked = reconcile.STOP_ANNOTATION in annotations
        retry = annotations.get(reconcile.RETRY_ANNOTATION)
        before = index.flow.metadata.annotations.get(reconcile.RETRY_ANNOTATION)
        return (asked and not index.stopping) or retry != before

    def _handle_job(self, type_: EventType, job: VCJob) -> None:
        ref = job.metadata.controller_ref()
        if ref is None or ref.kind != "JobFlow" or ref.api_version != names.FLOW_API_VERSION:
            if type_ == EventType.DELETED:
                self._foreign_gone(job)
            return
        key = FlowKey(job.namespace, ref.name)
        index = self.indexes.get(key)
        now = self.clock.now()
        if type_ == EventType.ADDED:
            # No sync for a creation (Volcano has no Add handler): the index sees it at the
            # flow's next event or sync, so statuses stay what a sync saw.
            if index is not None:
                self.added.setdefault(key, []).append((job, now))
            return
        if type_ == EventType.DELETED:
            self._foreign_gone(job)  # it may have held another flow's generated name
            if index is not None:
                if index.flow.metadata.uid == ref.uid:  # (else an earlier flow's vcjob)
                    self._catch_up(key, index)
                    index.forget(job.name, job.phase, now)
            elif self._cached_uid(key) == ref.uid and ref.uid:  # (its flow not synced yet)
                self.tombstones.setdefault(ref.uid, {})[job.name] = job.phase
            self.queue.add(key)
            return
        ended = False
        if index is not None:
            self._catch_up(key, index)
            before = flowactions.phase_seen(index, job.name)
            index.observe(job, now)  # (an earlier flow's vcjob holds the name: NameConflict)
            if index.flow.metadata.uid == ref.uid:
                self._note_met(key, index, job.name)
                flowactions.attempt_failed(self.recorder, index, job, before)
                ended = job.phase in FINISHED_JOB_PHASES and before != job.phase
        # a vcjob that finished moves its flow ahead of the flows waiting: its successors'
        # creates, or its new phase, do not wait behind a burst of new flows
        self.queue.add(key, first=ended)

    def _note_met(self, key: FlowKey, index: reconcile.FlowIndex, job: str) -> None:
        """Remember when the successors this job's change made ready were met: O(its
        successors)."""
        entry = index.by_job.get(job)
        if entry is None or not entry.successors:
            return
        met = self.met_at.setdefault(key, {})
        when = self.clock.monotonic()
        for name in entry.successors:
            if name in index.candidates:
                met.setdefault(index.entries[name].job, when)

    def _foreign_gone(self, job: VCJob) -> None:
        """A vcjob no flow controls was deleted: an entry waiting on NameConflict for that
        name may now be created (row 12)."""
        for key, index in self.indexes.items():
            if key.namespace == job.namespace and index.conflict_gone(job.name):
                self.queue.add(key)

    def _catch_up(self, key: FlowKey, index: reconcile.FlowIndex) -> None:
        """Give the index the vcjob creations it has not seen yet, in order."""
        for job, when in self.added.pop(key, ()):
            index.observe(job, when)

    # -- sync ------------------------------------------------------------------------------

    def process_one(self) -> bool:
        """Sync the next ready flows — up to `sync_batch` of them, the vcjobs they create
        posted together; False when none is ready."""
        keys: list[FlowKey] = []
        while len(keys) < self._sync_batch and (key := self.queue.get()) is not None:
            keys.append(key)
        if not keys:
            return False
        started = []
        for key in keys:
            steps = self._syncing(key)
            ready = self._step(key, steps, None)
            if ready is not None:
                started.append((key, steps, ready))
        jobs = [job for _, _, ready in started for job in ready]
        answers = iter(self.creates.each(self.store.create, jobs))
        for key, steps, ready in started:
            self._step(key, steps, [(job, next(answers)) for job in ready])
        return True

    def _step(
        self, key: FlowKey, steps: _Sync, answers: list[_Answered] | None
    ) -> list[VCJob] | None:
        """A step of a flow's sync (`_syncing`): its start (`answers` None), which gives the
        vcjobs to create, or its rest once they were answered; its end or failure noted."""
        try:
            return next(steps) if answers is None else steps.send(answers)
        except StopIteration:
            self._synced(key)
        except (Conflict, StoreError) as exc:
            self._failed(key, exc)
        return None

    def _synced(self, key: FlowKey) -> None:
        self.last_error = None
        if key in self.retrying:  # CreateFailed: retried with a growing backoff (row 9)
            self.retrying.discard(key)
            self.queue.add_rate_limited(key)
        else:
            self.queue.forget(key)

    def _syncing(self, key: FlowKey) -> _Sync:
        """A flow's sync, in two steps: it yields the vcjobs to create, is sent each one's
        answer (the vcjob created, or the error its create raised), and carries on — so the
        creates of several flows' syncs are posted together (`process_one`)."""
        flow = self.cache.get(key)
        if flow is None:  # deleted (its DELETED event dropped it from the cache)
            self.indexes.pop(key, None)
            return
        templates = Templates(self.store, key.namespace)
        index = self.indexes.get(key)
        if index is None or index.flow.metadata.uid != flow.metadata.uid:
            self.added.pop(key, None)  # the full plan lists the vcjobs itself
            index, plan = self._full_plan(flow, templates, key)
        else:
            self._catch_up(key, index)
            index.flow = flow
            self._read_outputs(index)
            self.queue_watch.recheck(index, flow, templates)
            plan = index.decide(templates, self.options.create_batch, now=self.clock.now())
        retry = False
        with batched(self.store):
            answers = yield self._ready(index, plan, key)
            for job, answer in answers:
                if isinstance(answer, Exception) and not isinstance(answer, Refusal):
                    raise answer  # (a store error: the sync fails here, as one by one)
                refused = answer if isinstance(answer, Refusal) else None
                retry |= not self._created(index, job, flow, refused)
            for name in plan.terminate:
                flowactions.terminate_for_deadline(
                    self.store, self.recorder, flow, name, self.clock.now()
                )
        if retry:
            self.retrying.add(key)
        flowactions.tell_conflicts(self.recorder, index)
        self._remove(index, plan, flow)
        if self._read_outputs(index):
            self.queue.add(key)  # entries that waited for these outputs may be created now
        if self._probe(index):
            self.queue.add(key)  # a probe met a dependency: its entry may be created now
        self._arm(key, index)
        if plan.more:
            self.deferred[key] = None
        self.status_due.mark(key, phase_changed=str(index.phase) != flow.phase)

    def _full_plan(
        self, flow: JobFlow, templates: Mapping[str, JobTemplate], key: FlowKey
    ) -> tuple[reconcile.FlowIndex, reconcile.Plan]:
        selector = {names.LABEL_CREATED_BY_FLOW: names.created_by_value(flow.namespace, flow.name)}
        jobs = {j.name: j for j in self.store.list(VCJob, flow.namespace, selector)}
        for entry in flow.flows:
            name = names.job_name(flow.name, entry.name)
            if name not in jobs:
                with contextlib.suppress(NotFound):
                    jobs[name] = self.store.get(VCJob, flow.namespace, name)
        index, plan = reconcile.plan(
            flow,
            templates,
            jobs.values(),
            now=self.clock.now(),
            tombstones=self.tombstones.pop(flow.metadata.uid, None),
            limit=self.options.create_batch,
            platform=self.options.platform,
            held=self.queue_watch.why(flow, templates),
        )
        self.indexes[key] = index
        self.queue_watch.tell(flow, index.state.scheduling.held)
        return index, plan

    def _ready(self, index: reconcile.FlowIndex, plan: reconcile.Plan, key: FlowKey) -> list[VCJob]:
        """The vcjobs of the plan to create now: not those whose earlier attempt's pods
        remain (they wait)."""
        ready = []
        for job in plan.create:
            if flowactions.pods_remain(self.store, job):
                index.defer_create(job.name, flowactions.PODS_REMAIN)
                self.queue.add_after(key, flowactions.POD_WAIT)
                continue
            ready.append(self.scheduling_mode.stamp(job, index.flow, self.clock.now()))
        return ready

    def _remove(self, index: reconcile.FlowIndex, plan: reconcile.Plan, flow: JobFlow) -> None:
        """Delete the vcjobs the plan removes: its retained-no-more and its failed attempts
        whose retry is due."""
        for name in plan.delete:
            phase = flowactions.delete_job(self.store, index, flow.namespace, name)
            if phase is not None:
                index.forget(name, phase, self.clock.now())
        for name in plan.replace:  # a failed attempt whose retry is due
            phase = flowactions.delete_job(self.store, index, flow.namespace, name)
            index.forget(name, phase or "", self.clock.now())

    def _read_outputs(self, index: reconcile.FlowIndex) -> bool:
        """Give the index the outputs of the entries that completed since it last asked
        (read from their pods); True when it asked for any."""
        jobs = index.outputs_to_read()
        for name in jobs:
            found = flowactions.read_outputs(self.store, index.flow.namespace, name)
            index.give_outputs(name, found, self.clock.now())
        return bool(jobs)

    def _probe(self, index: reconcile.FlowIndex) -> bool:
        """Run the probe rounds the decision found due; True when one met its dependency."""
        met = False
        flow = index.flow
        for round_ in index.take_probes():
            ok, note = True, ""
            job = names.job_name(flow.name, round_.target)
            for check in round_.checks:
                ok, note = self.prober.check(replace(check, namespace=flow.namespace, job=job))
                if not ok:
                    break
            met |= index.probe_result(round_.entry, round_.target, ok, note, self.clock.now())
        return met

    def _arm(self, key: FlowKey, index: reconcile.FlowIndex) -> None:
        """The flow's next timer (or its ladder's next step) is a delayed sync of its key."""
        wait = self.scheduling_mode.next_wait(self.store, index, self.clock.now())
        if wait is not None:
            self.queue.add_after(key, wait)

    def close(self) -> None:
        """Stop the request workers (if any)."""
        self.creates.close()

    def _created(
        self, index: reconcile.FlowIndex, job: VCJob, flow: JobFlow, refused: Refusal | None
    ) -> bool:
        """Note one vcjob's create; False when it must be retried (CreateFailed, row 9)."""
        if isinstance(refused, AlreadyExists):
            existing = self.store.get(VCJob, job.namespace, job.name)
            if jobbuild.is_owned_by(existing, flow):
                index.mark_created(job.name)
            else:
                index.mark_conflict(existing)
            return True
        if refused is not None:
            index.mark_create_failed(job.name, str(refused).replace("\n", "; "))
            return False
        index.mark_created(job.name)
        self._report_created(index, FlowKey(flow.namespace, flow.name), job.name)
        self.recorder.record(flow, NORMAL, "Created", f"create a job named {job.name}!")
        return True

    def _report_created(self, index: reconcile.FlowIndex, key: FlowKey, job: str) -> None:
        """Tell the observer how long the vcjob waited since its dependencies were met
        (an entry without any: since the flow was first seen; one whose meeting this
        controller did not see, after a restart, is not reported)."""
        met = self.met_at.get(key, {}).pop(job, None)
        entry = index.by_job.get(job)
        if met is None and entry is not None and not entry.targets:
            met = self.seen_at.get(key)
        if met is not None:
            self.observer.vcjob_created(max(self.clock.monotonic() - met, 0.0))

    def requeue_deferred(self) -> None:
        """Queue the flows whose last sync stopped at `create_batch`."""
        for key in self.deferred:
            self.queue.add(key)
        self.deferred.clear()

    # -- status ------------------------------------------------------------------------------

    def flush_due(self) -> bool:
        """Some dirty status is due (the manager then flushes mid-burst:
        `flush(due_only=True)`)."""
        return self.status_due.due()

    def flush_wait(self) -> float | None:
        """Seconds until a dirty status is due (None: none is dirty), on the clock."""
        return self.status_due.wait()

    def flush(self, *, due_only: bool = False) -> bool:
        """Write the status of every dirty flow not waiting to sync (when the manager is
        idle, none is) — with `due_only`, of those that are due — the writes at once where
        the store takes them so; True if anything was written."""
        began = self.clock.monotonic()
        keys, every = self.status_due.to_write(due_only=due_only)
        writes: list[tuple[FlowKey, JobFlow, dict[str, Any]]] = []
        for key in keys:
            if self.queue.is_ready(key):
                continue  # its next sync comes first: the index is ahead of any sync
            self.status_due.written(key)
            write = self._status_to_write(key)
            if write is not None:
                writes.append((key, *write))
        answers = self.creates.each(
            lambda w: statuswrite.put_status(self.store, w[1], w[2]), writes
        )
        wrote = False
        for (key, _, data), answer in zip(writes, answers, strict=True):
            if isinstance(answer, (Conflict, StoreError, ValidationFailed)):  # (too large)
                self._failed(key, answer)
            elif isinstance(answer, Exception):
                raise answer
            elif answer is not None:
                wrote = True
                self.cache[key] = answer
                self.indexes[key].flow = answer
                self.written[key] = (statuswrite.resource_version(answer), data)
        self.status_due.flushed(every=every, wrote=wrote, began=began)
        return wrote

    def _status_to_write(self, key: FlowKey) -> tuple[JobFlow, dict[str, Any]] | None:
        """The flow and the status to write for it; None when the store holds that status
        already (or another flow of that name is cached: its sync builds its index first)."""
        index, flow = self.indexes.get(key), self.cache.get(key)
        if index is None or flow is None or index.flow.metadata.uid != flow.metadata.uid:
            return None
        data = index.status_data()
        known = self.written.get(key)
        if known is None:
            stored = flow.status.to_dict() if flow.status is not None else None
            known = (_rv(flow), stored) if stored is not None else None
        if known is not None and known[1] == data:
            self.written[key] = known
            return None
        return flow, data

    def _failed(self, key: FlowKey, exc: Exception) -> None:
        """A failed sync: retried with backoff, never dropped; after WARN_AFTER failures in a
        row the flow gets a Warning event and a condition saying why."""
        self.last_error = f"sync jobflow {key.name} failed for {exc}"
        self.indexes.pop(key, None)  # rebuild from the store: the index may be ahead of it
        self.added.pop(key, None)
        self.queue.add_rate_limited(key)
        if self.queue.failures(key) != WARN_AFTER:
            return
        try:
            flow = self.store.get(JobFlow, key.namespace, key.name)
            if not self._holds(key, flow.metadata.uid):
                return  # created again since: the failures were the earlier flow's
            self.recorder.record(flow, WARNING, "SyncJobFlow", self.last_error)
            status = flow.status.clone() if flow.status else None
            if status is not None:
                status.conditions = dict(status.conditions or {})
                status.conditions[key.name] = Condition(
                    phase="SyncFailed", reason="SyncJobFlow", message=self.last_error
                )
                flow.status = status
                self.store.update_status(flow)
        except (StoreError, ValidationFailed):
            pass  # the store itself is failing (or refuses the status); the retry goes on


def _rv(obj: JobFlow) -> int:
    return int(obj.metadata.resource_version or 0)
