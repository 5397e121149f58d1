"""What the dashboard shows of a flow, as the JSON its page reads (docs/dashboard.md): a
list `row`, the `graph` (nodes, edges, the flow's header), a `for` entry's `items` page,
and the `nodes` frame of the event stream — only the nodes whose fields changed since the
last frame, so a running flow of thousands of items sends a few bytes a change.

Everything comes from what `describe jobflow`, `get jf -o wide` and `graph` read already:
entries, phases, `for` progress, critical path and ETA from `reconcile.outlook` (with the
namespace's other flows' runs of the same templates, `outlook.elsewhere`), waiting
reasons from `reconcile.flowwaits`, kinds and edge labels from `reconcile.flowshape`.
Pure: no I/O, the time is an argument.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from vcflow.api import clock, names
from vcflow.api.jobflow import JobFlow
from vcflow.api.phases import FlowPhase
from vcflow.api.vcjob import VCJob
from vcflow.reconcile import flowshape, flowwaits, outlook

#: a flow that runs no more: no ETA, a finish time
ENDED = frozenset({FlowPhase.SUCCEED, FlowPhase.FAILED})
#: an entry counted done in a row's progress
DONE = frozenset({"Completed", "Skipped"})
#: entry phases that show no waiting reason (they are not waiting)
BUSY = frozenset({"Running", "Completed"})
#: the id prefix of an `onExit` entry's node
EXIT_PREFIX = "onExit:"
#: the fields of a node that change as the flow runs (a `nodes` frame's, with `id`)
CHANGING = ("phase", "reason", "items", "critical", "started", "finished")
#: the most items one page of `items` holds
MAX_ITEMS_PAGE = 1000

Json = dict[str, Any]


@dataclass(frozen=True)
class FlowView:
    """One flow read once at `now`: its status in wire form (a compact one expanded), its
    jobStatusList by vcjob, its outlook, and the scheduler's reasons of its waiting
    vcjobs."""

    flow: JobFlow
    now: datetime
    wire: Json
    records: dict[str, Json]
    seen: outlook.Outlook
    waits: dict[str, tuple[str, str]]

    @property
    def conditions(self) -> Mapping[str, Any]:
        found: Mapping[str, Any] = self.wire.get("conditions") or {}
        return found


def look(
    flow: JobFlow,
    now: datetime,
    *,
    past: Mapping[str, Sequence[float]] | None = None,
    jobs: Iterable[VCJob] = (),
) -> FlowView:
    """`flow` at `now`; `past`: template → durations of its runs in other flows (for the
    ETA); `jobs`: the flow's vcjobs (for the reasons a scheduler gives waiting ones)."""
    wire = outlook.records(flow)
    records = {str(i.get("name")): i for i in wire.get("jobStatusList") or []}
    return FlowView(
        flow,
        now,
        wire,
        records,
        outlook.outlook(flow, now, past),
        flowwaits.scheduler_reasons(flow, jobs),
    )


def node_id(entry: str, exits: Iterable[str]) -> str:
    """The node of an entry: its name, `onExit:NAME` for an `onExit` handler."""
    return EXIT_PREFIX + entry if entry in exits else entry


def entry_of(node: str) -> str:
    """The entry a node id (or an entry name) names."""
    return node.removeprefix(EXIT_PREFIX)


# --- the list ----------------------------------------------------------------------------


def row(view: FlowView) -> Json:
    """The flow's line in the list."""
    flow = view.flow
    entries = view.seen.entries
    eta, seconds = _eta(view)
    starts = [str(r["startTimestamp"]) for r in view.records.values() if r.get("startTimestamp")]
    ends = [str(r["endTimestamp"]) for r in view.records.values() if r.get("endTimestamp")]
    return {
        "namespace": flow.namespace,
        "name": flow.name,
        "uid": flow.metadata.uid,
        "phase": flow.phase,
        "done": sum(1 for e in entries.values() if e.phase in DONE),
        "total": len(entries),
        "created": flow.metadata.creation_timestamp or None,
        "started": min(starts) if starts else None,
        "finished": max(ends) if ends and flow.phase in ENDED else None,
        "labels": dict(flow.metadata.labels),
        "eta": eta,
        "etaSeconds": seconds,
    }


def _eta(view: FlowView) -> tuple[str | None, float | None]:
    left = view.seen.seconds_left
    if view.flow.phase in ENDED or left is None:
        return None, None
    left = max(left, 0.0)
    return clock.rfc3339(view.now + timedelta(seconds=left)), left


# --- the graph ---------------------------------------------------------------------------


def graph(view: FlowView, *, read_only: bool) -> Json:
    """The flow page: the header (a row with the flow's reason, critical path and
    resourceVersion), every node and edge."""
    flow = view.flow
    state = flow.status.state if flow.status is not None else None
    header = {
        **row(view),
        "reason": (state.reason if state else None) or None,
        "message": (state.message if state else None) or None,
        "criticalPath": critical_path(view),
        "resourceVersion": flow.metadata.resource_version,
    }
    return {"flow": header, "nodes": nodes(view), "edges": edges(flow), "readOnly": read_only}


def critical_path(view: FlowView) -> list[str]:
    """The critical path's nodes, in run order."""
    exits = view.flow.exit_handlers
    return [node_id(entry, exits) for entry in view.seen.critical_path]


