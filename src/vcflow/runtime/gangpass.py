"""Which jobs the runtime's gang-scheduler pass looks at, kept as jobs and pods change: a
pass costs the jobs waiting to start (`gang.needs_pass`), not every job running. The
executor marks what changed (`touch`, `dirty`) and carries out the placement. Also what a
pass reads besides jobs and pods — the Queues and PriorityClasses (`schedinputs`), the
hand-over holds (`handovers`) — and each waiting job's reason, kept so that a job's
condition is rewritten only when the kind of its wait changes, not at every pass."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from fractions import Fraction

from vcflow.api import names
from vcflow.api.errors import NotFound
from vcflow.api.jobflow import JobFlow
from vcflow.reconcile.vcjob import gang
from vcflow.reconcile.vcjob import resources as jobres
from vcflow.reconcile.vcjob.model import Group
from vcflow.reconcile.vcjob.queueing import WaitKind
from vcflow.runtime.handovers import Handovers
from vcflow.runtime.jobrecord import JobRecord
from vcflow.runtime.podcache import PodCache
from vcflow.runtime.schedinputs import SchedulingInputs
from vcflow.store.base import Reader

Key = names.ObjectKey
#: how often the flows of live hand-over holds are looked up in the store
RECHECK = timedelta(seconds=1)


class GangPass:
    def __init__(
        self, capacity: jobres.Capacity, priorities: Mapping[str, int], store: Reader
    ) -> None:
        self.capacity = capacity
        self.store = store
        self.inputs = SchedulingInputs(priorities)
        self.handovers = Handovers()
        self.recheck_at: datetime | None = None  # when held flows are looked up next
        self.needy: set[Key] = set()  # jobs a pass must look at
        self.touched: set[Key] = set()  # jobs changed since the last pass
        self.dirty = True  # a job changed in a way the scheduler looks at

    def touch(self, key: Key) -> None:
        self.touched.add(key)

    def forget(self, key: Key) -> None:
        """A job gone from the runtime's caches (deleted, retired)."""
        self.needy.discard(key)
        self.touched.discard(key)

    def forget_all(self) -> None:
        """The runtime lists the store again (its watch expired)."""
        self.needy.clear()
        self.touched.clear()

    def next_due(self) -> datetime | None:
        """When the earliest hand-over hold expires, or its flows are looked at again."""
        holds = self.handovers.holds
        if not holds:
            return None
        due = holds.next_due()
        if self.recheck_at is not None and (due is None or self.recheck_at < due):
            return self.recheck_at
        return due

    def expire(self, now: datetime) -> bool:
        """The holds' timers: drop those due at `now`, and every `RECHECK` while there are
        holds those of flows that stopped or are gone (a flow's end need not change any
        vcjob this runtime sees); True if a timer fired."""
        changed = fired = self.handovers.expire(now)
        if not self.handovers.holds:
            self.recheck_at = None
        elif self.recheck_at is None or self.recheck_at <= now:
            fired |= self.recheck_at is not None
            changed |= self.handovers.drop_stopped(self._flow)
            self.recheck_at = now + RECHECK
        if changed:
            self.dirty = True
        return fired

    def place(
        self, jobs: Mapping[Key, JobRecord], cache: PodCache, now: datetime
    ) -> gang.Placement | None:
        """One pass over the jobs that need one, None when nothing changed or none waits."""
        if not (self.dirty or cache.dirty):
            return None
        self.dirty = cache.dirty = False
        touched = cache.touched  # (the jobs whose pods changed, and those that changed)
        touched |= self.touched
        self.touched.clear()
        free = jobres.minus(self.capacity, jobres.add(cache.used, self._held()))
        for key in touched:
            record = jobs.get(key)
            if record is not None and self.handovers.job_seen(record, cache.of_job(key), free, now):
                free = jobres.minus(self.capacity, jobres.add(cache.used, self._held()))
            if record is not None and gang.needs_pass(
                gang.GangJob(record.job, record.group), cache.of_job(key)
            ):
                self.needy.add(key)
            else:
                self.needy.discard(key)
        touched.clear()
        needy = sorted((jobs[k] for k in self.needy), key=lambda r: r.seq)
        if not needy:
            return None
        if self.handovers.holds:
            self.handovers.drop_stopped(self._flow)
        placement = gang.schedule(
            [gang.GangJob(r.job, r.group) for r in needy],
            {r.job.key: cache.of_job(r.job.key) for r in needy},
            self.capacity,
            used=cache.used,
            policy=gang.Policy(
                queues=self.inputs.queues,
                priorities=self.inputs.priorities,
                holds=self.handovers.holds,
                queue_used=cache.used_by_queue,
            ),
        )
        self.handovers.holds = placement.holds
        return placement

    def decided(self, placement: gang.Placement, jobs: Mapping[Key, JobRecord]) -> list[Key]:
        """Record the pass's decisions on the jobs: the ones admitted, and the waiting ones
        whose reason changed — never-fits, or the kind of wait (its figures alone do not
        rewrite a condition at every pass). The jobs to sync for it."""
        told = list(placement.admitted)
        for key in placement.admitted:
            record = jobs[key]
            record.group, record.waiting, record.wait_kind = Group.ADMITTED, "", None
            self.touch(key)
            # its pods are placed by the next pass: those the job creates now, and those it
            # had already (created before a restart of the runtime, or before it stopped)
            self.dirty = True
        for key, never in placement.unschedulable.items():
            record = jobs[key]
            wait = placement.waits.get(key)
            kind = wait.kind if wait is not None else None
            if record.unschedulable != never or record.wait_kind != kind:
                record.unschedulable, record.wait_kind = never, kind
                shown = wait is not None and kind is not WaitKind.NEVER_FITS
                record.waiting = wait.message if shown and wait is not None else ""
                told.append(key)
        return told

    def _held(self) -> dict[str, Fraction]:
        return self.handovers.holds.against(None)

    def _flow(self, namespace: str, name: str) -> JobFlow | None:
        try:
            return self.store.get(JobFlow, namespace, name)
        except NotFound:
            return None
