"""The runtime's hand-over holds (docs/scheduling.md, `handover`): when a vcjob with a
`vcflow.io/handover` annotation has ended and its pods hold nothing any more, what its
successors need (up to what its pods freed, and what is free) is held for its flow for
`holdSeconds` on the runtime's clock. The pure rules are `reconcile.vcjob.holds`; this keeps
the holds, expires them, and drops those of a flow that stopped or is gone — looked up in
the store only for flows with a live hold, since controller and runtime meet only there.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from fractions import Fraction

from vcflow.api import names
from vcflow.api.jobflow import JobFlow
from vcflow.api.phases import FINISHED_JOB_PHASES, FlowPhase
from vcflow.reconcile.vcjob import holds as holdrules
from vcflow.reconcile.vcjob import kubelet
from vcflow.reconcile.vcjob import resources as jobres
from vcflow.reconcile.vcjob.podset import PodSet
from vcflow.runtime.jobrecord import JobRecord

Key = names.ObjectKey
#: (namespace, name) → the stored JobFlow or None
FlowLookup = Callable[[str, str], JobFlow | None]
#: the phases of a flow whose holds are kept
_LIVE = frozenset({"", FlowPhase.PENDING, FlowPhase.RUNNING})


class Handovers:
    def __init__(self) -> None:
        self.holds = holdrules.NONE
        # the uids of the jobs whose end was handed over: kept when a job is retired (or
        # revived by a later event), so that one end holds once; dropped when it is gone
        self.handed: set[str] = set()
        self.where: dict[str, tuple[str, str]] = {}  # flow label value → (namespace, name)

    def job_seen(
        self, record: JobRecord, job_pods: PodSet, free: jobres.Capacity, now: datetime
    ) -> bool:
        """Hold for the job's flow if it has just ended with a hand-over; True if it did."""
        job = record.job
        if job.phase not in FINISHED_JOB_PHASES or job.metadata.uid in self.handed:
            return False
        wanted, flow = holdrules.handover_of(job), holdrules.flow_of(job)
        if wanted is None or flow is None:
            return False
        if any(p.placed and (p.deleting or p.phase in kubelet.ALIVE) for p in job_pods.values()):
            return False  # (its pods still hold their resources: once they are gone)
        self.handed.add(job.metadata.uid)
        freed = jobres.total(jobres.pod_request(p.spec) for p in job_pods.values() if p.placed)
        amount = {
            n: min(a, freed.get(n, Fraction(0)), _room(free, n)) for n, a in wanted.need.items()
        }
        before = self.holds
        self.holds = self.holds.add(flow, amount, now, wanted.hold_seconds)
        self.where[flow] = (job.namespace, flow.removeprefix(f"{job.namespace}."))
        return self.holds is not before

    def gone(self, uid: str) -> None:
        """The job of `uid` is deleted: its end will not be seen again."""
        self.handed.discard(uid)

    def expire(self, now: datetime) -> bool:
        """Drop the holds due at `now`; True if one went."""
        before, self.holds = self.holds, self.holds.expire(now)
        return self.holds is not before

    def drop_stopped(self, lookup: FlowLookup) -> bool:
        """Drop the holds of flows that stopped or are gone; True if one went."""
        dropped = False
        for hold in list(self.holds):
            namespace, name = self.where.get(hold.flow, ("", ""))
            flow = lookup(namespace, name) if name else None
            if flow is None or flow.phase not in _LIVE:
                self.holds = self.holds.drop(hold.flow)
                self.where.pop(hold.flow, None)
                dropped = True
        return dropped


def _room(free: jobres.Capacity, name: str) -> Fraction:
    limit = free.limit(name)
    return Fraction(10**18) if limit is None else max(limit, Fraction(0))
