"""One entry of a flow in detail, for the dashboard's node panel (docs/dashboard.md,
`EntryDetail`): its node, its vcjob (conditions, attempts, pods, outputs) and the Events
about them. A `for` entry's items are paged by `views.items`, not listed here.

Attempts come from the flow's `jobStatusList` record of the entry, which keeps its phase
history across attempts (`reconcile.history`): a new attempt starts where a finished phase
is followed by an unfinished one. Only the current attempt has a vcjob left, so only its
exit code (from its pods) and reason are known. Pure: reads what it is given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from vcflow.api import names
from vcflow.api.event import Event
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.dashboard.views import FlowView, Json, entry_of, nodes
from vcflow.reconcile import history, outlook
from vcflow.reconcile import jobs as jobbuild
from vcflow.reconcile.vcjob import pods as podnames

#: how an Event's object is named: its kind's short word
OBJECT_WORDS = {"Job": "vcjob", "Pod": "pod", "JobFlow": "jobflow"}
#: the Events an entry's panel lists, at most (the newest)
MAX_EVENTS = 200


def entry(
    view: FlowView,
    name: str,
    jobs: Sequence[VCJob],
    pods: Sequence[Pod],
    events: Sequence[Event],
) -> Json | None:
    """The entry `name` (an entry name or node id) of the flow; None if it has none. `jobs`,
    `pods`, `events`: the flow's vcjobs, the pods and the Events of its namespace (what is
    not the entry's is left out)."""
    wanted = entry_of(name)
    node = next((n for n in nodes(view) if n["label"] == wanted), None)
    if node is None:
        return None
    job_name = names.job_name(view.flow.name, wanted)
    mine = (
        []
        if node["kind"] == "for"
        else [j for j in jobs if j.name == job_name and jobbuild.is_owned_by(j, view.flow)]
    )
    by_job: dict[str, list[Pod]] = {}
    for pod in pods:
        owner = pod.metadata.labels.get(podnames.JOB_NAME)
        if owner is not None:
            by_job.setdefault(owner, []).append(pod)
    record = view.records.get(job_name) or {}
    vcjobs = [_vcjob(job, record, by_job.get(job.name, [])) for job in mine]
    if not mine and record and node["kind"] != "for":
        vcjobs = [_gone(job_name, record)]  # (deleted: jobRetainPolicy delete, a stop)
    objects = {("Job", job_name)} | {
        ("Pod", pod.name) for job in mine for pod in by_job.get(job.name, [])
    }
    return {
        "entry": node,
        "vcjobs": vcjobs,
        "events": _events(view, events, objects, job_name),
        "items": node["items"],
    }


def _vcjob(job: VCJob, record: Mapping[str, Any], pods: Sequence[Pod]) -> Json:
    status = job.status
    state = status.state if status is not None else None
    exit_code = _exit_code(pods)
    attempts = attempts_of(record)
    if attempts:
        attempts[-1]["exitCode"] = exit_code
        attempts[-1]["reason"] = (state.reason if state else None) or None
    return {
        "name": job.name,
        "phase": job.phase,
        "started": job.metadata.creation_timestamp or None,
        "finished": history.end_time(job),
        "retryCount": (status.retry_count if status else None) or 0,
        "conditions": [
            {
                "type": c.status or "",
                "status": "True",
                "reason": (c.model_extra or {}).get("reason") or None,
                "message": (c.model_extra or {}).get("message") or None,
                "time": c.last_transition_time or None,
            }
            for c in (status.conditions if status else None) or []
        ],
        "attempts": attempts,
        "pods": [_pod(pod) for pod in sorted(pods, key=lambda p: p.name)],
        "outputs": dict(record.get("outputs") or {}),
    }


def _gone(name: str, record: Mapping[str, Any]) -> Json:
    """The entry's vcjob as the flow's record keeps it, once the vcjob is deleted."""
    return {
        "name": name,
        "phase": str(record.get("state") or ""),
        "started": record.get("startTimestamp") or None,
        "finished": record.get("endTimestamp") or None,
        "retryCount": int(record.get("restartCount") or 0),
        "conditions": [],
        "attempts": attempts_of(record),
        "pods": [],
        "outputs": dict(record.get("outputs") or {}),
    }


def attempts_of(record: Mapping[str, Any]) -> list[Json]:
    """The attempts a `jobStatusList` record tells of, oldest first, numbered so that the
    last is its `attempt` (1 when absent)."""
    runs: list[list[Mapping[str, Any]]] = []
    for step in record.get("runningHistories") or []:
        state = str(step.get("state") or "")
        if not runs or (_ended(runs[-1]) and state not in outlook.FINISHED):
            runs.append([])
        runs[-1].append(step)
    last = int(record.get("attempt") or 1)
    first = last - len(runs) + 1
    out: list[Json] = []
    for number, steps in enumerate(runs, start=first):
        phase = str(steps[-1].get("state") or "")
        out.append(
            {
                "attempt": max(number, 1),
                "phase": phase,
                "started": steps[0].get("startTimestamp") or None,
                "finished": (steps[-1].get("startTimestamp") or None) if _ended(steps) else None,
                "exitCode": None,
                "reason": None,
            }
        )
    return out


def _ended(steps: Sequence[Mapping[str, Any]]) -> bool:
    return bool(steps) and str(steps[-1].get("state") or "") in outlook.FINISHED


def _exit_code(pods: Sequence[Pod]) -> int | None:
    """The exit code of the current attempt: its pods' first failing container's, else
    0 once one has ended, else None."""
    codes = []
    for pod in pods:
        for container in (pod.status.container_statuses if pod.status else None) or []:
            ended = container.state.terminated if container.state else None
            if ended is not None:
                codes.append(ended.exit_code)
    failing = [c for c in codes if c != 0]
    if failing:
        return failing[0]
    return 0 if codes else None


def _pod(pod: Pod) -> Json:
    status = pod.status
    spec = pod.spec
    ends = [
        c.state.terminated.finished_at
        for c in (status.container_statuses if status else None) or []
        if c.state is not None and c.state.terminated is not None and c.state.terminated.finished_at
    ]
    phase = (status.phase if status else None) or ""
    return {
        "name": pod.name,
        "phase": phase,
        "node": (spec.node_name if spec else None) or None,
        "containers": [c.name or "" for c in (spec.containers if spec else None) or []],
        "started": (status.start_time if status else None) or None,
        "finished": max(str(e) for e in ends)
        if ends and phase in ("Succeeded", "Failed")
        else None,
    }


def _events(
    view: FlowView, events: Sequence[Event], objects: set[tuple[str, str]], job: str
) -> list[Json]:
    """The Events about the entry's vcjob and pods, and the flow's own that name its
    vcjob (a failed attempt's), oldest first, the newest MAX_EVENTS."""
    flow = view.flow
    found = []
    for event in events:
        about = event.involved_object
        key = (about.kind, about.name)
        if key in objects or (
            key == ("JobFlow", flow.name) and job in " ".join(event.message.split())
        ):
            found.append(event)
    found.sort(key=lambda e: e.last_seen() or "")
    return [
        {
            "type": event.type,
            "reason": event.reason,
            "message": event.message,
            "time": event.last_seen(),
            "object": _object(event),
        }
        for event in found[-MAX_EVENTS:]
    ]


def _object(event: Event) -> str:
    """`vcjob/x`, `pod/x`: what the Event is about."""
    kind = event.involved_object.kind
    return f"{OBJECT_WORDS.get(kind, kind.lower())}/{event.involved_object.name}"
