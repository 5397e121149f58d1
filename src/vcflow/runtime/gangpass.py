"""Which jobs the runtime's gang-scheduler pass looks at, kept as jobs and pods change: a
pass costs the jobs waiting to start (`gang.needs_pass`), not every job running. The
executor marks what changed (`touch`, `dirty`) and carries out the placement. Also what a
pass reads besides jobs and pods — the Queues and PriorityClasses (`schedinputs`), the
hand-over holds (`handovers`) — and each waiting job's reason, kept so that a job's
condition is rewritten only when the kind of its wait changes, not at every pass."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from fractions import Fraction

from vcflow.api import names
from vcflow.api.errors import NotFound
from vcflow.api.jobflow import JobFlow
from vcflow.reconcile.vcjob import gang
from vcflow.reconcile.vcjob import resources as jobres
from vcflow.reconcile.vcjob.queueing import WaitKind
from vcflow.runtime.handovers import Handovers
from vcflow.runtime.jobrecord import JobRecord
from vcflow.runtime.podcache import PodCache
from vcflow.runtime.schedinputs import SchedulingInputs
from vcflow.store.base import Reader

Key = names.ObjectKey


class GangPass:
    def __init__(
        self, capacity: jobres.Capacity, priorities: Mapping[str, int], store: Reader
    ) -> None:
        self.capacity = capacity
        self.store = store
        self.inputs = SchedulingInputs(priorities)
        self.handovers = Handovers()
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
        """When the earliest hand-over hold expires."""
        return self.handovers.holds.next_due()

    def expire(self, now: datetime) -> bool:
        """Drop the holds due at `now` (a timer); True if one went."""
        if self.handovers.expire(now):
            self.dirty = True
            return True
        return False

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

    def verdicts(self, placement: gang.Placement, jobs: Mapping[Key, JobRecord]) -> Iterator[Key]:
        """The waiting jobs whose reason changed — never-fits, or the kind of wait — for a
        sync that writes it to their condition; each job's reason kept on its record."""
        for key, never in placement.unschedulable.items():
            record = jobs[key]
            wait = placement.waits.get(key)
            kind = wait.kind if wait is not None else None
            if record.unschedulable != never or record.wait_kind != kind:
                record.unschedulable = never
                record.wait_kind = kind
                known = wait is not None and kind is not WaitKind.NEVER_FITS
                record.waiting = wait.message if known and wait is not None else ""
                yield key

    def _held(self) -> dict[str, Fraction]:
        return self.handovers.holds.against(None)

    def _flow(self, namespace: str, name: str) -> JobFlow | None:
        try:
            return self.store.get(JobFlow, namespace, name)
        except NotFound:
            return None
