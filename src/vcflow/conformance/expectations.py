"""Checks of a controller step's `expect` against the harness world; each problem is one
short line. vcflow's reading (conformance README): `conditions` ignores `Waiting` entries,
`waiting` maps entries to vcflow's reasons (`Backoff` among them: a retry that waits),
`template_status` `[]` ≡ null. vcflow's own cases may also give a flow's `reason`
(`state.reason`) and a `jobStatusList` item's `restartCount` and `attempt`
(docs/compatibility.md, "vcflow's own cases"), and the flow language's `reasons`,
`messages_contain`, `outputs` and `message_contains` (tests/conformance/vcflow/README.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vcflow.api.errors import NotFound
from vcflow.api.event import Event
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.vcjob import VCJob
from vcflow.conformance.world import World
from vcflow.reconcile.flow import BACKOFF, CREATE_FAILED, NAME_CONFLICT, TEMPLATE_NOT_FOUND, WAITING

LISTS = (
    "pendingJobs",
    "runningJobs",
    "completedJobs",
    "failedJobs",
    "terminatedJobs",
    "unKnowJobs",
)
VCFLOW_REASONS = (TEMPLATE_NOT_FOUND, CREATE_FAILED, NAME_CONFLICT, BACKOFF)
#: `jobStatusList` item fields compared when a case gives them
JOB_STATUS_EXTRAS = ("restartCount", "attempt")
OWNER_KEYS = ("apiVersion", "kind", "name", "controller", "blockOwnerDeletion")


def flow_statuses(world: World) -> dict[str, Any]:
    return {
        f.name: (f.status.to_dict() if f.status else None)
        for f in world.store.list(JobFlow, world.namespace)
    }


def check(
    world: World, expect: Mapping[str, Any], *, before: dict[str, Any], rejected: dict[str, str]
) -> list[str]:
    problems: list[str] = []
    if "vcjobs" in expect:
        have = sorted(j.name for j in world.store.list(VCJob, world.namespace))
        if have != sorted(expect["vcjobs"] or []):
            problems.append(f"vcjobs {have} != expected {sorted(expect['vcjobs'] or [])}")
    for name, want in (expect.get("flows") or {}).items():
        problems += _flow(world, str(name), want, before.get(str(name)))
    for name, want in (expect.get("vcjob_checks") or {}).items():
        problems += _vcjob(world, str(name), want)
    orders = expect.get("vcjob_order") or []
    for order in orders if orders and isinstance(orders[0], list) else [orders]:
        problems += _order(world, [str(n) for n in order])
    for name, want in (expect.get("template_status") or {}).items():
        problems += _template(world, str(name), want)
    events = world.store.list(Event, world.namespace)
    for item in expect.get("events_include") or []:
        n = sum(_event_matches(e, item) for e in events)
        wanted = item.get("count")
        if (wanted is None and n == 0) or (wanted is not None and n != wanted):
            problems.append(f"events_include {dict(item)}: {n} matching events")
    for item in expect.get("events_exclude") or []:
        if any(_event_matches(e, item) for e in events):
            problems.append(f"events_exclude {dict(item)}: a matching event was recorded")
    if "sync_error_contains" in expect:
        problems += _sync_error(world, expect["sync_error_contains"])
    problems += _rejections(expect.get("create_rejected") or {}, rejected)
    return problems


def _flow(world: World, name: str, want: Mapping[str, Any], before: Any) -> list[str]:
    try:
        flow = world.store.get(JobFlow, world.namespace, name)
    except NotFound:
        return [f"flow {name} does not exist"]
    status = flow.status.to_dict() if flow.status else {}
    out: list[str] = []
    if "phase" in want:
        have = (status.get("state") or {}).get("phase") or ""
        if have != (want["phase"] or ""):
            out.append(f"flow {name} phase {have!r} != {want['phase']!r}")
    if "reason" in want:
        have_r = (status.get("state") or {}).get("reason") or ""
        if have_r != (want["reason"] or ""):
            out.append(f"flow {name} reason {have_r!r} != {want['reason']!r}")
    for key in LISTS:
        if key in want and sorted(status.get(key) or []) != sorted(want[key] or []):
            out.append(f"flow {name} {key} {sorted(status.get(key) or [])} != {want[key]}")
    conds = status.get("conditions") or {}
    if "conditions" in want:
        have_c = {k: v.get("phase") or "" for k, v in conds.items() if v.get("phase") != WAITING}
        want_c = {k: v or "" for k, v in (want["conditions"] or {}).items()}
        if have_c != want_c:
            out.append(f"flow {name} conditions {have_c} != {want_c}")
    if "waiting" in want:
        prefix = f"{name}-"
        have_w = {
            k.removeprefix(prefix): v.get("reason")
            for k, v in conds.items()
            if v.get("phase") == WAITING and v.get("reason") in VCFLOW_REASONS
        }
        if have_w != dict(want["waiting"] or {}):
            out.append(f"flow {name} waiting {have_w} != {want['waiting']}")
    if "jobStatusList" in want:
        given = (want["jobStatusList"] or {}).values()
        extras = [k for k in JOB_STATUS_EXTRAS if any(k in v for v in given)]
        have_j = {
            j["name"]: {
                "state": j.get("state") or "",
                "runningHistories": [h.get("state") for h in j.get("runningHistories") or []],
                **{k: j.get(k) or (1 if k == "attempt" else 0) for k in extras},
            }
            for j in status.get("jobStatusList") or []
        }
        want_j = {
            k: {
                "state": v.get("state") or "",
                "runningHistories": list(v.get("runningHistories") or []),
                **{x: v.get(x, have_j.get(k, {}).get(x)) for x in extras},
            }
            for k, v in (want["jobStatusList"] or {}).items()
        }
        if have_j != want_j:
            out.append(f"flow {name} jobStatusList {have_j} != {want_j}")
    out += _language(name, status, want)
    if want.get("status_unchanged") and (status or None) != before:
        out.append(f"flow {name} status changed")
    return out


def _language(name: str, status: Mapping[str, Any], want: Mapping[str, Any]) -> list[str]:
    """The flow language's keys (tests/conformance/vcflow/README.md), each over the vcjobs
    it lists: `reasons` (a condition's `reason`, '' = none), `messages_contain` (a
    substring of a condition's `message`), `outputs` (a `jobStatusList` item's `outputs`,
    absent = `{}`), and `message_contains` (a substring of the flow's `state.message`)."""
    out: list[str] = []
    conds = status.get("conditions") or {}
    for job, reason in (want.get("reasons") or {}).items():
        have = (conds.get(job) or {}).get("reason") or ""
        if have != (reason or ""):
            out.append(f"flow {name} condition {job} reason {have!r} != {reason!r}")
    for job, text in (want.get("messages_contain") or {}).items():
        have = (conds.get(job) or {}).get("message") or ""
        if str(text) not in have:
            out.append(f"flow {name} condition {job} message {have!r} lacks {text!r}")
    items = {j.get("name"): j for j in status.get("jobStatusList") or []}
    for job, value in (want.get("outputs") or {}).items():
        have_o = (items.get(job) or {}).get("outputs") or {}
        if have_o != (value or {}):
            out.append(f"flow {name} {job} outputs {have_o} != {value}")
    if "message_contains" in want:
        have_m = (status.get("state") or {}).get("message") or ""
        if str(want["message_contains"]) not in have_m:
            out.append(f"flow {name} message {have_m!r} lacks {want['message_contains']!r}")
    return out


def _vcjob(world: World, name: str, want: Mapping[str, Any]) -> list[str]:
    try:
        job = world.store.get(VCJob, world.namespace, name)
    except NotFound:
        return [f"vcjob {name} does not exist"]
    meta = job.metadata.to_dict()
    out = []
    for key in ("labels", "annotations"):
        if key in want and (meta.get(key) or {}) != (want[key] or {}):
            out.append(f"vcjob {name} {key} {meta.get(key)} != {want[key]}")
    if "ownerReferences" in want:
        have = [{k: r.get(k) for k in OWNER_KEYS} for r in meta.get("ownerReferences") or []]
        exp = [{k: r.get(k) for k in OWNER_KEYS} for r in want["ownerReferences"] or []]
        if have != exp:
            out.append(f"vcjob {name} ownerReferences {have} != {exp}")
    if "submitted_spec" in want:
        have_spec = world.harness.submitted.get(name)
        if have_spec != want["submitted_spec"]:
            out.append(f"vcjob {name} submitted spec {have_spec} != {want['submitted_spec']}")
    return out


def _order(world: World, want: list[str]) -> list[str]:
    """`vcjob_order` (a list, or a list of lists, each on its own): the vcjobs it lists
    were created in that order; others may come between them."""
    wanted = set(want)
    have = [n for n in dict.fromkeys(world.harness.created) if n in wanted]
    return [] if have == want else [f"vcjob_order {have} != {want}"]


def _template(world: World, name: str, want: Any) -> list[str]:
    try:
        template = world.store.get(JobTemplate, world.namespace, name)
    except NotFound:
        return [f"template {name} does not exist"]
    have = sorted((template.status.job_depends_on_list or []) if template.status else [])
    if have != sorted(want or []):
        return [f"template {name} jobDependsOnList {have} != {want}"]
    return []


def _event_matches(event: Event, item: Mapping[str, Any]) -> bool:
    obj = item.get("object")
    if obj is not None:
        kind, _, name = str(obj).partition("/")
        if (event.involved_object.kind, event.involved_object.name) != (kind, name):
            return False
    for key in ("type", "reason", "message"):
        if key in item and getattr(event, key) != item[key]:
            return False
    return "message_contains" not in item or str(item["message_contains"]) in event.message


def _sync_error(world: World, want: Any) -> list[str]:
    have = world.manager.flows.last_error
    if want is None:
        return [] if have is None else [f"the last sync failed: {have}"]
    if have is None or str(want) not in have:
        return [f"expected the last sync to fail with {want!r}, got {have!r}"]
    return []


def _rejections(want: Mapping[str, Any], have: dict[str, str]) -> list[str]:
    out = []
    if set(want) != set(have):
        out.append(f"rejected creates {sorted(have)} != expected {sorted(want)}: {have}")
    for label, text in want.items():
        if text is not None and label in have and str(text) not in have[label]:
            out.append(f"rejection of {label} lacks {text!r}: {have[label]}")
    return out
