"""A vcjob's spec as the controller reads it: the mutating-webhook defaults (reference §2.1)
and the numbers the state machine and the gang scheduler use (`Shape`).

`with_defaults` is what the store (or the runtime shell) applies when a vcjob is created, as
Volcano's `/jobs/mutate` webhook does; `shape` applies it again (it is idempotent) so that
callers may pass a job as the user wrote it. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass

from vcflow.api.vcjob import JobSpec, TaskSpec, VCJob

DEFAULT_QUEUE = "default"
DEFAULT_SCHEDULER = "volcano"
DEFAULT_MAX_RETRY = 3
#: Plugins that imply `svc` (and `ssh` for mpi), as the webhook adds them.
SVC_FRAMEWORKS = ("tensorflow", "mpi", "pytorch", "ray")


@dataclass(frozen=True)
class TaskShape:
    """One task after defaulting: the numbers §6 and §10 read."""

    name: str
    replicas: int
    min_available: int
    max_retry: int
    depends_on: tuple[str, ...] = ()
    depends_any: bool = False
    partition_size: int = 0


@dataclass(frozen=True)
class Shape:
    """The job after defaulting: tasks in spec order and the job-level numbers."""

    tasks: tuple[TaskShape, ...]
    min_available: int
    max_retry: int
    min_success: int | None = None

    @property
    def total_replicas(self) -> int:
        return sum(t.replicas for t in self.tasks)

    @property
    def task_gates(self) -> bool:
        """Task minimums count (gang and success test) only when job minAvailable ≥ their sum
        (§2.1, §6.2 step 3a, §10.4)."""
        return self.min_available >= sum(t.min_available for t in self.tasks)

    def task(self, name: str) -> TaskShape | None:
        return next((t for t in self.tasks if t.name == name), None)


def with_defaults(job: VCJob) -> VCJob:
    """The job as the mutating webhook stores it (§2.1): a shallow copy with the defaulted
    spec — metadata and status are `job`'s own objects (copy them before changing them in
    place). A deep copy per vcjob event was the runtime's single biggest cost at 1,000 jobs."""
    return job.model_copy(update={"spec": spec_with_defaults(job.spec or JobSpec())})


def spec_with_defaults(spec: JobSpec) -> JobSpec:
    """`spec` with the webhook defaults; `spec` itself (read-only to the caller) when it
    already has them, as every stored vcjob does — the common, cheap case."""
    if _defaulted(spec):
        return spec
    out = spec.clone()
    out.queue = out.queue or DEFAULT_QUEUE
    out.scheduler_name = out.scheduler_name or DEFAULT_SCHEDULER
    out.max_retry = out.max_retry or DEFAULT_MAX_RETRY  # an explicit 0 becomes 3 too
    out.tasks = [_task_defaults(task, i) for i, task in enumerate(out.tasks or [])]
    if not out.min_available:
        out.min_available = sum(t.min_available or 0 for t in out.tasks)
    plugins = out.plugins
    if plugins is not None:
        if "svc" not in plugins and any(p in plugins for p in SVC_FRAMEWORKS):
            plugins["svc"] = []
        if "ssh" not in plugins and "mpi" in plugins:
            plugins["ssh"] = []
    return out


def _defaulted(spec: JobSpec) -> bool:
    tasks = spec.tasks or []
    if not (spec.queue and spec.scheduler_name and spec.max_retry):
        return False
    if any(not t.name or t.min_available is None or not t.max_retry for t in tasks):
        return False
    if not spec.min_available and any(t.min_available for t in tasks):
        return False
    plugins = spec.plugins or {}
    if "svc" not in plugins and any(p in plugins for p in SVC_FRAMEWORKS):
        return False
    return "ssh" in plugins or "mpi" not in plugins


def _task_defaults(task: TaskSpec, index: int) -> TaskSpec:
    task.name = task.name or f"default{index}"
    if task.min_available is None:
        policy = task.partition_policy
        if policy is not None and (policy.min_partitions or 0) > 0:
            task.min_available = (policy.min_partitions or 0) * (policy.partition_size or 0)
        else:
            task.min_available = task.replicas or 0
    task.max_retry = task.max_retry or DEFAULT_MAX_RETRY
    return task


def shape(job: VCJob) -> Shape:
    """The defaulted numbers of `job`. Kept per spec object (specs are never changed in
    place once a job holds them: a new spec is a new object): the runtime and its scheduler
    ask a dozen times per job, and each build walks every task."""
    given = job.spec
    kept = _shapes.get(id(given))
    if kept is not None and kept[0] is given:
        return kept[1]
    spec = spec_with_defaults(given or JobSpec())
    found = Shape(
        tasks=tuple(_task_shape(t) for t in spec.tasks or []),
        min_available=spec.min_available or 0,
        max_retry=spec.max_retry or DEFAULT_MAX_RETRY,
        min_success=spec.min_success,
    )
    if given is not None:
        if len(_shapes) >= _SHAPES_KEPT:
            _shapes.clear()
        _shapes[id(given)] = (given, found)  # (the spec is held: its id is not reused)
    return found


def forget_shape(job: VCJob) -> None:
    """The job is no longer read (gone, or retired by the runtime): its spec is not kept
    for it (a wide flow's ended vcjobs would otherwise stay, up to `_SHAPES_KEPT` specs)."""
    kept = _shapes.get(id(job.spec))
    if kept is not None and kept[0] is job.spec:
        del _shapes[id(job.spec)]


_SHAPES_KEPT = 4096
_shapes: dict[int, tuple[JobSpec, Shape]] = {}


def _task_shape(task: TaskSpec) -> TaskShape:
    deps = task.depends_on
    names = tuple(deps.name or []) if deps is not None else ()
    any_of = deps is not None and (deps.iteration or "").lower() == "any"
    partition = task.partition_policy.partition_size if task.partition_policy else None
    return TaskShape(
        name=task.name or "",
        replicas=max(task.replicas or 0, 0),
        min_available=task.min_available or 0,
        max_retry=task.max_retry or DEFAULT_MAX_RETRY,
        depends_on=names,
        depends_any=any_of and len(names) > 1,
        partition_size=partition or 0,
    )


def task_specs(job: VCJob) -> list[TaskSpec]:
    """The defaulted task specs, in spec order (pod templates included)."""
    return list(spec_with_defaults(job.spec or JobSpec()).tasks or [])


def plugins(job: VCJob) -> dict[str, list[str]]:
    return dict(spec_with_defaults(job.spec or JobSpec()).plugins or {})
