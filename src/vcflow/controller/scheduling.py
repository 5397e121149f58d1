"""What the operator's scheduling mode adds to the flow controller (docs/scheduling.md, On
a cluster): at each create, the sla waiting time (`deadlines`) or the ladder's class
(`ladder`); when a sync arms the flow's next timer, the ladder's climb and its next step.
Nothing in any other mode. Called by `FlowController`.
"""

from __future__ import annotations

from datetime import datetime

from vcflow.api.jobflow import JobFlow
from vcflow.api.vcjob import VCJob
from vcflow.controller.deadlines import Deadlines
from vcflow.controller.ladder import Climber
from vcflow.reconcile import flow as reconcile
from vcflow.reconcile import schedmode, slatime
from vcflow.store import Store


class Scheduling:
    def __init__(self, sla: slatime.Policy | None, ladder: schedmode.Ladder | None) -> None:
        self.deadlines = Deadlines(sla) if sla is not None else None
        self.climber = Climber(ladder) if ladder is not None else None

    def stamp(self, job: VCJob, flow: JobFlow, now: datetime) -> VCJob:
        """`job`, about to be created, as the mode wants it (changed in place)."""
        if self.deadlines is not None:
            self.deadlines.stamp(job, flow, now)
        if self.climber is not None:
            self.climber.stamp(job, flow, now)
        return job

    def next_wait(self, store: Store, index: reconcile.FlowIndex, now: datetime) -> float | None:
        """Seconds until the flow's next timer (a retry, deadline, probe round:
        `next_wakeup`) or, in the priority mode, its ladder's next step once this one is
        climbed; None: no timer."""
        due = index.next_wakeup()
        waits = [] if due is None else [max((due - now).total_seconds(), 0.0)]
        step = self.climber.climb(store, index, now) if self.climber is not None else None
        return min([*waits, step] if step is not None else waits, default=None)
