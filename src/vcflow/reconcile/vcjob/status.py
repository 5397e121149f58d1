"""The vcjob status (reference §7): pod counters and `taskStatusCount`, the phase with its
`conditions`, `lastTransitionTime`, `runningDuration`, `version`, `retryCount`.

vcflow reports three fields differently from Volcano (docs/compatibility.md "The local
vcjob runtime"), without changing what runs:
- R1: the counters count the pods that exist, also after a kill (Volcano zeroes kept pods,
  B1). The phase rules still see what Volcano sees (`volcano_view`).
- R2: `runningDuration` runs from the job's first Running to its end and is kept: it is set
  to 0s at the first Running and grows by the time between consecutive phase changes.
- R3: `state.lastTransitionTime` (and the phase's condition) change only with the phase.
An `Unschedulable` reason and message on the current phase's condition say why the job can
never be admitted on this machine. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from vcflow.api.clock import go_duration, parse_go_duration, parse_rfc3339, rfc3339
from vcflow.api.phases import JobPhase, PodPhase
from vcflow.api.vcjob import VCJobStatus

COUNTERS = ("pending", "running", "succeeded", "failed", "terminating", "unknown")
UNSCHEDULABLE = "Unschedulable"
_PHASE_COUNTER: dict[str, str] = {
    PodPhase.PENDING: "pending",
    PodPhase.RUNNING: "running",
    PodPhase.SUCCEEDED: "succeeded",
    PodPhase.FAILED: "failed",
}


@dataclass(frozen=True)
class Counts:
    """Pods by phase, globally and per task (`tasks[task][phase]`)."""

    pending: int = 0
    running: int = 0
    succeeded: int = 0
    failed: int = 0
    terminating: int = 0
    unknown: int = 0
    tasks: Mapping[str, Mapping[str, int]] = field(default_factory=dict)

    def of(self, name: str) -> int:
        value: int = getattr(self, name)
        return value


class Tally:
    """Builds Counts pod by pod, as SyncJob step 4 and KillJob step 5 count."""

    def __init__(self) -> None:
        self._totals = dict.fromkeys(COUNTERS, 0)
        self._tasks: dict[str, dict[str, int]] = {}

    def pod(self, task: str, phase: str, count: int = 1) -> None:
        """`count` pods counted by their phase (an unknown phase counts as `unknown`); a
        negative count takes pods counted before out again."""
        self._totals[_PHASE_COUNTER.get(phase, "unknown")] += count
        key = phase or PodPhase.UNKNOWN
        per_task = self._tasks.setdefault(task, {})
        per_task[key] = per_task.get(key, 0) + count

    def terminating(self, count: int = 1) -> None:
        self._totals["terminating"] += count

    def counts(self) -> Counts:
        tasks = {t: {k: n for k, n in p.items() if n} for t, p in self._tasks.items()}
        return Counts(**self._totals, tasks={t: p for t, p in tasks.items() if p})


def stored(status: VCJobStatus | None) -> Counts:
    """The counters as last written."""
    if status is None:
        return Counts()
    tasks = {t: dict(s.phase or {}) for t, s in (status.task_status_count or {}).items()}
    values = {name: getattr(status, name) or 0 for name in COUNTERS}
    return Counts(**values, tasks=tasks)


def volcano_view(counts: Counts) -> Counts:
    """What Volcano's phase rules see after a kill, or without admission (counters of the
    last kill): only `terminating` (B1). Using it keeps R1 a reporting change only."""
    return Counts(terminating=counts.terminating)


@dataclass(frozen=True)
class Change:
    """A status write: the new phase and retry count; None fields keep the stored value."""

    phase: str
    retry_count: int
    version: int
    counts: Counts | None = None
    min_available: int | None = None
    controlled: Mapping[str, str] | None = None
    unschedulable: str | None = None


def written(old: VCJobStatus | None, change: Change, now: datetime) -> VCJobStatus:
    """The status after `change`; `old` itself when nothing changed (most requests change
    nothing: parsing the status again for them cost a tenth of the runtime's time)."""
    data = old.to_dict() if old is not None else {}
    changed = old is None
    if data.get("state", {}).get("phase", "") != change.phase:
        _transition(data, change.phase, now)
        changed = True
    changed |= _set(data, "retryCount", change.retry_count)
    changed |= _set(data, "version", change.version)
    if change.min_available is not None and data.get("minAvailable") != change.min_available:
        data["minAvailable"] = change.min_available
        changed = True
    if change.counts is not None:
        changed |= _count(data, change.counts)
    if change.controlled is not None:
        changed |= _set(data, "controlledResources", dict(change.controlled))
    if change.unschedulable is not None:
        changed |= _flag(data, change.unschedulable)
    if old is not None and not changed:
        return old
    return VCJobStatus.from_dict(data)


def _transition(data: dict[str, Any], phase: str, now: datetime) -> None:
    state = data.setdefault("state", {})
    previous = state.get("lastTransitionTime")
    if "runningDuration" in data and previous:  # R2
        spent = (now - parse_rfc3339(previous)).total_seconds()
        before = parse_go_duration(str(data["runningDuration"])) or 0.0
        data["runningDuration"] = go_duration(before + spent)
    elif phase == JobPhase.RUNNING:
        data["runningDuration"] = go_duration(0)
    state["phase"] = phase
    state["lastTransitionTime"] = rfc3339(now)  # R3: only here
    kept = [c for c in data.get("conditions") or [] if c.get("status") != phase]
    data["conditions"] = [*kept, {"status": phase, "lastTransitionTime": rfc3339(now)}]


def _count(data: dict[str, Any], counts: Counts) -> bool:
    changed = False
    for name in COUNTERS:
        changed |= _set(data, name, counts.of(name))
    tasks = {t: {"phase": dict(p)} for t, p in counts.tasks.items() if p}
    return _set(data, "taskStatusCount", tasks) or changed


def _flag(data: dict[str, Any], message: str) -> bool:
    """Put (or clear) the Unschedulable reason on the current phase's condition."""
    conditions = data.get("conditions") or []
    before = [(c.get("reason"), c.get("message")) for c in conditions]
    for condition in conditions:
        if condition.get("reason") == UNSCHEDULABLE:
            condition.pop("reason", None)
            condition.pop("message", None)
    if message and conditions:
        conditions[-1]["reason"] = UNSCHEDULABLE
        conditions[-1]["message"] = message
    return before != [(c.get("reason"), c.get("message")) for c in conditions]


def _set(data: dict[str, Any], key: str, value: Any) -> bool:
    """Set `key`, or drop it when the value is empty (Volcano's `omitempty`); True if that
    changed `data`."""
    if value:
        if data.get(key) == value:
            return False
        data[key] = value
        return True
    return data.pop(key, _ABSENT) is not _ABSENT


_ABSENT = object()
