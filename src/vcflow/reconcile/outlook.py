"""Where a flow stands and where it is heading, from its status alone: each entry's phase
(a `for` entry's items counted), the critical path, and the seconds its unfinished work
still takes. Read by `vcflow describe jobflow`, `vcflow get jf -o wide` and `vcflow graph`;
the estimates are the flow controller's (`scheduling.estimates`), the walk `dag.eta`'s.
The dashboard also counts the runs of the same templates in the namespace's other flows
(`durations`, `elsewhere`), where the controller knows only the flow's own.
Pure: the time is an argument.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from vcflow.api import clock, compactstatus, names
from vcflow.api.jobflow import JobFlow
from vcflow.dag import eta
from vcflow.dag.graph import Graph
from vcflow.reconcile import scheduling

#: an entry's phases after which it does no more work
FINISHED = frozenset({"Completed", "Failed", "Terminated", "Aborted", "Skipped"})
#: an entry's phases before it runs (a Pending vcjob waits for its scheduler: its whole
#: estimate is still ahead of it)
NOT_STARTED = frozenset({"", "Waiting", "Backoff", "Pending"})


@dataclass(frozen=True)
class EntryView:
    """One entry as its flow's status tells it: its phase ("" before any), and for a `for`
    entry its items completed and known (`items`: None for other entries)."""

    name: str
    phase: str
    items: tuple[int, int] | None = None
    started: str | None = None


@dataclass(frozen=True)
class Outlook:
    """A flow's entries, critical path (run order) and the seconds left (None: unknown)."""

    entries: dict[str, EntryView]
    critical_path: list[str]
    seconds_left: float | None


def records(flow: JobFlow) -> dict[str, Any]:
    """The flow's status in wire form, a compact one expanded (as stored if unreadable)."""
    status = flow.status
    data = status.to_dict() if status is not None else {}
    if status is None or status.compact_job_status is None:
        return data
    try:
        return compactstatus.expand(data)
    except compactstatus.Unreadable:
        return data


def entry_views(flow: JobFlow, wire: Mapping[str, Any]) -> dict[str, EntryView]:
    """Each entry's view; a `for` entry's items are the conditions `<flow>-<entry>-<i>`."""
    conditions: Mapping[str, Any] = wire.get("conditions") or {}
    starts = {str(i.get("name")): i.get("startTimestamp") for i in wire.get("jobStatusList") or []}
    out: dict[str, EntryView] = {}
    for entry in flow.flows:
        job = names.job_name(flow.name, entry.name)
        cond = conditions.get(job) or {}
        items = None
        if entry.for_each is not None:
            prefix = f"{job}-"
            mine = [
                c
                for k, c in conditions.items()
                if k.startswith(prefix) and k[len(prefix) :].isdigit()
            ]
            given = entry.for_each.items
            total = max(len(given), len(mine)) if given is not None else len(mine)
            items = (sum(1 for c in mine if c.get("phase") == "Completed"), total)
        out.setdefault(
            entry.name,
            EntryView(
                entry.name,
                str(cond.get("phase") or ""),
                items,
                starts.get(job) or cond.get("createTime"),
            ),
        )
    return out


def outlook(
    flow: JobFlow, now: datetime, past: Mapping[str, Sequence[float]] | None = None
) -> Outlook:
    """The flow's entries, its critical path by the controller's estimates, and the longest
    remaining path over its unfinished entries (a running one: its estimate less the time
    it has run). `past`: template → seconds its runs took in other flows (`elsewhere`),
    counted with the flow's own; None, the flow's own only (what the controller knows)."""
    wire = records(flow)
    history = {str(i.get("name")): i for i in wire.get("jobStatusList") or []}
    views = entry_views(flow, wire)
    graph = Graph.build((e.name, e.targets) for e in flow.flows)
    estimates = scheduling.estimates(flow, history, past)
    known = scheduling.known_estimates(flow, history, past)
    running: dict[str, float] = {}
    for name, view in views.items():
        if view.phase in FINISHED or view.phase in NOT_STARTED or not view.started:
            continue
        try:
            started = clock.parse_time(view.started)
        except ValueError:
            continue
        running[name] = max((now - started).total_seconds(), 0.0)
    finished = frozenset(n for n, v in views.items() if v.phase in FINISHED)
    progress = eta.Progress(finished, running)
    return Outlook(
        views,
        eta.critical_path(graph, estimates),
        eta.seconds_left(graph, estimates, known, progress),
    )


def durations(flows: Iterable[JobFlow]) -> dict[str, dict[str, list[float]]]:
    """Flow name → template → the seconds its completed vcjobs took (`scheduling.
    past_durations`), for `elsewhere`; `flows` of one namespace (a JobTemplate is a
    namespace's)."""
    out: dict[str, dict[str, list[float]]] = {}
    for flow in flows:
        wire = records(flow)
        history = {str(i.get("name")): i for i in wire.get("jobStatusList") or []}
        found = scheduling.past_durations(flow, history)
        if found:
            out[flow.name] = found
    return out


def elsewhere(
    by_flow: Mapping[str, Mapping[str, Sequence[float]]], name: str
) -> dict[str, list[float]]:
    """Template → the durations of `by_flow` (`durations`) but flow `name`'s own, the last
    `scheduling.PAST_MAX` of each: the past `outlook` counts beside the flow's own."""
    out: dict[str, list[float]] = {}
    for flow, templates in by_flow.items():
        if flow == name:
            continue
        for template, seconds in templates.items():
            out.setdefault(template, []).extend(seconds)
    return {t: s[-scheduling.PAST_MAX :] for t, s in out.items()}
