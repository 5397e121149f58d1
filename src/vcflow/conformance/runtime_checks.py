"""Checks of a runtime step's `expect` (conformance README "Runtime cases", Assertions)
against the runtime harness's world (the store's vcjobs and pods, the phases the runtime's
observer saw, the pods the watch log shows created); each problem is one short line. Job
keys sit directly in `expect` for a single-job case and under `expect.jobs.<name>`
otherwise; pod keys cover every job. vcflow's reading: `configmaps.<job>-svc` is the svc
plugin's files for the job."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.conformance.cases import CaseError
from vcflow.conformance.runtime_world import RuntimeWorld
from vcflow.reconcile.vcjob import kubelet, pods

STATUS_NUMBERS = {
    "retryCount": "retry_count",
    "version": "version",
    "minAvailable": "min_available",
    "pending": "pending",
    "running": "running",
    "succeeded": "succeeded",
    "failed": "failed",
    "terminating": "terminating",
    "unknown": "unknown",
}
JOB_KEYS = frozenset(
    {
        "exists",
        "phase",
        "phases_seen",
        "taskStatusCount",
        "conditions",
        "unschedulable_contains",
        *STATUS_NUMBERS,
    }
)
POD_KEYS = frozenset(
    {
        "pods",
        "pods_alive",
        "pods_unplaced",
        "pods_created",
        "pods_created_total",
        "restart_counts",
        "pod_meta",
        "configmaps",
    }
)
ANY = "*"


def check(world: RuntimeWorld, expect: Mapping[str, Any], single: str | None) -> list[str]:
    unknown = set(expect) - JOB_KEYS - POD_KEYS - {"jobs"}
    if unknown:
        raise CaseError(f"unknown expect keys: {', '.join(sorted(unknown))}")
    problems: list[str] = []
    if single is not None:
        problems += job(world, single, {k: v for k, v in expect.items() if k in JOB_KEYS})
    for name, want in (expect.get("jobs") or {}).items():
        if not isinstance(want, Mapping) or set(want) - JOB_KEYS:
            raise CaseError(f"expect.jobs.{name} must be a map of job keys")
        problems += job(world, str(name), want)
    return problems + pod_checks(world, expect)


def job(world: RuntimeWorld, name: str, want: Mapping[str, Any]) -> list[str]:
    found = world.job(name)
    if "exists" in want and (found is not None) != bool(want["exists"]):
        return [f"job {name} exists: {found is not None}, expected {want['exists']}"]
    if found is None:
        return [f"job {name} does not exist"] if set(want) - {"exists"} else []
    status = found.status
    have: dict[str, Any] = {
        "phase": found.phase,
        "phases_seen": world.phases_seen.get(name, []),
        "conditions": [c.status for c in (status.conditions or [])] if status else [],
        "taskStatusCount": {
            t: dict(s.phase or {})
            for t, s in ((status.task_status_count or {}) if status else {}).items()
        },
    }
    for key, attr in STATUS_NUMBERS.items():
        have[key] = (getattr(status, attr) if status else None) or 0
    out = []
    if "unschedulable_contains" in want:
        out += _unschedulable(name, found, str(want["unschedulable_contains"] or ""))
    for key, expected in want.items():
        if key in ("exists", "unschedulable_contains"):
            continue
        normal = _normal(key, expected)
        if have[key] != normal:
            out.append(f"job {name} {key} {have[key]!r} != expected {normal!r}")
    return out


def _unschedulable(name: str, found: VCJob, part: str) -> list[str]:
    """vcflow: the message of the job's `Unschedulable` condition holds `part` (`''`: the
    job has no such condition) — why the scheduler keeps it waiting."""
    conditions = (found.status.conditions or []) if found.status else []
    said = [
        str((c.model_extra or {}).get("message") or "")
        for c in conditions
        if (c.model_extra or {}).get("reason") == "Unschedulable"
    ]
    message = said[-1] if said else ""
    if (part and part in message) or (not part and not said):
        return []
    return [f"job {name} Unschedulable message {message!r} does not hold {part!r}"]


def _normal(key: str, value: Any) -> Any:
    if key == "phase":
        return value or ""
    if key in ("phases_seen", "conditions"):
        return list(value or [])
    if key == "taskStatusCount":
        return {str(t): dict(p or {}) for t, p in (value or {}).items()}
    return value or 0


def pod_checks(world: RuntimeWorld, expect: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    every = world.pods()
    world.count_creations()
    if "pods" in expect:
        have = {n: ("Terminating" if p.deleting else p.phase) for n, p in every.items()}
        if have != dict(expect["pods"] or {}):
            out.append(f"pods {have} != expected {dict(expect['pods'] or {})}")
    sets = {
        "pods_alive": {n for n, p in every.items() if not p.deleting and p.phase in kubelet.ALIVE},
        "pods_unplaced": {n for n, p in every.items() if not p.placed},
    }
    for key, have_set in sets.items():
        if key in expect and have_set != set(expect[key] or []):
            out.append(f"{key} {sorted(have_set)} != expected {sorted(expect[key] or [])}")
    if "pods_created" in expect:
        want_created = sorted(expect["pods_created"] or [])
        if sorted(world.created) != want_created:
            out.append(f"pods_created {sorted(world.created)} != expected {want_created}")
    total = expect.get("pods_created_total")
    if "pods_created_total" in expect and world.created_total != total:
        out.append(f"pods_created_total {world.created_total} != expected {total}")
    for name, count in (expect.get("restart_counts") or {}).items():
        pod = every.get(str(name))
        have_count = _restarts(pod) if pod is not None else None
        if have_count != count:
            out.append(f"restart_counts {name}: {have_count} != expected {count}")
    for name, meta in (expect.get("pod_meta") or {}).items():
        out += _meta(world, every.get(str(name)), str(name), meta or {})
    for name, data in (expect.get("configmaps") or {}).items():
        out += _configmap(world, str(name), data or {})
    return out


def _restarts(pod: Pod) -> int:
    statuses = pod.status.container_statuses if pod.status else None
    return statuses[0].restart_count if statuses else 0


def _meta(world: RuntimeWorld, pod: Pod | None, name: str, want: Mapping[str, Any]) -> list[str]:
    if pod is None:
        return [f"pod_meta: no pod {name}"]
    owner = world.job(pods.job_of(pod))
    files = pods.svc_files(owner) if owner is not None else {}
    spec = pod.spec
    have: dict[str, Any] = {
        "labels": pod.metadata.labels,
        "annotations": pod.metadata.annotations,
        "env": pods.container_env(pod, files),
        "hostname": spec.hostname if spec else None,
        "subdomain": spec.subdomain if spec else None,
    }
    out = []
    for key, expected in want.items():
        if key not in have:
            raise CaseError(f"pod_meta.{name}: unknown key {key}")
        if isinstance(expected, Mapping):
            out += [f"pod {name} {key}: {p}" for p in _subset(have[key], expected)]
        elif have[key] != expected:
            out.append(f"pod {name} {key} {have[key]!r} != expected {expected!r}")
    return out


def _configmap(world: RuntimeWorld, name: str, want: Mapping[str, Any]) -> list[str]:
    for found in world.jobs():
        if pods.svc_configmap(found.name) == name:
            have = pods.svc_files(found)
            return [f"configmap {name}: {p}" for p in _subset(have, want)]
    return [f"no configmap {name}"]


def _subset(have: Mapping[str, Any], want: Mapping[str, Any]) -> list[str]:
    """Only the listed keys are compared; `"*"` means present with any value."""
    out = []
    for key, value in want.items():
        if key not in have:
            out.append(f"{key} missing")
        elif value != ANY and have[key] != value:
            out.append(f"{key} {have[key]!r} != expected {value!r}")
    return out
