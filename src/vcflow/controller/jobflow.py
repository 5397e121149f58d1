"""The JobFlow controller: routes store events to per-flow indexes and syncs flows.

`sync(key)`: read the flow → (first sight: a full `reconcile.flow.plan`; after: the index's
incremental `decide`) → create/delete vcjobs → write status last. A vcjob's change costs
O(its edges) (`FlowIndex.observe`); the O(flow) status render runs once per sync, and syncs
of a busy flow collapse in the queue. Retryable problems requeue with backoff; nothing is
dropped (SEMANTICS row 9).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from vcflow.api import clock as clocks
from vcflow.api import names
from vcflow.api.errors import AlreadyExists, Conflict, InputError, NotFound, StoreError
from vcflow.api.jobflow import Condition, JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.vcjob import VCJob
from vcflow.controller.events import NORMAL, WARNING, Recorder
from vcflow.controller.queue import WorkQueue
from vcflow.reconcile import flow as reconcile
from vcflow.reconcile import jobs as jobbuild
from vcflow.store.base import EventType, Store, WatchEvent

#: Consecutive failures after which a flow gets a Warning event and a condition.
WARN_AFTER = 16


@dataclass(frozen=True)
class FlowKey:
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


class _Templates(Mapping[str, JobTemplate]):
    """JobTemplates of one namespace, read from the store on demand (no full list per sync)."""

    def __init__(self, store: Store, namespace: str) -> None:
        self._store = store
        self._ns = namespace

    def __getitem__(self, name: str) -> JobTemplate:
        try:
            return self._store.get(JobTemplate, self._ns, name)
        except NotFound:
            raise KeyError(name) from None

    def __iter__(self) -> Iterator[str]:
        return iter(t.name for t in self._store.list(JobTemplate, self._ns))

    def __len__(self) -> int:
        return len(self._store.list(JobTemplate, self._ns))


class FlowController:
    def __init__(self, store: Store, clock: clocks.Clock, recorder: Recorder) -> None:
        self.store = store
        self.clock = clock
        self.recorder = recorder
        self.queue: WorkQueue[FlowKey] = WorkQueue(clock)
        self.indexes: dict[FlowKey, reconcile.FlowIndex] = {}
        self.tombstones: dict[FlowKey, dict[str, str]] = {}
        self.last_error: str | None = None

    # -- event routing -----------------------------------------------------------------------

    def resync(self) -> None:
        """Queue every flow (start-up): each gets a full plan on its first sync."""
        self.indexes.clear()
        for flow in self.store.list(JobFlow):
            self.queue.add(FlowKey(flow.namespace, flow.name))

    def handle(self, event: WatchEvent) -> None:
        obj = event.object
        if isinstance(obj, VCJob):
            self._handle_job(event.type, obj)
        elif isinstance(obj, JobFlow):
            key = FlowKey(obj.namespace, obj.name)
            if event.type == EventType.ADDED:
                self.queue.add(key)
            elif event.type == EventType.MODIFIED and self._stop_requested(key, obj):
                self.queue.add(key)
            elif event.type == EventType.DELETED:
                self.indexes.pop(key, None)
                self.tombstones.pop(key, None)
        elif isinstance(obj, JobTemplate) and event.type != EventType.DELETED:
            for key, index in self.indexes.items():
                if key.namespace == obj.namespace and obj.name in index.template_waiters:
                    index.template_appeared(obj.name)
                    self.queue.add(key)

    def _stop_requested(self, key: FlowKey, flow: JobFlow) -> bool:
        index = self.indexes.get(key)
        asked = reconcile.STOP_ANNOTATION in flow.metadata.annotations
        return index is None or (asked and not index.stopping)

    def _handle_job(self, type_: EventType, job: VCJob) -> None:
        ref = job.metadata.controller_ref()
        if ref is None or ref.kind != "JobFlow" or ref.api_version != names.FLOW_API_VERSION:
            return
        key = FlowKey(job.namespace, ref.name)
        index = self.indexes.get(key)
        now = self.clock.now()
        if type_ == EventType.DELETED:
            if index is not None:
                index.forget(job.name, job.phase, now)
            else:
                self.tombstones.setdefault(key, {})[job.name] = job.phase
            self.queue.add(key)
            return
        if index is not None:
            index.observe(job, now)
        if type_ == EventType.MODIFIED:
            self.queue.add(key)

    # -- sync ------------------------------------------------------------------------------

    def process_one(self) -> bool:
        """Sync the next ready flow; False when none is ready."""
        key = self.queue.get()
        if key is None:
            return False
        try:
            self.sync(key)
        except (Conflict, StoreError) as exc:
            self._failed(key, exc)
        else:
            self.queue.forget(key)
            self.last_error = None
        return True

    def sync(self, key: FlowKey) -> None:
        try:
            flow = self.store.get(JobFlow, key.namespace, key.name)
        except NotFound:
            self.indexes.pop(key, None)
            return
        templates = _Templates(self.store, key.namespace)
        index = self.indexes.get(key)
        if index is None or index.flow.metadata.uid != flow.metadata.uid:
            index, plan = self._full_plan(flow, templates, key)
        else:
            index.flow = flow
            plan = index.decide(templates)
        self._apply(index, plan, flow)
        self._write_status(index, flow)

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
            tombstones=self.tombstones.pop(key, None),
        )
        self.indexes[key] = index
        return index, plan

    def _apply(self, index: reconcile.FlowIndex, plan: reconcile.Plan, flow: JobFlow) -> None:
        retry = False
        with self.store.transaction():
            for job in plan.create:
                retry |= not self._create(index, job, flow)
        for name in plan.delete:
            with contextlib.suppress(NotFound):
                self.store.delete(VCJob, flow.namespace, name, force=True)
            index.forget(name, "Completed", self.clock.now())
        if retry:
            self.queue.add_rate_limited(FlowKey(flow.namespace, flow.name))

    def _create(self, index: reconcile.FlowIndex, job: VCJob, flow: JobFlow) -> bool:
        """Create one vcjob; False when it must be retried (CreateFailed, row 9)."""
        try:
            self.store.create(job)
        except AlreadyExists:
            existing = self.store.get(VCJob, job.namespace, job.name)
            if jobbuild.is_owned_by(existing, flow):
                index.mark_created(job.name)
            else:
                index.mark_conflict(existing)
            return True
        except InputError as exc:
            index.mark_create_failed(job.name, str(exc).replace("\n", "; "))
            return False
        index.mark_created(job.name)
        self.recorder.record(flow, NORMAL, "Created", f"create a job named {job.name}!")
        return True

    def _write_status(self, index: reconcile.FlowIndex, flow: JobFlow) -> None:
        status = index.status()
        if flow.status is not None and status.to_dict() == flow.status.to_dict():
            return
        flow.status = status
        index.flow = self.store.update_status(flow)

    def _failed(self, key: FlowKey, exc: Exception) -> None:
        """A failed sync: retried with backoff, never dropped; after WARN_AFTER failures in a
        row the flow gets a Warning event and a condition saying why."""
        self.last_error = f"sync jobflow {key.name} failed for {exc}"
        self.indexes.pop(key, None)  # rebuild from the store: the index may be ahead of it
        self.queue.add_rate_limited(key)
        if self.queue.failures(key) != WARN_AFTER:
            return
        try:
            flow = self.store.get(JobFlow, key.namespace, key.name)
            self.recorder.record(flow, WARNING, "SyncJobFlow", self.last_error)
            status = flow.status.clone() if flow.status else None
            if status is not None:
                status.conditions = dict(status.conditions or {})
                status.conditions[key.name] = Condition(
                    phase="SyncFailed", reason="SyncJobFlow", message=self.last_error
                )
                flow.status = status
                self.store.update_status(flow)
        except StoreError:
            pass  # the store itself is failing; the retry will try again
