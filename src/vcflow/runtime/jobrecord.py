"""What the runtime keeps per vcjob (`JobRecord`) and the small rules read off it: when a
request is handled as of, the status version, a stored object's resourceVersion, and when
the job's timers are due."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from vcflow.api import clock as clocks
from vcflow.api.meta import Resource
from vcflow.api.vcjob import VCJob, VCJobStatus
from vcflow.reconcile.vcjob import ttl
from vcflow.reconcile.vcjob.model import DelayedAction, Group
from vcflow.reconcile.vcjob.model import Request as JobRequest


@dataclass
class JobRecord:
    """The stored vcjob with the webhook's defaults, the PodGroup state, the delayed actions
    and the scheduler's verdict."""

    job: VCJob
    group: Group = Group.NONE
    delayed: dict[str, DelayedAction] = field(default_factory=dict)
    unschedulable: str = ""
    # why it waits for admission besides never fitting (`queueing.Wait`): the message its
    # condition carries, and the kind, whose change alone rewrites it
    waiting: str = ""
    wait_kind: str | None = None
    seq: int = 0  # creation order, the scheduler's tie-break

    def dues(self) -> list[datetime]:
        """When its timers are due: delayed actions and the TTL after it finished."""
        out = [d.due for d in self.delayed.values()]
        expiry = ttl.expires_at(self.job)
        if expiry is not None:
            out.append(expiry)
        return out


def as_of(request: JobRequest, job: VCJob, now: datetime) -> datetime:
    """The time to handle `request` at: when its change happened if that is known and past
    (a pod that ended while no runtime watched ends its job then, not at the next run),
    never before the job's own last transition."""
    if request.at is None or request.at >= now:
        return now
    state = job.status.state if job.status else None
    last = state.last_transition_time if state else None
    try:
        floor = clocks.parse_rfc3339(last) if last else None
    except ValueError:
        floor = None
    return max(request.at, floor) if floor is not None else request.at


def version(status: VCJobStatus | None) -> int:
    return (status.version if status else None) or 0


def rv(obj: Resource) -> int:
    """A stored object's resourceVersion as a number (0 for none)."""
    text = obj.metadata.resource_version
    return int(text) if text and text.isdigit() else 0
