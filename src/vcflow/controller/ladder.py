"""The operator's `priority` mode in the flow controller: a flow's vcjobs climb an admin's
PriorityClass ladder (`--priority-ladder low,mid,high`, `--ladder-step 10m`) as the flow
ages. A vcjob is created on the flow's current rung; when the flow's age crosses a step,
its vcjobs still Pending get the next class (Volcano's job controller copies it to the
PodGroup; its webhook lets the field change). One timer per flow, the controller's own
delayed key, due at the next step: nothing polls every flow.
"""

from __future__ import annotations

import contextlib
import logging
from datetime import datetime

from vcflow.api import clock
from vcflow.api.errors import Conflict, NotFound
from vcflow.api.jobflow import JobFlow
from vcflow.api.phases import FlowPhase, JobPhase
from vcflow.api.vcjob import VCJob
from vcflow.reconcile import flow as reconcile
from vcflow.reconcile import jobs as jobbuild
from vcflow.reconcile.schedmode import Ladder
from vcflow.store import Store

log = logging.getLogger("vcflow.controller")
#: seconds until a climb that met a conflicting write is tried again
RETRY = 1.0
#: flows whose rung is kept; past it the table starts again (a flow's pending vcjobs are
#: looked at once more at its next sync: never wrong)
KEPT = 4096


def age(flow: JobFlow, now: datetime) -> float:
    stamp = flow.metadata.creation_timestamp
    return (now - clock.parse_rfc3339(stamp)).total_seconds() if stamp else 0.0


class Climber:
    def __init__(self, ladder: Ladder) -> None:
        self.ladder = ladder
        #: by flow uid: the rung its pending vcjobs were last put on
        self._rungs: dict[str, int] = {}

    def stamp(self, job: VCJob, flow: JobFlow, now: datetime) -> None:
        """A vcjob about to be created: the flow's current rung."""
        if job.spec is not None:
            job.spec.priority_class_name = self.ladder.classes[self.ladder.rung(age(flow, now))]

    def climb(self, store: Store, index: reconcile.FlowIndex, now: datetime) -> float | None:
        """After a sync: the flow's Pending vcjobs put on its rung if it changed since (or
        on first sight: a restarted operator); seconds until the next step (None: the top
        rung, or the flow has ended)."""
        flow = index.flow
        if index.phase in (FlowPhase.SUCCEED, FlowPhase.FAILED):
            self._rungs.pop(flow.metadata.uid or "", None)
            return None
        seconds = age(flow, now)
        rung = self.ladder.rung(seconds)
        uid = flow.metadata.uid or f"{flow.namespace}/{flow.name}"
        if self._rungs.get(uid) != rung:
            if not self._raise(store, index, self.ladder.classes[rung]):
                return RETRY
            if len(self._rungs) >= KEPT:
                self._rungs.clear()
            self._rungs[uid] = rung
        return self.ladder.next_step(seconds)

    def _raise(self, store: Store, index: reconcile.FlowIndex, klass: str) -> bool:
        """Every Pending vcjob of the flow on `klass`; False if a write conflicted."""
        namespace = index.flow.namespace
        for entry in index.state.entries.values():
            if not entry.has_job or entry.phase not in (None, "", JobPhase.PENDING):
                continue  # (none yet, or admitted: its class no longer matters)
            with contextlib.suppress(NotFound):
                job = store.get(VCJob, namespace, entry.job)
                if job.spec is None or job.spec.priority_class_name == klass:
                    continue
                if not jobbuild.is_owned_by(job, index.flow):
                    continue  # (another flow's vcjob of that name: NameConflict)
                job.spec.priority_class_name = klass
                try:
                    store.update(job)
                except Conflict:
                    return False
                log.info("priority ladder: vcjob %s/%s now %s", namespace, entry.job, klass)
        return True
