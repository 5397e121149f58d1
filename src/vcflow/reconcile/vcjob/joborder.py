"""Job order within a queue (docs/scheduling.md, "Job order"): PriorityClass value, higher
first; then age, older first — the flow's creation time (`vcflow.io/flow-created`, stamped
when `ageFrom: Flow`), else the vcjob's own; then critical-path rank (`vcflow.io/rank`,
seconds, higher first); then creation order (the caller's sort is stable). A flow's later
stage thus queues with its flow's age instead of behind everything submitted meanwhile.
Pure: no I/O, no clock.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from vcflow.api.clock import parse_time
from vcflow.api.scheduling import FLOW_CREATED, RANK
from vcflow.api.vcjob import VCJob

#: the age of a job with no readable time: after every dated one
_UNDATED = datetime.max.replace(tzinfo=UTC)


@dataclass(frozen=True)
class Priorities:
    """PriorityClass values by name; a job without a class gets `default` (the globalDefault
    class's value, else 0), and one naming an unknown class 0."""

    values: Mapping[str, int] = field(default_factory=dict)
    default: int = 0

    def of(self, class_name: str | None) -> int:
        if not class_name:
            return self.default
        return self.values.get(class_name, 0)


#: no PriorityClasses: every job 0
NO_CLASSES = Priorities()


def priority(job: VCJob, table: Priorities) -> int:
    return table.of(job.spec.priority_class_name if job.spec else None)


def age(job: VCJob) -> datetime:
    """When the job's wait counts from: its flow's creation, else its own."""
    for text in (job.metadata.annotations.get(FLOW_CREATED), job.metadata.creation_timestamp):
        if text:
            try:
                return parse_time(text)
            except ValueError:
                continue
    return _UNDATED


def rank(job: VCJob) -> float:
    """Its critical-path rank in seconds; 0 when absent or unreadable."""
    raw = job.metadata.annotations.get(RANK)
    try:
        value = float(raw) if raw else 0.0
    except ValueError:
        return 0.0
    return value if math.isfinite(value) else 0.0


def key(job: VCJob, table: Priorities) -> tuple[int, datetime, float]:
    """The sort key: sort a list of jobs in creation order by it (stable) for job order."""
    return (-priority(job, table), age(job), -rank(job))
