"""The printer columns of each served kind, as kubectl shows Volcano's CRDs (reference §2.1)
and the core kinds: a column's name, its cell, and its priority (1: `-o wide` only). One
table for `vcflow get` (cli/columns.py prints the names upper-cased, as kubectl does) and
the server's meta.k8s.io Table responses (server/tables.py). Pure: the time is an argument.

- jobflow: Name, Status (`.status.state.phase`), Age; wide adds Jobs (completed/total
  entries, e.g. `2/5`);
- jobtemplate: Name, Age;
- vcjob: Name, STATUS, minAvailable (`.status.minAvailable`), RUNNINGS (`.status.running`),
  AGE; wide adds QUEUE (`.spec.queue`) — Volcano's own column names;
- pod: Name, Ready (ready/total containers), Status (kube's: the phase, or the waiting or
  terminated reason of a container — `Completed` for a pod that succeeded —, or
  `Terminating`), Restarts, Age; wide adds Node;
- configmap: Name, Data, Age; secret: Name, Type, Data, Age;
- queue: Name, PARENT (Volcano's CRD); priorityclass: Name, Value, Global-Default, Age,
  PreemptionPolicy (kube's);
- event (the server's tables only: `kubectl get events`): Last Seen, Type, Reason, Object
  (`jobflow/test`), Message; wide adds Source, First Seen, Count, Name — kube's columns;
- other kinds: Name, Age.

A value the object does not have yet is an empty cell (as kubectl prints a CRD column).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from vcflow.api import ages, config, names, scheduling
from vcflow.api.event import Event
from vcflow.api.jobflow import JobFlow
from vcflow.api.lease import Lease
from vcflow.api.meta import Resource
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.kubeapi import resources

Cell = Callable[[Resource, datetime], str]


@dataclass(frozen=True)
class Column:
    """One printer column: a meta.k8s.io/v1 TableColumnDefinition and how to fill it."""

    name: str  # as the CRD names it; kubectl prints it upper-cased
    cell: Cell
    priority: int = 0  # 1: shown by `-o wide` only
    type: str = "string"  # OpenAPI type: string, integer, date
    format: str = ""  # `name` for the Name column, as kube-apiserver marks it
    description: str = ""


def _name(obj: Resource, now: datetime) -> str:
    return obj.name


def _age(obj: Resource, now: datetime) -> str:
    return ages.age(obj.metadata.creation_timestamp, now)


def _phase(obj: Resource, now: datetime) -> str:
    return obj.phase if isinstance(obj, JobFlow | VCJob) else ""


def _flow_jobs(obj: Resource, now: datetime) -> str:
    if not isinstance(obj, JobFlow):
        return ""
    status = obj.status
    done = 0
    if status is not None:
        # (entries, not vcjobs: a `for` entry's items count once, as their entry)
        entries = {names.job_name(obj.name, e.name) for e in obj.flows}
        done = sum(1 for job in status.completed_jobs or [] if job in entries)
        done += sum(
            1
            for job, cond in (status.conditions or {}).items()
            if cond.reason == "ForEach" and cond.phase == "Completed" and job in entries
        )
    if status is not None and status.compact_job_status is not None:  # (listed partly)
        done = status.compact_job_status.counts.get("completedJobs", 0)
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
    """kubectl's STATUS of a pod (kube's pod printer): the phase, or a container's waiting
    or terminated reason (the first container's wins: `Completed`, `Error`,
    `ContainerCreating`), `ExitCode:N`/`Signal:N` for an end without a reason, `Running`
    again for a `Completed` pod with a container still running, `Terminating`."""
    if not isinstance(obj, Pod):
        return ""
    if obj.metadata.deletion_timestamp:
        return "Terminating"
    status = obj.status
    if status is None:
        return ""
    reason = status.phase or ""
    running = False
    for c in reversed(status.container_statuses or []):
        state = c.state
        if state and state.waiting and state.waiting.reason:
            reason = state.waiting.reason
        elif state and state.terminated and state.terminated.reason:
            reason = state.terminated.reason
        elif state and state.terminated:
            ended = state.terminated
            reason = f"Signal:{ended.signal}" if ended.signal else f"ExitCode:{ended.exit_code}"
        elif c.ready and state and state.running:
            running = True
    if reason == "Completed" and running:
        ready = any(
            cond.type == "Ready" and cond.status == "True" for cond in status.conditions or []
        )
        reason = "Running" if ready else "NotReady"
    return reason


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


def _lease_holder(obj: Resource, now: datetime) -> str:
    spec = obj.spec if isinstance(obj, Lease) else None
    return (spec.holder_identity or "") if spec is not None else ""


def _queue_parent(obj: Resource, now: datetime) -> str:
    spec = obj.spec if isinstance(obj, scheduling.Queue) else None
    return (spec.parent or "") if spec is not None else ""


def _class_value(obj: Resource, now: datetime) -> str:
    return str(obj.value) if isinstance(obj, scheduling.PriorityClass) else ""


def _class_default(obj: Resource, now: datetime) -> str:
    default = obj.global_default if isinstance(obj, scheduling.PriorityClass) else None
    return "true" if default else "false"


def _class_preemption(obj: Resource, now: datetime) -> str:
    policy = obj.preemption_policy if isinstance(obj, scheduling.PriorityClass) else None
    return policy or ""


def _event_field(read: Callable[[Event], str]) -> Cell:
    def cell(obj: Resource, now: datetime) -> str:
        return read(obj) if isinstance(obj, Event) else ""

    return cell


def _event_last_seen(event: Event, now: datetime) -> str:
    return ages.age(event.last_seen(), now)


def _event_cell(read: Callable[[Event, datetime], str]) -> Cell:
    def cell(obj: Resource, now: datetime) -> str:
        return read(obj, now) if isinstance(obj, Event) else ""

    return cell


def _event_object(event: Event) -> str:
    about = event.involved_object
    return f"{about.kind.lower()}/{about.name}"


def _namespace(obj: Resource, now: datetime) -> str:
    return obj.namespace


NAME = Column(
    "Name",
    _name,
    format="name",
    description="Name must be unique within a namespace.",
)
AGE = Column(
    "Age",
    _age,
    type="date",
    description="The time since the object was created (metadata.creationTimestamp).",
)
#: the column `-A` puts first (kubectl adds it itself to a server's Table)
NAMESPACE = Column("Namespace", _namespace, description="The object's namespace.")

_COLUMNS: dict[resources.APIResource, tuple[Column, ...]] = {
    resources.JOBFLOWS: (
        NAME,
        Column("Status", _phase, description="The flow's phase (.status.state.phase)."),
        AGE,
        Column("Jobs", _flow_jobs, 1, description="Completed entries / all entries."),
    ),
    resources.JOBTEMPLATES: (NAME, AGE),
    resources.VCJOBS: (
        NAME,
        Column("STATUS", _phase, description="The job's phase (.status.state.phase)."),
        Column("minAvailable", _min_available, type="integer", description="minAvailable"),
        Column("RUNNINGS", _runnings, type="integer", description="Running pods"),
        Column("AGE", _age, type="date", description=AGE.description),
        Column("QUEUE", _queue, 1, description="The queue the job is in (.spec.queue)."),
    ),
    resources.PODS: (
        NAME,
        Column("Ready", _pod_ready, description="Ready containers / all containers."),
        Column("Status", _pod_status, description="The pod's phase, or why it is not running."),
        Column("Restarts", _pod_restarts, type="integer", description="Container restarts."),
        AGE,
        Column("Node", _pod_node, 1, description="The node the pod is bound to."),
    ),
    resources.EVENTS: (
        Column("Last Seen", _event_cell(_event_last_seen), type="date"),
        Column("Type", _event_field(lambda e: e.type)),
        Column("Reason", _event_field(lambda e: e.reason)),
        Column("Object", _event_field(_event_object)),
        Column("Source", _event_field(lambda e: (e.source.component or "") if e.source else ""), 1),
        Column("Message", _event_field(lambda e: e.message)),
        Column(
            "First Seen",
            _event_cell(lambda e, now: ages.age(e.first_seen(), now)),
            1,
            type="date",
        ),
        Column("Count", _event_field(lambda e: str(e.times())), 1, type="integer"),
        Column("Name", _name, 1, format="name"),
    ),
    resources.CONFIGMAPS: (NAME, Column("Data", _data_count, type="integer"), AGE),
    resources.SECRETS: (
        NAME,
        Column("Type", _secret_type),
        Column("Data", _data_count, type="integer"),
        AGE,
    ),
    resources.LEASES: (NAME, Column("Holder", _lease_holder), AGE),
    # (Volcano's CRD names one printer column, so kube-apiserver prints no Age)
    resources.QUEUES: (NAME, Column("PARENT", _queue_parent, description="spec.parent")),
    resources.PRIORITY_CLASSES: (
        NAME,
        Column("Value", _class_value, type="integer", description="The class's priority."),
        Column("Global-Default", _class_default, type="boolean"),
        AGE,
        Column("PreemptionPolicy", _class_preemption),
    ),
}


def of(resource: resources.APIResource) -> tuple[Column, ...]:
    """Every column of `resource`'s table, wide ones included (Name and Age for a kind
    without printer columns, as for a CRD without any)."""
    return _COLUMNS.get(resource, (NAME, AGE))


def cells(obj: Resource, cols: Sequence[Column], now: datetime) -> list[str]:
    """One row: each column's cell for `obj`."""
    return [col.cell(obj, now) for col in cols]
