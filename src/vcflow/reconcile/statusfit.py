"""Which form a rendered JobFlow status is written in, so the object stays small enough for
etcd (docs/status-size.md): Volcano's layout, unchanged, while it fits the budgets below;
past them the compact form — every record and status list in `compactJobStatus`
(`api.compactstatus`), and in Volcano's fields (the lists, `jobStatusList`, `conditions`)
only the entries users act on (failed or retrying first, then unfinished), as many as fit.
`FlowIndex.status_data` calls `fit`. Pure: measures what it is given.
"""

from __future__ import annotations

from typing import Any

from vcflow.api import bounds, compactstatus
from vcflow.api.jobflow import JobFlow
from vcflow.api.phases import JobPhase
from vcflow.reconcile.entries import DEPENDENCIES, SKIPPED, WAITING

#: The most bytes (as JSON) a status keeps Volcano's layout in. The apiserver also stores a
#: `managedFields` entry for each `conditions` key, about as large again as the condition.
STATUS_BUDGET = 512 * 1024
#: The most bytes (as JSON) the whole JobFlow may reach by a status write: 1 MiB, less 16 KiB
#: for what the write itself changes (resourceVersion, annotations set meanwhile); well under
#: etcd's 1.5 MiB request limit (`bounds.MAX_OBJECT_BYTES`), which managedFields count in too.
OBJECT_BUDGET = 1024 * 1024 - 16 * 1024
#: The most entries the compact form shows in `jobStatusList` and `conditions`.
ACTIVE_MAX = 1000

#: conditions phases of finished entries: their records are only in compactJobStatus
_FINISHED = frozenset({JobPhase.COMPLETED, SKIPPED})
#: phases that need a user (failed, terminated); a Waiting entry with a reason other than
#: Dependencies (Backoff, TemplateNotFound, NameConflict, CreateFailed) too
_FAILED = frozenset(
    {JobPhase.FAILED, JobPhase.TERMINATED, JobPhase.TERMINATING, JobPhase.ABORTED,
     JobPhase.ABORTING}
)  # fmt: skip
_SEPARATOR = 2  # a comma, and for a condition the colon after its key


class RestSize:
    """The bytes of a flow but its status, its spec measured once per generation (the spec
    of a 10,000-entry flow is about half a megabyte; only its metadata changes)."""

    def __init__(self) -> None:
        self._spec: tuple[str, int, int] | None = None  # uid, generation, bytes

    def of(self, flow: JobFlow) -> int:
        meta = flow.metadata
        key = (meta.uid, meta.generation or 0)
        if self._spec is None or self._spec[:2] != key:
            spec = flow.spec.to_dict() if flow.spec is not None else None
            self._spec = (*key, bounds.object_size(spec))
        head = {"apiVersion": flow.api_version, "kind": flow.kind, "metadata": meta.to_dict()}
        return bounds.object_size(head) + self._spec[2] + len(',"spec":,"status":')


def fit(data: dict[str, Any], *, rest: int) -> dict[str, Any]:
    """`data` (Volcano's layout, as `flowstatus.render` gives it) if it fits, else its
    compact form; `rest`: the bytes of the object but its status."""
    room = min(STATUS_BUDGET, OBJECT_BUDGET - rest)
    if bounds.object_size(data) <= room:
        return data
    return compact(data, room=room)


def compact(data: dict[str, Any], *, room: int) -> dict[str, Any]:
    """The compact form of `data`, its plain `jobStatusList`/`conditions` filled, by
    `rank`, while the status stays within `room` bytes and ACTIVE_MAX entries."""
    items: list[dict[str, Any]] = data.get("jobStatusList") or []
    conditions: dict[str, dict[str, Any]] = data.get("conditions") or {}
    lists = {key: data[key] for key in compactstatus.STATUS_LISTS if data.get(key)}
    field = compactstatus.encode(items, conditions, lists)
    by_job = {item.get("name", ""): item for item in items}
    shown: set[str] = set()
    used = bounds.object_size(_assemble(data, shown, field))
    for job in _by_rank(by_job, conditions)[:ACTIVE_MAX]:
        cost = _cost(job, by_job.get(job), conditions.get(job))
        if used + cost > room:
            break
        used += cost
        shown.add(job)
    return _assemble(data, shown, field)


def rank(condition: dict[str, Any] | None, item: dict[str, Any] | None) -> int | None:
    """0: failed or waiting on something but dependencies; 1: not finished; 2: waiting
    for its dependencies; None: finished (Completed, Skipped): not shown."""
    phase = (condition or {}).get("phase", (item or {}).get("state", ""))
    if phase in _FINISHED:
        return None
    if phase == "":  # a vcjob with no phase yet
        return 1
    if phase in _FAILED or phase not in {WAITING, *JobPhase}:  # (SyncFailed)
        return 0
    if phase == WAITING:
        return 2 if (condition or {}).get("reason") == DEPENDENCIES else 0
    return 1


def _by_rank(by_job: dict[str, dict[str, Any]], conditions: dict[str, dict[str, Any]]) -> list[str]:
    ranked: list[tuple[int, int, str]] = []
    for order, job in enumerate(dict.fromkeys([*conditions, *by_job])):
        which = rank(conditions.get(job), by_job.get(job))
        if which is not None:
            ranked.append((which, order, job))
    ranked.sort()
    return [job for _, _, job in ranked]


def _cost(job: str, item: dict[str, Any] | None, condition: dict[str, Any] | None) -> int:
    cost = bounds.object_size(job) + _SEPARATOR  # (in one of the lists)
    if item is not None:
        cost += bounds.object_size(item) + _SEPARATOR
    if condition is not None:
        cost += bounds.object_size(job) + bounds.object_size(condition) + _SEPARATOR
    return cost


def _assemble(data: dict[str, Any], shown: set[str], field: dict[str, Any]) -> dict[str, Any]:
    """`data` with only the `shown` jobs in Volcano's fields, and `compactJobStatus` last."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key == "jobStatusList":
            kept: Any = [item for item in value if item.get("name", "") in shown]
        elif key == "conditions":
            kept = {job: cond for job, cond in value.items() if job in shown}
        elif key in compactstatus.LAYOUT:
            kept = [job for job in value if job in shown]
        elif key == compactstatus.FIELD:
            continue
        else:
            kept = value
        if kept or key not in compactstatus.LAYOUT:
            out[key] = kept
    out[compactstatus.FIELD] = field
    return out
