"""What a flow tells a scheduler about the vcjobs it creates (docs/scheduling.md, issue 28):
the annotations `api.scheduling.FLOW_CREATED` (`ageFrom: Flow`), `RANK` (`jobOrder:
CriticalPath`) and `HANDOVER` (`handover.holdSeconds` > 0) — the one contract between the
flow controller and a scheduler, the local gang scheduler or the operator's. Also the order
in which a CriticalPath flow's ready entries are created (highest rank first).

`FlowScheduling` is one flow's part of it: its policy and its entries' ranks, found once per
index (the flow's first sight, a resync, a restart: `dag.critical.ranks` is O(V+E)), from
each entry's `runningEstimate`, else the median of the durations this flow's completed
vcjobs of the same template took (at most `PAST_MAX` each), else 1 s. Pure: no I/O, no clock.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vcflow.api import clock, scheduling
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.dag import critical
from vcflow.dag.graph import Graph
from vcflow.reconcile import jobs as jobbuild
from vcflow.reconcile.vcjob import gang, resources

#: the past durations kept per template for an estimate (the latest ones)
PAST_MAX = 16
#: the reason of a flow held by `admission: Hold` (its `status.state`, its ready entries)
HELD = "Held"


@dataclass(frozen=True)
class Policy:
    """A flow's `spec.schedulingPolicy`, its defaults filled in (admission bounds values)."""

    age_from_flow: bool = False
    critical_path: bool = False
    hold_seconds: int = 0
    hold: bool = False

    @classmethod
    def of(cls, flow: JobFlow) -> Policy:
        given = flow.spec.scheduling_policy if flow.spec is not None else None
        if given is None:
            return cls()
        handover = given.handover
        return cls(
            age_from_flow=given.age_from == scheduling.AGE_FROM_FLOW,
            critical_path=given.job_order == scheduling.ORDER_CRITICAL_PATH,
            hold_seconds=max(handover.hold_seconds or 0, 0) if handover is not None else 0,
            hold=given.admission == scheduling.ADMISSION_HOLD,
        )

    @property
    def annotates(self) -> bool:
        """Does the flow put any scheduling annotation on its vcjobs?"""
        return self.age_from_flow or self.critical_path or self.hold_seconds > 0


class FlowScheduling:
    """One flow's policy, its entries' critical-path ranks (found on first use) and the
    admission hold the controller found (`held`: the message; "" = not held)."""

    def __init__(self, flow: JobFlow) -> None:
        self.policy = Policy.of(flow)
        self.held = ""
        self._ranks: dict[str, float] | None = None

    def ranks(self, flow: JobFlow, history: Mapping[str, Mapping[str, Any]]) -> dict[str, float]:
        """Entry → its rank in seconds; `history`: the flow's jobStatusList items by vcjob."""
        if self._ranks is None:
            graph = Graph.build((e.name, e.targets) for e in flow.flows)
            self._ranks = critical.ranks(graph, estimates(flow, history))
        return self._ranks

    def order_key(
        self, flow: JobFlow, history: Mapping[str, Mapping[str, Any]], entry: str
    ) -> float:
        """How a ready entry (its name, or its `for` entry's for an item) sorts before it is
        created: highest rank first under CriticalPath, else all equal (flow order)."""
        if not self.policy.critical_path:
            return 0.0
        return -self.ranks(flow, history).get(entry, critical.DEFAULT_ESTIMATE)


def estimates(
    flow: JobFlow,
    history: Mapping[str, Mapping[str, Any]],
    elsewhere: Mapping[str, Sequence[float]] | None = None,
) -> dict[str, float]:
    """Each entry's estimate in seconds: its `runningEstimate`, else the median of its
    template's past durations in this flow (`past_durations`) and, if given, `elsewhere`
    (template → durations of other flows' runs), else DEFAULT_ESTIMATE."""
    known = known_estimates(flow, history, elsewhere)
    return {e.name: known.get(e.name, critical.DEFAULT_ESTIMATE) for e in flow.flows}


