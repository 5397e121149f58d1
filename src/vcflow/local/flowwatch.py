"""The flows `vcflow run` waits for, kept current from the store's JobFlow events.

A flow's status lists every one of its jobs, so reading the flows again at every turn of
the run loop would cost O(jobs) per turn — O(N²) over a long chain. The flows are read once;
after that each check reads only the JobFlow events written since (the controller writes a
flow's status in bursts, so they are few) and takes from each just the phase, read from the
end of its text: `vcflow run` needs nothing else of a flow (its jobs it sees from the
runtime). A full read happens only when the watch expired.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping

from vcflow.api import names
from vcflow.api.jobflow import JobFlow
from vcflow.cli.runview import FLOW_ENDED
from vcflow.store.base import EventType, Expired, Store, poll
from vcflow.store.wire import loads


class FlowWatch:
    def __init__(self, store: Store, flows: Mapping[names.ObjectKey, object]) -> None:
        self.store = store
        self.wanted = frozenset(flows)
        self.phases: dict[names.ObjectKey, str] = {}
        self.rv = 0
        self._relist()

    def _relist(self) -> None:
        self.rv = self.store.resource_version()
        found = [f for f in self.store.list(JobFlow) if f.key in self.wanted]
        self.phases = {flow.key: flow.phase for flow in found}

    def refresh(self) -> bool:
        """Take in the flow changes since the last call; True if a flow's phase changed
        (or a flow went away)."""
        try:
            found, resume = poll(self.store, self.rv, (JobFlow,))
        except Expired:
            self._relist()
            return True
        changed = False
        for event in found:
            key = event.key
            if key not in self.wanted:
                continue
            if event.type is EventType.DELETED:
                changed |= self.phases.pop(key, None) is not None
                continue
            phase = _phase(event.raw)
            changed |= self.phases.get(key) != phase
            self.phases[key] = phase
        self.rv = resume
        return changed

    def current(self) -> dict[names.ObjectKey, str]:
        """The phase of each applied flow that still exists, by key, as last seen."""
        return {key: self.phases[key] for key in sorted(self.phases)}

    def ended(self) -> bool:
        """True once a flow was deleted or every flow is Succeed or Failed."""
        if len(self.phases) < len(self.wanted):
            return True
        return all(phase in FLOW_ENDED for phase in self.phases.values())


_STATE = '"state":{'
_DECODER = json.JSONDecoder()


def _phase(raw: str) -> str:
    """`status.state.phase` of a stored flow. The store writes `status` last and `state`
    last in it, so the phase is read from the end of the text — a flow's status lists
    every job, and parsing all of it at each status write cost O(jobs) each time. Any
    other layout falls back to parsing the whole."""
    at = raw.rfind(_STATE)
    if at >= 0:
        with contextlib.suppress(ValueError):
            state, end = _DECODER.raw_decode(raw, at + len(_STATE) - 1)
            if raw[end:].strip() == "}}" and isinstance(state, dict):
                return str(state.get("phase") or "")
    status = loads(raw).get("status") or {}
    return str((status.get("state") or {}).get("phase") or "")
