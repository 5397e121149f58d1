"""The table columns `vcflow get` prints per kind: the CRDs' printer columns (reference
§2.1), upper-cased as kubectl prints them, plus vcflow's `-o wide` extras.

- jobflow: NAME, STATUS (`.status.state.phase`), AGE; wide adds JOBS (completed/total
  entries, e.g. `2/5`);
- jobtemplate: NAME, AGE;
- vcjob: NAME, STATUS, MINAVAILABLE (`.status.minAvailable`), RUNNINGS (`.status.running`),
  AGE; wide adds QUEUE (`.spec.queue`);
- pod: NAME, READY (ready/total containers), STATUS (phase, or the waiting or terminated
  reason of a container, or `Terminating`), RESTARTS, AGE; wide adds NODE.

A value the object does not have yet is an empty cell (as kubectl prints a CRD column).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from vcflow.api import config
from vcflow.api.jobflow import JobFlow
from vcflow.api.meta import Resource
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.cli import kinds, output

Cell = Callable[[Resource, datetime], str]


def _name(obj: Resource, now: datetime) -> str:
    return obj.name


def _age(obj: Resource, now: datetime) -> str:
    return output.age(obj.metadata.creation_timestamp, now)


def _phase(obj: Resource, now: datetime) -> str:
    return obj.phase if isinstance(obj, JobFlow | VCJob) else ""


def _flow_jobs(obj: Resource, now: datetime) -> str:
    if not isinstance(obj, JobFlow):
        return ""
    done = len(obj.status.completed_jobs or []) if obj.status else 0
    return f"{done}/{len(obj.flows)}"


def _number(value: int | None) -> str:
    return "" if value is None else str(value)


def _min_available(obj: Resource, now: datetime) -> str:
    status = obj.status if isinstance(obj, VCJob) else None
    return _number(status.min_available if status else None)


def _runnings(obj: Resource, now: datetime) -> str:
    status = obj.status if isinstance(obj, VCJob) else None
    return _number(status.running if status else None)


def _queue(obj: Resource, now: datetime) -> str:
    spec = obj.spec if isinstance(obj, VCJob) else None
    return (spec.queue or "") if spec else ""


def _pod_ready(obj: Resource, now: datetime) -> str:
    if not isinstance(obj, Pod):
        return ""
    statuses = (obj.status.container_statuses or []) if obj.status else []
    total = len(obj.spec.containers or []) if obj.spec else len(statuses)
    return f"{sum(1 for c in statuses if c.ready)}/{total}"


def _pod_status(obj: Resource, now: datetime) -> str:
    if not isinstance(obj, Pod):
        return ""
    if obj.metadata.deletion_timestamp:
        return "Terminating"
    status = obj.status
    for c in (status.container_statuses or []) if status else []:
        state = c.state
        if state and state.waiting and state.waiting.reason:
            return state.waiting.reason
        if (
            state
            and state.terminated
            and state.terminated.reason
            and status
            and (status.phase == "Failed")
        ):
            return state.terminated.reason
    return (status.phase or "") if status else ""


def _pod_restarts(obj: Resource, now: datetime) -> str:
    if not isinstance(obj, Pod) or obj.status is None:
        return "0"
    return str(sum(c.restart_count for c in obj.status.container_statuses or []))


def _pod_node(obj: Resource, now: datetime) -> str:
    return (obj.spec.node_name or "") if isinstance(obj, Pod) and obj.spec else ""


def _data_count(obj: Resource, now: datetime) -> str:
    if isinstance(obj, config.ConfigMap):
        return str(len(obj.data or {}) + len(obj.binary_data or {}))
    return str(len(obj.data or {})) if isinstance(obj, config.Secret) else ""


def _secret_type(obj: Resource, now: datetime) -> str:
    return (obj.type or config.OPAQUE) if isinstance(obj, config.Secret) else ""


def _namespace(obj: Resource, now: datetime) -> str:
    return obj.namespace


_COLUMNS: dict[str, list[tuple[str, Cell, bool]]] = {  # (header, cell, wide only)
    kinds.JOBFLOW.plural: [
        ("NAME", _name, False),
        ("STATUS", _phase, False),
        ("AGE", _age, False),
        ("JOBS", _flow_jobs, True),
    ],
    kinds.JOBTEMPLATE.plural: [("NAME", _name, False), ("AGE", _age, False)],
    kinds.VCJOB.plural: [
        ("NAME", _name, False),
        ("STATUS", _phase, False),
        ("MINAVAILABLE", _min_available, False),
        ("RUNNINGS", _runnings, False),
        ("AGE", _age, False),
        ("QUEUE", _queue, True),
    ],
    kinds.POD.plural: [
        ("NAME", _name, False),
        ("READY", _pod_ready, False),
        ("STATUS", _pod_status, False),
        ("RESTARTS", _pod_restarts, False),
        ("AGE", _age, False),
        ("NODE", _pod_node, True),
    ],
    kinds.CONFIGMAP.plural: [
        ("NAME", _name, False),
        ("DATA", _data_count, False),
        ("AGE", _age, False),
    ],
    kinds.SECRET.plural: [
        ("NAME", _name, False),
        ("TYPE", _secret_type, False),
        ("DATA", _data_count, False),
        ("AGE", _age, False),
    ],
}


def columns(kind: kinds.Kind, *, wide: bool, namespaced: bool) -> list[tuple[str, Cell]]:
    """Headers and cell functions of `kind`'s table; NAMESPACE first for `-A`."""
    chosen = [(h, cell) for h, cell, extra in _COLUMNS[kind.plural] if wide or not extra]
    return [("NAMESPACE", _namespace), *chosen] if namespaced else chosen


def rows(
    objects: Sequence[Resource], cols: Sequence[tuple[str, Cell]], now: datetime
) -> list[list[str]]:
    return [[cell(obj, now) for _, cell in cols] for obj in objects]