def known_estimates(
    flow: JobFlow,
    history: Mapping[str, Mapping[str, Any]],
    elsewhere: Mapping[str, Sequence[float]] | None = None,
) -> dict[str, float]:
    """The entries of `estimates` that have an estimate of their own (a `runningEstimate`
    or a past run, here or `elsewhere`), without the default: an ETA built on defaults
    alone is made up. Of a template's runs the last PAST_MAX count, this flow's last (its
    own runs say most about it)."""
    past = past_durations(flow, history)
    out: dict[str, float] = {}
    for entry in flow.flows:
        given = entry.running_estimate
        seconds = clock.parse_go_duration(given) if given is not None else None
        runs = past.get(entry.template_name, [])
        if elsewhere is not None:
            runs = [*elsewhere.get(entry.template_name, ()), *runs][-PAST_MAX:]
        if seconds is not None or runs:
            out[entry.name] = critical.estimate(seconds, runs)
    return out


def past_durations(
    flow: JobFlow, history: Mapping[str, Mapping[str, Any]]
) -> dict[str, list[float]]:
    """Template → seconds its completed vcjobs in this flow took (start to end, as the
    jobStatusList says), the last PAST_MAX of each."""
    template_of: dict[str, str] = {}
    for entry in flow.flows:
        template_of[entry.name] = entry.template_name
    prefix = f"{flow.name}-"
    out: dict[str, list[float]] = {}
    for job, item in history.items():
        if item.get("state") != "Completed":
            continue
        start, end = item.get("startTimestamp"), item.get("endTimestamp")
        if not start or not end:
            continue
        name = job.removeprefix(prefix)
        template = (
            item.get("template") or template_of.get(name) or _group_template(name, template_of)
        )
        if template is None:
            continue
        seconds = (clock.parse_rfc3339(end) - clock.parse_rfc3339(start)).total_seconds()
        kept = out.setdefault(template, [])
        kept.append(max(seconds, 0.0))
        del kept[:-PAST_MAX]
    return out


def _group_template(name: str, template_of: Mapping[str, str]) -> str | None:
    """The template of a `for` item's vcjob `<entry>-<index>`."""
    group, _, index = name.rpartition("-")
    return template_of.get(group) if index.isdigit() else None


def job_annotations(
    flow: JobFlow,
    policy: Policy,
    *,
    rank: float | None = None,
    need: Mapping[str, Any] | None = None,
) -> dict[str, str]:
    """The scheduling annotations of one vcjob of `flow`: its flow's creation time
    (`ageFrom: Flow`), its entry's `rank` (`jobOrder: CriticalPath`), and what its
    successors `need` once it ends (`handover`, when `need` holds anything)."""
    out: dict[str, str] = {}
    created = flow.metadata.creation_timestamp
    if policy.age_from_flow and created:
        out[scheduling.FLOW_CREATED] = created
    if policy.critical_path and rank is not None:
        out[scheduling.RANK] = f"{rank:g}"
    if policy.hold_seconds > 0 and need:
        body = {"holdSeconds": policy.hold_seconds, "need": dict(sorted(need.items()))}
        out[scheduling.HANDOVER] = json.dumps(body, separators=(",", ":"))
    return out


def successors_need(
    flow: JobFlow, successors: list[str], templates: Mapping[str, JobTemplate]
) -> dict[str, str]:
    """The sum of the minimum resources (`gang.min_resources`) of the vcjobs the entries
    `successors` would be built as, quantities as written (`2`, `4Gi`). An entry whose
    template is not known yet — a `switch`, a missing template — is left out; a `for`
    entry counts one item."""
    by_name = {e.name: e for e in flow.flows}
    parts = []
    for name in successors:
        entry = by_name.get(name)
        if entry is None or entry.switch is not None:
            continue
        template = templates.get(entry.template_name)
        if template is None or template.spec is None:
            continue
        job = jobbuild.build_job(flow, entry, template, env=None)
        parts.append(gang.min_resources(job))
    total = resources.total(parts)
    return {n: resources.show(n, a) for n, a in sorted(total.items()) if a > 0}
