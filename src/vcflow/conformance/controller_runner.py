"""Controller cases, run for real: vcflow's admission, memory store and controllers (runtime
`none`: vcjob phases change only by the case's `set_phase`, a status write of the vcjob as
Volcano's job controller makes it; no pod exists unless a case's `create_pod` makes one, as
Volcano's job controller and the kubelet would, to give a flow its outputs), with a virtual
clock. Each step's actions are applied as
one batch, the controllers settle, then `expect_vcflow`/`expect` is checked
(`expectations.py`). With a `serve` (`world.Serve`) the controllers and the actions go
through the store it gives, e.g. the Kubernetes API in front of the memory store."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vcflow.api import loading
from vcflow.api.clusterscope import ClusterObjectMeta
from vcflow.api.errors import FieldError, InputError, NotFound
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.meta import Resource, controller_reference
from vcflow.api.pod import (
    ContainerState,
    ContainerStateTerminated,
    ContainerStatus,
    Pod,
    PodSpec,
    PodStatus,
)
from vcflow.api.scheduling import SCHEDULING_API_VERSION, Queue, QueueStatus
from vcflow.api.vcjob import Container, JobState, VCJob, VCJobStatus
from vcflow.conformance import expectations
from vcflow.conformance.cases import Case, CaseError, Step, vcflow_steps
from vcflow.conformance.results import Failed, Passed, Result, Skipped
from vcflow.conformance.world import Serve, World, direct
from vcflow.store.base import UnknownKind

KINDS: dict[str, type[Resource]] = {
    "Job": VCJob,
    "JobFlow": JobFlow,
    "JobTemplate": JobTemplate,
    "Queue": Queue,
}
#: the cluster-scoped kinds a case writes (stored with namespace "")
CLUSTER_SCOPED: tuple[type[Resource], ...] = (Queue,)


class _NoKind(Exception):
    """The store the case runs on holds no such kind (a backend that does not serve it)."""


def run_controller(case: Case, *, serve: Serve = direct) -> Result:
    namespace = str(case.data.get("namespace") or "default")
    steps = vcflow_steps(case)
    with World(namespace, serve) as world:
        try:
            return _run_steps(world, case, steps)
        except _NoKind as exc:
            return Skipped(f"this backend holds no kind {exc}")


def _run_steps(world: World, case: Case, steps: list[Step]) -> Result:
    for step in steps:
        before = expectations.flow_statuses(world)
        world.manager.flows.last_error = None
        rejected: dict[str, str] = {}
        for i, action in enumerate(step.do):
            _apply(world, case, step, i, action, rejected)
        if not any(_is_wait(a) for a in step.do):
            world.settle()
        problems = expectations.check(world, step.expect, before=before, rejected=rejected)
        if problems:
            return Failed(f'step {step.index + 1} "{step.name}": ' + "; ".join(problems))
    return Passed(f"{len(steps)} steps")


def _is_wait(action: Any) -> bool:
    return isinstance(action, Mapping) and "wait" in action


def _apply(
    world: World, case: Case, step: Step, i: int, action: Any, rejected: dict[str, str]
) -> None:
    if not isinstance(action, Mapping) or len(action) != 1:
        raise CaseError(f"steps[{step.index}].do[{i}] must be a map with one action")
    verb, arg = next(iter(action.items()))
    loc = ("steps", step.index, "do", i, verb)
    if verb in ("create", "update"):
        _write(world, case, verb, arg, loc, rejected)
    elif verb == "delete":
        _delete(world, arg)
    elif verb == "set_phase":
        for name, phase in dict(arg).items():
            _set_phase(world, str(name), str(phase))
    elif verb == "set_queue_state":
        for name, state in dict(arg).items():
            _set_queue_state(world, str(name), str(state))
    elif verb == "touch":
        _touch(world, str(arg))
    elif verb == "create_pod":
        _create_pod(world, arg)
    elif verb == "wait":
        world.wait(float(arg))
    elif verb == "restart_controllers":
        world.restart()
    elif verb == "fail_creates":
        count = arg.get("count")
        world.harness.faults[str(arg["job"])] = (str(arg["message"]), count)
    else:
        raise CaseError(f"unknown action {verb!r}")


def _write(
    world: World,
    case: Case,
    verb: str,
    data: Any,
    loc: tuple[str | int, ...],
    rejected: dict[str, str],
) -> None:
    if not isinstance(data, dict):
        raise CaseError(f"{verb}: argument must be an object")
    obj, schema = _model(case.sub_document(data, loc))
    label = f"{data.get('kind')}/{(data.get('metadata') or {}).get('name')}"
    if obj is None:
        rejected[label] = "; ".join(str(e) for e in schema)
        return
    obj.metadata.namespace = (
        world.namespace if not data.get("metadata", {}).get("namespace") else obj.metadata.namespace
    )
    if isinstance(obj, CLUSTER_SCOPED):
        obj.metadata.namespace = ""
    try:
        if verb == "create":
            world.store.create(obj)
        else:
            current = _current(world, obj)
            obj.metadata.namespace = current.namespace
            obj.metadata.resource_version = current.metadata.resource_version
            world.store.update(obj)
    except UnknownKind:
        raise _NoKind(obj.kind) from None
    except InputError as exc:
        rejected[label] = str(exc)


def _current(world: World, obj: Resource) -> Resource:
    """The stored object `obj` updates; a cluster-scoped one found by its name alone (a
    store that does not know the kind as cluster-scoped keeps it in `default`)."""
    if not isinstance(obj, CLUSTER_SCOPED):
        return world.store.get(type(obj), obj.namespace, obj.name)
    for found in world.store.list(type(obj)):
        if found.name == obj.name:
            return found
    raise NotFound(f"{obj.kind} {obj.name} not found")


def _model(doc: loading.Document) -> tuple[Resource | None, list[FieldError]]:
    """The case object's model: a kind vcflow's manifests load, else a Queue (read here
    while they do not load Queues)."""
    data = doc.data
    pair = (data.get("apiVersion"), data.get("kind"))
    if pair == (SCHEDULING_API_VERSION, "Queue") and pair not in loading.MODELS:
        return Queue.from_dict(data), []
    return loading.to_model(doc)


def _delete(world: World, arg: Any) -> None:
    kind = KINDS.get(str(arg.get("kind")))
    if kind is None:
        raise CaseError(f"delete: unknown kind {arg.get('kind')!r}")
    name = str(arg["name"])
    namespace = world.namespace
    if kind in CLUSTER_SCOPED:
        namespace = next((o.namespace for o in world.store.list(kind) if o.name == name), "")
    world.store.delete(kind, namespace, name)


def _set_phase(world: World, name: str, phase: str) -> None:
    try:
        job = world.store.get(VCJob, world.namespace, name)
    except NotFound:
        raise CaseError(f"set_phase: vcjob {name} does not exist") from None
    if job.phase == phase:
        return
    status = job.status.clone() if job.status else VCJobStatus()
    status.state = status.state.clone() if status.state else JobState()
    status.state.phase = phase
    job.status = status
    world.store.update_status(job)


def _set_queue_state(world: World, name: str, state: str) -> None:
    """A Queue's `status.state`, written as Volcano's queue controller writes it."""
    probe = Queue(metadata=ClusterObjectMeta(name=name))
    try:
        queue = _current(world, probe)
    except NotFound:
        raise CaseError(f"set_queue_state: Queue {name} does not exist") from None
    assert isinstance(queue, Queue)
    status = queue.status.clone() if queue.status is not None else QueueStatus()
    status.state = state  # (the rest kept)
    if status.allocated is None:
        status.allocated = {}  # (Volcano's CRD requires it, as its queue controller writes it)
    queue.status = status
    world.store.update_status(queue)


def _touch(world: World, name: str) -> None:
    job = world.store.get(VCJob, world.namespace, name)
    count = int(job.metadata.annotations.get("conformance/touched", "0")) + 1
    job.metadata.annotations["conformance/touched"] = str(count)
    world.store.update(job, admit=False)


#: the labels and annotations Volcano's job controller puts on a vcjob's pod
_JOB_NAME, _TASK_SPEC, _TASK_INDEX = (
    "volcano.sh/job-name",
    "volcano.sh/task-spec",
    "volcano.sh/task-index",
)


def _create_pod(world: World, arg: Any) -> None:
    """A pod of an existing vcjob, as Volcano's job controller names, labels and owns it,
    with the status the kubelet reports once its containers have ended: `phase`, and per
    container `state.terminated` with `exitCode` and, when given, `message` (the termination
    message, where a flow's outputs are read). Created, then its status written, as the
    kubelet writes it after the job controller created the pod."""
    if not isinstance(arg, Mapping):
        raise CaseError("create_pod: argument must be a map")
    unknown = set(arg) - {"job", "task", "index", "phase", "containers"}
    if unknown or "job" not in arg or not isinstance(arg.get("containers"), list):
        raise CaseError("create_pod: {job, task, index, phase, containers: [...]} expected")
    job_name = str(arg["job"])
    try:
        job = world.store.get(VCJob, world.namespace, job_name)
    except NotFound:
        raise CaseError(f"create_pod: vcjob {job_name} does not exist") from None
    task, index = str(arg.get("task", "main")), int(arg.get("index", 0))
    containers, statuses = [], []
    for c in arg["containers"]:
        if not isinstance(c, Mapping) or not c.get("name"):
            raise CaseError("create_pod: each container needs a name")
        containers.append(Container(name=str(c["name"]), image="busybox:1.36"))
        ended = ContainerStateTerminated(
            exit_code=int(c.get("exitCode", 0)),
            reason="Completed" if int(c.get("exitCode", 0)) == 0 else "Error",
            message=None if c.get("message") is None else str(c["message"]),
        )
        statuses.append(
            ContainerStatus(name=str(c["name"]), state=ContainerState(terminated=ended))
        )
    pod = Pod(spec=PodSpec(containers=containers))
    pod.metadata.name = f"{job_name}-{task}-{index}"
    pod.metadata.namespace = world.namespace
    pod.metadata.labels = {_JOB_NAME: job_name, _TASK_SPEC: task, _TASK_INDEX: str(index)}
    pod.metadata.annotations = {_JOB_NAME: job_name, _TASK_SPEC: task, _TASK_INDEX: str(index)}
    pod.metadata.owner_references = [controller_reference(job)]
    created = world.store.create(pod)
    created.status = PodStatus(
        phase=str(arg.get("phase", "Succeeded")), container_statuses=statuses
    )
    world.store.update_status(created)
