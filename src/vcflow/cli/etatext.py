"""A flow's critical path and ETA as `vcflow describe jobflow` and `vcflow get jf -o wide`
print them (`reconcile.outlook` finds them): `a → b → d → e`, `2026-12-02T16:05:30Z (in
5m30s)`, `<unknown>` without an estimate, `-` (get) or `<none>` (describe) once the flow
has ended. Reads what it is given; no store.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from vcflow.api import ages, clock
from vcflow.api.jobflow import JobFlow
from vcflow.api.phases import FlowPhase
from vcflow.reconcile import outlook

UNKNOWN = "<unknown>"
#: the phases of a flow that runs no more: no ETA
ENDED = frozenset({FlowPhase.SUCCEED, FlowPhase.FAILED})


def fields(flow: JobFlow, now: datetime) -> list[tuple[str, str]]:
    """describe's `Critical Path:` (the controller's estimates) and `ETA:` lines."""
    seen = outlook.outlook(flow, now)
    return [
        ("Critical Path", " → ".join(seen.critical_path) or "<none>"),
        ("ETA", _eta(flow, seen.seconds_left, now, ended="<none>", words=True)),
    ]


def eta_cell(flow: JobFlow, now: datetime) -> str:
    """The ETA column of `get jf -o wide`: the time, `-` for an ended flow."""
    if flow.phase in ENDED:  # (before the walk: most listed flows have ended)
        return "-"
    return _eta(flow, outlook.outlook(flow, now).seconds_left, now, ended="-", words=False)


def _eta(flow: JobFlow, left: float | None, now: datetime, *, ended: str, words: bool) -> str:
    if flow.phase in ENDED:
        return ended
    if left is None:
        return UNKNOWN
    when = clock.rfc3339(now + timedelta(seconds=left))
    return f"{when} (in {in_words(left)})" if words else when


def in_words(seconds: float) -> str:
    """`5m30s`, `45s`, `2h10m` (kubectl's human durations), `0s` when overdue."""
    return ages.human_duration(max(seconds, 0.0))
