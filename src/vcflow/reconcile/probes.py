"""Probe dependencies (compatibility row 4, docs/flow-features.md §2): what a probe of a target
needs of the target's vcjob, and the checks the controller shell runs for it.

`FlowIndex` keeps a `Target` view of each probed target's current vcjob and asks `assess`:
a probe is MET (its `taskStatus` items hold and it has nothing to connect to), to WAIT (with
why), or to RUN: these `Check`s, which the shell carries out (`controller.prober`) and hands
back as results. Pure: no I/O; the checks are data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from vcflow.api import volumes
from vcflow.api.jobflow import Probe
from vcflow.api.phases import JobPhase, PodPhase
from vcflow.api.platform import Platform
from vcflow.api.vcjob import VCJob
from vcflow.reconcile.vcjob import spec as jobspec

#: seconds between two rounds of a probe that has not succeeded yet
PERIOD = 1.0
#: where a pod on the host's network listens, locally
LOCAL_HOST = "127.0.0.1"
#: the local runtime's network annotation (`runtime.jobnet.ANNOTATION`): `host` keeps a svc
#: job on the host's network, where a probe reaches it
NETWORK_ANNOTATION = "vcflow.io/network"
HOST_NETWORK = "host"
TCP = "tcpSocket"
HTTP = "httpGet"


class Verdict(StrEnum):
    MET = "met"
    WAIT = "wait"
    RUN = "run"


@dataclass(frozen=True)
class Check:
    """One connection the shell makes: a TCP connect, or an HTTP GET answered 200–399."""

    kind: str
    port: int
    task: str = ""
    path: str = "/"
    header: tuple[str, str] | None = None
    host: str = LOCAL_HOST
    #: the target's vcjob, set by the controller shell: where a host resolver finds its pods
    namespace: str = ""
    job: str = ""

    def label(self) -> str:
        where = f"{self.task}:{self.port}" if self.task else f":{self.port}"
        return f"{self.kind} {where}{self.path if self.kind == HTTP else ''}"


@dataclass(frozen=True)
class Round:
    """A probe round for the dependency of `entry` on `target`: every check must succeed."""

    entry: str
    target: str
    checks: tuple[Check, ...]


@dataclass
class Target:
    """What probes need of a target's current vcjob."""

    job: str
    phase: str = ""
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    replicas: dict[str, int] = field(default_factory=dict)
    own_network: dict[str, bool] = field(default_factory=dict)


def target_of(job: VCJob, *, platform: Platform = Platform.LOCAL) -> Target:
    """The probe view of `job` (its tasks with the webhook's default names). On a
    `platform` that reaches pod IPs (a cluster) a job with the svc plugin's own network is
    probed like any other; locally it cannot be (127.0.0.1 is the host's)."""
    reaches_ips = platform.reaches_pod_ips
    status = job.status
    counts = {
        task: dict(state.phase or {})
        for task, state in ((status.task_status_count or {}) if status else {}).items()
    }
    plugins = jobspec.plugins(job)
    svc = any(p in plugins for p in volumes.SVC_PLUGINS)
    job_host = job.metadata.annotations.get(NETWORK_ANNOTATION) == HOST_NETWORK
    replicas: dict[str, int] = {}
    own: dict[str, bool] = {}
    for task in jobspec.task_specs(job):
        name = task.name or ""
        replicas[name] = max(task.replicas or 0, 0)
        meta = task.template.metadata if task.template else None
        task_host = bool(meta and (meta.annotations or {}).get(NETWORK_ANNOTATION) == HOST_NETWORK)
        own[name] = svc and not (reaches_ips or job_host or task_host)
    return Target(job.name, job.phase, counts, replicas, own)


def assess(probe: Probe, target: Target | None) -> tuple[Verdict, tuple[Check, ...], str]:
    """Where the probe of one target stands: (verdict, the checks to run, a note for the
    entry's Waiting message)."""
    if target is None:
        return Verdict.WAIT, (), "no vcjob yet"
    for item in probe.task_status_list or []:
        phase = item.phase or PodPhase.RUNNING
        tasks = _tasks(item.task_name, target)
        if not tasks:
            return Verdict.WAIT, (), f"{target.job} has no task {item.task_name}"
        for task in tasks:
            if not _all_in(target, task, phase):
                return Verdict.WAIT, (), f"taskStatus: the pods of {task} are not all {phase}"
    checks: list[Check] = []
    for tcp in probe.tcp_socket_list or []:
        checks.append(Check(TCP, tcp.port, task=tcp.task_name or ""))
    for http in probe.http_get_list or []:
        header = (http.http_header.name, http.http_header.value) if http.http_header else None
        checks.append(
            Check(
                HTTP,
                http.port or 0,
                task=http.task_name or "",
                path=http.path or "/",
                header=header,
            )
        )
    if not checks:
        return Verdict.MET, (), ""
    for check in checks:
        why = _unreachable(check, target)
        if why:
            return Verdict.WAIT, (), why
    return Verdict.RUN, tuple(checks), ""


def _tasks(name: str | None, target: Target) -> list[str]:
    if not name:
        return list(target.replicas)
    return [name] if name in target.replicas else []


def _all_in(target: Target, task: str, phase: str) -> bool:
    want = target.replicas.get(task, 0)
    return want > 0 and target.counts.get(task, {}).get(phase, 0) >= want


def _unreachable(check: Check, target: Target) -> str:
    """Why the check cannot be made now ("" when it can)."""
    tasks = _tasks(check.task, target)
    if not tasks:
        return f"{target.job} has no task {check.task}"
    if any(target.own_network.get(t) for t in tasks):
        return (
            f"{check.label()} cannot be probed here: {target.job} has its own network "
            f"(svc plugin); annotate its pod template {NETWORK_ANNOTATION}: {HOST_NETWORK}"
        )
    if target.phase != JobPhase.RUNNING:
        return f"waiting for {target.job} to be Running"
    for task in tasks:
        if not _all_in(target, task, PodPhase.RUNNING):
            return f"waiting for the pods of {task} to be Running"
    return ""
