"""The table columns `vcflow get` prints per kind: the CRDs' printer columns (reference
§2.1), upper-cased as kubectl prints them, plus vcflow's `-o wide` extras.

- jobflow: NAME, STATUS (`.status.state.phase`), AGE; wide adds JOBS (completed/total
  entries, e.g. `2/5`);
- jobtemplate: NAME, AGE;
- vcjob: NAME, STATUS, MINAVAILABLE (`.status.minAvailable`), RUNNINGS (`.status.running`),
  AGE; wide adds QUEUE (`.spec.queue`).

A value the object does not have yet is an empty cell (as kubectl prints a CRD column).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from vcflow.api.jobflow import JobFlow
from vcflow.api.meta import Resource
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
}


def columns(kind: kinds.Kind, *, wide: bool, namespaced: bool) -> list[tuple[str, Cell]]:
    """Headers and cell functions of `kind`'s table; NAMESPACE first for `-A`."""
    chosen = [(h, cell) for h, cell, extra in _COLUMNS[kind.plural] if wide or not extra]
    return [("NAMESPACE", _namespace), *chosen] if namespaced else chosen


def rows(
    objects: Sequence[Resource], cols: Sequence[tuple[str, Cell]], now: datetime
) -> list[list[str]]:
    return [[cell(obj, now) for _, cell in cols] for obj in objects]
