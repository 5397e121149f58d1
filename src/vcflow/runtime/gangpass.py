"""Which jobs the runtime's gang-scheduler pass looks at, kept as jobs and pods change: a
pass costs the jobs waiting to start (`gang.needs_pass`), not every job running. The
executor marks what changed (`touch`, `dirty`) and carries out the placement."""

from __future__ import annotations

from collections.abc import Mapping

from vcflow.api import names
from vcflow.reconcile.vcjob import gang
from vcflow.reconcile.vcjob import resources as jobres
from vcflow.runtime.jobrecord import JobRecord
from vcflow.runtime.podcache import PodCache

Key = names.ObjectKey


class GangPass:
    def __init__(self, capacity: jobres.Capacity, priorities: Mapping[str, int]) -> None:
        self.capacity = capacity
        self.priorities = dict(priorities)
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

    def place(self, jobs: Mapping[Key, JobRecord], cache: PodCache) -> gang.Placement | None:
        """One pass over the jobs that need one, None when nothing changed or none waits."""
        if not (self.dirty or cache.dirty):
            return None
        self.dirty = cache.dirty = False
        touched = cache.touched  # (the jobs whose pods changed, and those that changed)
        touched |= self.touched
        self.touched.clear()
        for key in touched:
            record = jobs.get(key)
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
        return gang.schedule(
            [gang.GangJob(r.job, r.group) for r in needy],
            {r.job.key: cache.of_job(r.job.key) for r in needy},
            self.capacity,
            self.priorities,
            used=cache.used,
        )