def nodes(view: FlowView) -> list[Json]:
    """One node per entry, in spec order."""
    flow = view.flow
    exits = set(flow.exit_handlers)
    path = set(view.seen.critical_path)
    started, ended = _entry_times(view)
    out: list[Json] = []
    for entry in flowshape.entries(flow):
        seen = view.seen.entries.get(entry.name)
        phase = seen.phase if seen is not None else ""
        items = seen.items if seen is not None else None
        out.append(
            {
                "id": node_id(entry.name, exits),
                "label": entry.name,
                "template": _template(view, entry.name),
                "phase": phase,
                "reason": _reason(view, entry.name, phase),
                "kind": flowshape.kind(entry, exits),
                "items": {"done": items[0], "total": items[1]} if items is not None else None,
                "critical": entry.name in path,
                "started": started.get(entry.name),
                "finished": ended.get(entry.name) if phase in outlook.FINISHED else None,
            }
        )
    return out


def edges(flow: JobFlow) -> list[Json]:
    """`source` runs first, `target` waits for it (each entry's `dependsOn.targets`)."""
    exits = set(flow.exit_handlers)
    known = {e.name for e in flow.flows}
    out: list[Json] = []
    seen: set[tuple[str, str]] = set()
    for entry in flow.flows:
        label = flowshape.edge_label(entry)
        for target in entry.targets:
            pair = (target, entry.name)
            if target not in known or pair in seen:
                continue  # (an unknown target: admission refuses it)
            seen.add(pair)
            out.append(
                {
                    "source": node_id(target, exits),
                    "target": node_id(entry.name, exits),
                    "label": label,
                }
            )
    return out


def shape(flow: JobFlow) -> tuple[Any, ...]:
    """What fixes a flow's drawing (its uid, nodes and edges): when it changes the page
    lays the graph out again (`reload`)."""
    exits = set(flow.exit_handlers)
    ids = tuple(dict.fromkeys(node_id(e.name, exits) for e in flow.flows))
    lines = tuple((e["source"], e["target"], e["label"]) for e in edges(flow))
    return flow.metadata.uid, ids, lines


def _template(view: FlowView, entry: str) -> str:
    """The entry's template: for a `switch`, the one it picked, else its cases."""
    spec = next(e for e in view.flow.flows if e.name == entry)
    if spec.switch:
        picked = view.records.get(names.job_name(view.flow.name, entry), {}).get("template")
        return str(picked) if picked else " | ".join(case.template for case in spec.switch)
    return spec.template_name


def _reason(view: FlowView, entry: str, phase: str) -> str | None:
    """Why a node that is not running waits, was skipped or failed: describe's REASON and
    MESSAGE of its vcjob (`flowwaits.waiting`), the message if any."""
    if phase in BUSY:
        return None
    job = names.job_name(view.flow.name, entry)
    reason, message = flowwaits.waiting(job, view.conditions.get(job) or {}, view.waits)
    return message or reason or None


def _entry_times(view: FlowView) -> tuple[dict[str, str], dict[str, str]]:
    """Entry → when its vcjob started, and ended (a `for` entry: its first item's start,
    its last item's end)."""
    prefix = f"{view.flow.name}-"
    entries = {e.name for e in view.flow.flows}
    started: dict[str, str] = {}
    ended: dict[str, str] = {}
    for job, record in view.records.items():
        if not job.startswith(prefix):
            continue
        entry = job[len(prefix) :]
        if entry not in entries:
            group, _, index = entry.rpartition("-")
            if not index.isdigit() or group not in entries:
                continue
            entry = group
        start, end = record.get("startTimestamp"), record.get("endTimestamp")
        if start:
            started[entry] = min(started.get(entry, str(start)), str(start))
        if end:
            ended[entry] = max(ended.get(entry, str(end)), str(end))
    return started, ended


# --- the stream's frames -----------------------------------------------------------------


def slim(node: Mapping[str, Any]) -> Json:
    """A node's changing fields (and its id): what a `nodes` frame carries of it."""
    return {"id": node["id"], **{key: node[key] for key in CHANGING}}


def changed(
    before: Mapping[str, Mapping[str, Any]], now: Sequence[Mapping[str, Any]]
) -> list[Json]:
    """The nodes of `now` whose changing fields differ from `before` (id → `slim` node,
    as last sent), slim."""
    out = []
    for node in now:
        thin = slim(node)
        if before.get(thin["id"]) != thin:
            out.append(thin)
    return out


def nodes_frame(view: FlowView, changed_nodes: list[Json]) -> Json:
    """The `nodes` event's data: the flow's phase, ETA and critical path, and the nodes
    that changed."""
    eta, seconds = _eta(view)
    return {
        "namespace": view.flow.namespace,
        "name": view.flow.name,
        "phase": view.flow.phase,
        "eta": eta,
        "etaSeconds": seconds,
        "criticalPath": critical_path(view),
        "nodes": changed_nodes,
    }


# --- a `for` entry's items ---------------------------------------------------------------


def items(view: FlowView, entry: str, offset: int, limit: int) -> Json | None:
    """Items `offset` to `offset + limit` of a `for` entry (index, vcjob, phase, times),
    and how many it has; None when `entry` is not a `for` entry of the flow."""
    seen = view.seen.entries.get(entry)
    if seen is None or seen.items is None:
        return None
    total = seen.items[1]
    job = names.job_name(view.flow.name, entry)
    conditions = view.conditions
    found: list[Json] = []
    for index in range(max(offset, 0), min(total, max(offset, 0) + min(limit, MAX_ITEMS_PAGE))):
        name = f"{job}-{index}"
        cond = conditions.get(name) or {}
        record = view.records.get(name) or {}
        found.append(
            {
                "index": index,
                "job": name,
                "phase": str(cond.get("phase") or record.get("state") or ""),
                "started": record.get("startTimestamp") or None,
                "finished": record.get("endTimestamp") or None,
            }
        )
    return {"total": total, "items": found}
