"""Why each waiting job of a flow waits, for `vcflow describe jobflow` and the dashboard's
nodes (docs/scheduling.md):
beside what the flow's status says (a dependency, `Held`, a template), the reason and
message a scheduler put on a created vcjob's current condition (`Unschedulable`: a queue's
share or capability, a closed queue, another flow's hand-over, free resources), and under
`jobOrder: CriticalPath` each job's rank. Reads what it is given; no store. `waiting` is
the one (reason, message) of a job both show.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from vcflow.api.jobflow import JobFlow
from vcflow.api.phases import JobPhase
from vcflow.api.vcjob import VCJob
from vcflow.reconcile import jobs as jobbuild
from vcflow.reconcile import scheduling

#: the phases in which a vcjob waits for a scheduler
_WAITING = ("", JobPhase.PENDING)


def scheduler_reasons(flow: JobFlow, jobs: Iterable[VCJob]) -> dict[str, tuple[str, str]]:
    """vcjob name → (reason, message) of the current condition of each of the flow's
    vcjobs still waiting for the scheduler that has one."""
    found: dict[str, tuple[str, str]] = {}
    for job in jobs:
        if not jobbuild.is_owned_by(job, flow) or job.phase not in _WAITING:
            continue
        conditions = (job.status.conditions if job.status else None) or []
        extra = (conditions[-1].model_extra or {}) if conditions else {}
        reason = extra.get("reason")
        if reason:
            found[job.name] = (str(reason), str(extra.get("message") or ""))
    return found


def ranks(flow: JobFlow) -> dict[str, str]:
    """vcjob name → its entry's critical-path rank in seconds (an item: its `for` entry's,
    under the `<flow>-<entry>-` prefix), as its `vcflow.io/rank` annotation says; {} unless
    the flow's `jobOrder` is CriticalPath. Estimated from the status the flow has."""
    found = scheduling.FlowScheduling(flow)
    if not found.policy.critical_path:
        return {}
    items = flow.status.job_status_list if flow.status else None
    history = {i.name: i.to_dict() for i in items or []}
    return {f"{flow.name}-{name}": f"{rank:g}" for name, rank in found.ranks(flow, history).items()}


def rank_of(job: str, by_job: dict[str, str]) -> str:
    """The rank of `job`: its entry's, or for an item `<flow>-<entry>-<index>` its entry's."""
    if job in by_job:
        return by_job[job]
    group, _, index = job.rpartition("-")
    return by_job.get(group, "") if index.isdigit() else ""


def waiting(
    job: str, condition: Mapping[str, Any], by_scheduler: Mapping[str, tuple[str, str]]
) -> tuple[str, str]:
    """(reason, message) of a flow's `job`, as describe's REASON and MESSAGE columns say:
    a scheduler's on its vcjob (`scheduler_reasons`), else its condition's in the flow's
    status (`condition`: in wire form)."""
    found = by_scheduler.get(job)
    if found is not None:
        return found
    return str(condition.get("reason") or ""), str(condition.get("message") or "")
