"""The operator's `sla` scheduling mode: the `volcano.sh/sla-waiting-time` a vcjob gets at
creation, so that vc-scheduler's `sla` plugin orders a flow's jobs by one deadline.

The plugin orders pending jobs by PodGroup creation + waiting time, and once that moment
has passed it lets the job enqueue and reserves freed resources for it (Volcano v1.10,
`plugins/sla/sla.go`). vcflow picks the waiting time so that the moment is the flow's:

    key(job) = max(created + floor, flowCreated + budget - rank(entry))

i.e. waiting = max(floor, flowCreated + budget - rank - created): every job of a flow
shares its deadline, the one with the longest remaining path (`dag.critical.ranks`) first,
and no job is ever due sooner than `floor` after its creation. docs/scheduling.md says what
this guarantees and what it does not. Called by the flow controller at each create. Pure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from vcflow.api import clock, names, scheduling
from vcflow.api.jobflow import JobFlow
from vcflow.api.vcjob import VCJob
from vcflow.dag import critical
from vcflow.dag.graph import Graph

#: Volcano's annotation (`volcano.sh/apis` scheduling/v1beta1 `JobWaitingTime`): a Go
#: duration, > 0, read from the PodGroup (the job controller copies the vcjob's annotations)
WAITING_TIME = "volcano.sh/sla-waiting-time"
#: the defaults of `vcflow operator --sla-budget` and `--sla-floor`, in seconds
DEFAULT_BUDGET = 3600.0
DEFAULT_FLOOR = 300.0


@dataclass(frozen=True)
class Policy:
    """`--sla-budget`: a flow's deadline after its creation; `--sla-floor`: the least
    waiting time any job gets (Volcano refuses 0)."""

    budget: float = DEFAULT_BUDGET
    floor: float = DEFAULT_FLOOR


def waiting(*, flow_created: float, created: float, rank: float, policy: Policy) -> float:
    """Seconds the job may wait: max(floor, flowCreated + budget - rank - created)."""
    return max(policy.floor, flow_created + policy.budget - rank - created)


def duration(seconds: float) -> str:
    """The annotation's value: whole seconds, rounded up, at least 1 s (Go duration)."""
    return clock.go_duration(max(1, math.ceil(seconds)))


def ranks(flow: JobFlow) -> dict[str, float]:
    """Entry → its critical-path rank in seconds: `runningEstimate`, else 1 s, per entry."""
    graph = Graph.build((f.name, f.targets) for f in flow.flows)
    estimates: dict[str, float] = {}
    for entry in flow.flows:
        given = entry.running_estimate
        seconds = clock.parse_go_duration(given) if given else None
        if seconds is not None and seconds >= 0:
            estimates[entry.name] = seconds
    return critical.ranks(graph, estimates)


def entry_of(flow: JobFlow, job_name: str, ranked: dict[str, float]) -> str | None:
    """The entry a vcjob of `flow` was built from: `<flow>-<entry>` or, for an item of a
    `for` entry, `<flow>-<entry>-<index>`; None for a name that is neither."""
    prefix = names.job_name(flow.name, "")
    rest = job_name.removeprefix(prefix) if job_name.startswith(prefix) else None
    if rest is None:
        return None
    if rest in ranked:
        return rest
    head, _, index = rest.rpartition("-")
    return head if index.isdigit() and head in ranked else None


def stamped(
    job: VCJob, flow: JobFlow, now: datetime, policy: Policy, ranked: dict[str, float]
) -> VCJob:
    """`job` (changed in place) with its waiting time. The rank is the job's own
    `vcflow.io/rank` when the flow controller stamped one, else the entry's in `ranked`
    (`ranks(flow)`); the flow's age is its creationTimestamp (now when it has none). A
    vcjob that has a waiting time already keeps it: stamping twice changes nothing."""
    annotations = job.metadata.annotations
    if WAITING_TIME in annotations:
        return job
    rank = _float(annotations.get(scheduling.RANK))
    if rank is None:
        entry = entry_of(flow, job.name, ranked)
        rank = ranked.get(entry, critical.DEFAULT_ESTIMATE) if entry else 0.0
    created = now.timestamp()
    stamp = flow.metadata.creation_timestamp
    flow_created = clock.parse_rfc3339(stamp).timestamp() if stamp else created
    seconds = waiting(flow_created=flow_created, created=created, rank=rank, policy=policy)
    annotations[WAITING_TIME] = duration(seconds)
    return job


def _float(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None
