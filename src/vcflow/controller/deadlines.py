"""The operator's `sla` mode in the flow controller: each vcjob gets its
`volcano.sh/sla-waiting-time` just before its create (`reconcile.slatime` decides it).
A flow's ranks are found once per flow object (its spec cannot change), so a create costs
O(1) after the flow's first. Used by `FlowController` when `ControllerOptions.sla` is set.
"""

from __future__ import annotations

from datetime import datetime

from vcflow.api.jobflow import JobFlow
from vcflow.api.vcjob import VCJob
from vcflow.reconcile import slatime

#: flows whose ranks are kept; past it the cache starts again (each flow's ranks are found
#: again at its next create: O(its entries), never wrong)
KEPT = 1024


class Deadlines:
    def __init__(self, policy: slatime.Policy) -> None:
        self.policy = policy
        self._ranks: dict[str, dict[str, float]] = {}

    def stamp(self, job: VCJob, flow: JobFlow, now: datetime) -> VCJob:
        """`job` with its waiting time (changed in place)."""
        uid = flow.metadata.uid or f"{flow.namespace}/{flow.name}"
        ranked = self._ranks.get(uid)
        if ranked is None:
            if len(self._ranks) >= KEPT:
                self._ranks.clear()
            ranked = self._ranks[uid] = slatime.ranks(flow)
        return slatime.stamped(job, flow, now, self.policy, ranked)
