"""The flows a local run waits for, kept current from the store's JobFlow events.

A flow's status lists every one of its jobs, so reading the flows again at every turn of
the run loop would cost O(jobs) per turn — O(N²) over a long chain. The flows are read once;
after that each check reads only the JobFlow events written since (the controller writes a
flow's status in bursts, so they are few), and for a watched flow that changed only its
phase (`Store.phase`, which does not parse the object). A full read happens only when the
watch expired.
"""

from __future__ import annotations

from collections.abc import Iterable

from vcflow.api import names
from vcflow.api.errors import NotFound
from vcflow.api.jobflow import JobFlow
from vcflow.api.phases import FlowPhase
from vcflow.store.base import Cursor, Expired, Store

FLOW_ENDED = frozenset({FlowPhase.SUCCEED, FlowPhase.FAILED})


class FlowWatch:
    def __init__(self, store: Store, flows: Iterable[names.ObjectKey]) -> None:
        self.store = store
        self.wanted = frozenset(flows)
        self.phases: dict[names.ObjectKey, str] = {}
        #: the watched flows written since the last `refresh` before this one
        self.touched: set[names.ObjectKey] = set()
        self.cursor = Cursor()
        self._relist()

    def _relist(self) -> None:
        self.cursor = Cursor.now(self.store)
        found = [f for f in self.store.list(JobFlow) if f.key in self.wanted]
        self.phases = {flow.key: flow.phase for flow in found}

    def refresh(self) -> bool:
        """Take in the flow changes since the last call; True if a flow's phase changed
        (or a flow went away)."""
        try:
            found, self.cursor = self.store.poll_events(self.cursor, (JobFlow,))
        except Expired:
            self._relist()
            return True
        touched = dict.fromkeys(e.key for e in found if e.key in self.wanted)
        self.touched = set(touched)
        changed = False
        for key in touched:
            namespace, _, name = key.partition("/")
            try:
                phase: str | None = self.store.phase(JobFlow, namespace, name)
            except NotFound:
                phase = None
            if phase is None:
                changed |= self.phases.pop(key, None) is not None
            else:
                changed |= self.phases.get(key) != phase
                self.phases[key] = phase
        return changed

    def current(self) -> dict[names.ObjectKey, str]:
        """The phase of each applied flow that still exists, by key, as last seen."""
        return {key: self.phases[key] for key in sorted(self.phases)}

    def gone(self) -> list[names.ObjectKey]:
        """The applied flows that no longer exist (deleted during the run)."""
        return sorted(self.wanted - self.phases.keys())

    def ended(self) -> bool:
        """True once every flow is Succeed or Failed or was deleted."""
        return all(phase in FLOW_ENDED for phase in self.phases.values())
