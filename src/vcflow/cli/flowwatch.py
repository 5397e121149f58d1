"""The flows `vcflow run` waits for, kept current from the store's JobFlow events.

A flow's status lists every one of its jobs, so reading the flows again at every turn of
the run loop would cost O(jobs) per turn — O(N²) over a long chain. The flows are read once;
after that each check reads only the JobFlow events written since (the controller writes a
flow's status in bursts, so they are few), and a full read only when the watch expired.
"""

from __future__ import annotations

from collections.abc import Mapping

from vcflow.api import names
from vcflow.api.jobflow import JobFlow
from vcflow.cli.runview import FLOW_ENDED
from vcflow.store.base import EventType, Expired, Store


class FlowWatch:
    def __init__(self, store: Store, flows: Mapping[names.ObjectKey, object]) -> None:
        self.store = store
        self.wanted = frozenset(flows)
        self.flows: dict[names.ObjectKey, JobFlow] = {}
        self.rv = 0
        self._relist()

    def _relist(self) -> None:
        self.rv = self.store.resource_version()
        self.flows = {f.key: f for f in self.store.list(JobFlow) if f.key in self.wanted}

    def refresh(self) -> bool:
        """Take in the flow changes since the last call; True if any flow changed."""
        latest = self.store.resource_version()
        try:
            found = self.store.events_since(self.rv, kinds=(JobFlow,))
        except Expired:
            self._relist()
            return True
        changed = False
        for event in found:
            flow = event.object
            if isinstance(flow, JobFlow) and flow.key in self.wanted:
                if event.type is EventType.DELETED:
                    self.flows.pop(flow.key, None)
                else:
                    self.flows[flow.key] = flow
                changed = True
        self.rv = max(latest, found[-1].resource_version if found else 0)
        return changed

    def current(self) -> list[JobFlow]:
        """The applied flows that still exist, by key."""
        return [self.flows[k] for k in sorted(self.flows)]

    def ended(self) -> bool:
        """True once a flow was deleted or every flow is Succeed or Failed."""
        if len(self.flows) < len(self.wanted):
            return True
        return all(f.phase in FLOW_ENDED for f in self.flows.values())
