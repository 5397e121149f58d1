"""Gang admission and placement on one machine (reference §10; conformance README "Runtime
cases", scheduler; docs/scheduling.md): exact fit, queues with proportion shares, no
overcommit, no preemption, no reclaim.

One `schedule` call is one scheduler pass:
- *admission* (`queueing.admit`): a job whose PodGroup waits is admitted when its minimum
  resources (§10.1) fit in capacity − used − reserved − other flows' hand-over holds (used:
  placed pods that are Pending, Running or Terminating; reserved: what admitted jobs still
  need for their gang) and its queue's capability, unless its queue is at its share. Queues
  take turns by priority and share; within one, jobs go in `joborder` (priority, age, rank,
  then the order given: creation order); one that does not fit does not block the others.
  A job whose minimum can never fit this machine is reported with why; every waiting job
  gets a `queueing.Wait`.
- *placement*, same order, unplaced pods in task then index order: a *ready* job (placed
  non-failed pods ≥ minAvailable, and each task ≥ its minAvailable when the task gates are
  on) gets every pod that fits; any other job gets the pods that fit only if that makes it
  ready — all or nothing.
Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from vcflow.admission import replicas
from vcflow.api import names
from vcflow.api.phases import JobPhase, PodPhase
from vcflow.api.pod import Pod
from vcflow.api.queues import QueueTable
from vcflow.api.scheduling import DEFAULT_QUEUE
from vcflow.api.vcjob import TaskSpec, VCJob
from vcflow.reconcile.vcjob import holds as holds_mod
from vcflow.reconcile.vcjob import joborder, pods, podset, queueing, resources
from vcflow.reconcile.vcjob import spec as jobspec
from vcflow.reconcile.vcjob.holds import Holds
from vcflow.reconcile.vcjob.model import Group
from vcflow.reconcile.vcjob.resources import Capacity, Resources
from vcflow.reconcile.vcjob.spec import Shape

#: no stored queue: `default` only
NO_QUEUES = QueueTable()
#: Phases in which the controller keeps (or requests) an admission.
SYNCING = frozenset({"", JobPhase.PENDING, JobPhase.RUNNING, JobPhase.RESTARTING})
_NONE = podset.PodSet()  # (never changed)


@dataclass(frozen=True)
class GangJob:
    """A job as the scheduler sees it: the stored vcjob and its PodGroup state."""

    job: VCJob
    group: Group


@dataclass(frozen=True)
class Policy:
    """What a pass reads besides jobs and pods: the stored queues (`default` is implicit),
    PriorityClass values, the hand-over holds, and what each queue's placed pods hold (kept
    by the shell as pods come and go; None: counted from the pods given)."""

    queues: QueueTable = NO_QUEUES
    priorities: joborder.Priorities = joborder.NO_CLASSES
    holds: Holds = holds_mod.NONE
    queue_used: Mapping[str, Resources] | None = None


@dataclass(frozen=True)
class Placement:
    """The outcome of one pass. `unschedulable` has an entry for every job still waiting for
    admission: why it can never fit this machine, or `""` when it can; `waits` why each of
    them waits now (`queueing.Wait`); `holds` the hand-over holds after the admissions."""

    admitted: tuple[names.ObjectKey, ...] = ()
    placed: tuple[names.ObjectKey, ...] = ()
    unschedulable: Mapping[names.ObjectKey, str] = field(default_factory=dict)
    waits: Mapping[names.ObjectKey, queueing.Wait] = field(default_factory=dict)
    holds: Holds = holds_mod.NONE


def schedule(
    jobs: Sequence[GangJob],
    all_pods: Iterable[Pod] | Mapping[names.ObjectKey, Mapping[str, Pod]],
    capacity: Capacity,
    priorities: Mapping[str, int] | None = None,
    *,
    used: Resources | None = None,
    policy: Policy | None = None,
) -> Placement:
    """One scheduler pass over every job and every pod on the machine — or, given `used`
    (what every placed pod holds), over the jobs `needs_pass` picks and their pods only.
    `all_pods` may be given by job (job key → its pods, e.g. the shell's PodSets);
    `priorities` (class → value) are laid over `policy.priorities`."""
    policy = policy or Policy()
    table = policy.priorities
    if priorities:
        table = joborder.Priorities({**table.values, **priorities}, table.default)
    prio = dict(table.values)
    if isinstance(all_pods, Mapping):
        by_job = {key: podset.of(found) for key, found in all_pods.items()}
    else:
        by_job = _pods_by_job(list(all_pods))
    every = [p for found in by_job.values() for p in found.values() if _holds(p)]
    if used is None:
        used = resources.total(_request(p) for p in every)
    queue_used = policy.queue_used
    if queue_used is None:
        queue_used = _by_queue((_pod_queue(p), _request(p)) for p in every)
    wanted = [j for j in jobs if _wants(j)]
    order = sorted(wanted, key=lambda j: joborder.key(j.job, table))
    still = [(_queue(j.job), _still_needed(j, by_job, prio)) for j in order if _admitted(j)]
    reserved = resources.total(need for _, need in still)
    allocated = _by_queue([*queue_used.items(), *still])
    verdicts: dict[names.ObjectKey, str] = {}
    candidates: list[queueing.Candidate] = []
    for gang in (j for j in order if j.group is Group.PENDING):
        need = _minimum(gang.job, table, prio)
        verdicts[gang.job.key] = never_fits(gang.job, need, capacity)
        if not verdicts[gang.job.key]:
            flow = holds_mod.flow_of(gang.job)
            candidates.append(queueing.Candidate(gang.job.key, _queue(gang.job), flow, need))
    room = resources.minus(capacity, resources.add(used, reserved))
    outcome = queueing.admit(
        candidates,
        capacity=capacity,
        room=room,
        queues=policy.queues,
        allocated=allocated,
        holds=policy.holds.within(room) if policy.holds else policy.holds,
    )
    waits = dict(outcome.waits)
    for key, why in verdicts.items():
        if why:
            waits[key] = queueing.Wait(queueing.WaitKind.NEVER_FITS, why)
    placed: list[names.ObjectKey] = []
    for gang in (j for j in order if _admitted(j)):
        held = outcome.holds.against(holds_mod.flow_of(gang.job))
        room = resources.minus(capacity, resources.add(used, held))
        chosen = _place(gang.job, by_job.get(gang.job.key, _NONE), room)
        used = resources.add(used, *(_request(p) for p in chosen))
        placed += [p.key for p in chosen]
    return Placement(outcome.admitted, tuple(placed), verdicts, waits, outcome.holds)


def _queue(job: VCJob) -> str:
    return (job.spec.queue if job.spec else None) or DEFAULT_QUEUE


def _pod_queue(pod: Pod) -> str:
    return pod.metadata.labels.get(pods.QUEUE_NAME) or DEFAULT_QUEUE


def _by_queue(parts: Iterable[tuple[str, Resources]]) -> dict[str, dict[str, Fraction]]:
    out: dict[str, dict[str, Fraction]] = {}
    for name, part in parts:
        out[name] = resources.add(out.get(name, {}), part)
    return out


def wants_scheduling(group: Group, phase: str) -> bool:
    """Whether the scheduler looks at a job: it has a PodGroup and a syncing phase."""
    return group is not Group.NONE and phase in SYNCING


def _wants(gang: GangJob) -> bool:
    return wants_scheduling(gang.group, gang.job.phase)


def needs_pass(gang: GangJob, job_pods: Mapping[str, Pod] | Iterable[Pod]) -> bool:
    """Whether a pass can decide anything for this job: it waits for admission, or it is
    admitted with pods to place or a gang not complete yet (what it still reserves). Any
    other job only holds its placed pods' resources, which `schedule` takes as `used` — so
    a pass need not look at the hundreds of jobs that merely run."""
    if not _wants(gang):
        return False
    if gang.group is not Group.ADMITTED:
        return True
    found = podset.of(job_pods)
    return bool(found.unplaced_count()) or not is_ready(jobspec.shape(gang.job), found)


def _admitted(gang: GangJob) -> bool:
    return gang.group is Group.ADMITTED


def _priority(class_name: str | None, prio: Mapping[str, int]) -> int:
    return prio.get(class_name or "", 0)


def _pods_by_job(every: list[Pod]) -> dict[names.ObjectKey, podset.PodSet]:
    out: dict[names.ObjectKey, podset.PodSet] = {}
    for pod in every:
        out.setdefault(names.object_key(pod.namespace, pods.job_of(pod)), podset.PodSet()).put(pod)
    return out


def _holds(pod: Pod) -> bool:
    """A placed pod uses its resources until it ends or is gone."""
    return pod.placed and (pod.deleting or pod.phase in (PodPhase.PENDING, PodPhase.RUNNING))


def _request(pod: Pod) -> Resources:
    return resources.pod_request(pod.spec)


def _counts(pod: Pod, extra: frozenset[str]) -> bool:
    """Counts towards the gang: placed (or being placed now), not failed, not deleted."""
    placed = pod.placed or pod.name in extra
    return placed and not pod.deleting and pod.phase != PodPhase.FAILED


def is_ready(
    shape: Shape,
    job_pods: Mapping[str, Pod] | Iterable[Pod],
    extra: frozenset[str] = frozenset(),
) -> bool:
    """The gang condition: enough placed non-failed pods (Succeeded included), per task too
    when the task gates are on. `extra`: names of pods counted as placed."""
    found = podset.of(job_pods)
    per_task = dict(found.gang_tasks())
    for name in extra:
        pod = found.get(name)
        if pod is not None and not pod.placed and _counts(pod, extra):
            per_task[pods.task_of(pod)] = per_task.get(pods.task_of(pod), 0) + 1
    if sum(per_task.values()) < shape.min_available:
        return False
    if not shape.task_gates:
        return True
    return all(per_task.get(t.name, 0) >= t.min_available for t in shape.tasks)


def _place(job: VCJob, job_pods: Mapping[str, Pod], room: Capacity) -> list[Pod]:
    shape = jobspec.shape(job)
    found = podset.of(job_pods)
    if not found.unplaced_count():
        return []
    ready = is_ready(shape, found)
    if not ready and found.gang() + found.unplaced_count() < shape.min_available:
        return []  # (no choice of these pods can make the gang)
    chosen: list[Pod] = []
    for pod in _unplaced(shape, found):
        request = _request(pod)
        if resources.fits(request, room):
            chosen.append(pod)
            room = resources.minus(room, request)
    if ready or is_ready(shape, found, frozenset(p.name for p in chosen)):
        return chosen
    return []  # all or nothing


def _unplaced(shape: Shape, found: podset.PodSet) -> list[Pod]:
    position = {t.name: i for i, t in enumerate(shape.tasks)}
    return sorted(
        found.unplaced(),
        key=lambda p: (position.get(pods.task_of(p), len(position)), pods.index_of(p) or 0),
    )


def _still_needed(
    gang: GangJob, by_job: Mapping[names.ObjectKey, podset.PodSet], prio: Mapping[str, int]
) -> Resources:
    """What an admitted job that has not placed its gang yet still holds in reserve."""
    found = by_job.get(gang.job.key, _NONE)
    if is_ready(jobspec.shape(gang.job), found):
        return {}
    counted = (p for p in found.live() if _counts(p, frozenset()))
    have = resources.total(_request(p) for p in counted)
    need = min_resources(gang.job, prio)
    return {
        n: a - have.get(n, Fraction(0)) for n, a in need.items() if a > have.get(n, Fraction(0))
    }


def _minimum(job: VCJob, table: object, prio: Mapping[str, int]) -> Resources:
    """`min_resources`, kept per spec object and priority table (neither is changed in
    place): a pass asks it of every waiting job, and a backlog waits through many passes."""
    spec = job.spec
    kept = _minimums.get(id(spec))
    if kept is not None and kept[0] is spec and kept[1] is table:
        return kept[2]
    found = min_resources(job, prio)
    if spec is not None:
        if len(_minimums) >= _MINIMUMS_KEPT:
            _minimums.clear()
        _minimums[id(spec)] = (spec, table, found)  # (the spec is held: its id is not reused)
    return found


_MINIMUMS_KEPT = 4096
_minimums: dict[int, tuple[object, object, Resources]] = {}


def min_resources(job: VCJob, priorities: Mapping[str, int] | None = None) -> dict[str, Fraction]:
    """The PodGroup's `minResources` (§10.1): the requests of the pods the gang needs first,
    tasks ordered by their template's priority class (highest first)."""
    prio = dict(priorities or {})
    shape = jobspec.shape(job)
    tasks = sorted(jobspec.task_specs(job), key=lambda t: -_priority(_class_of(t), prio))
    counts = _gang_counts(shape, tasks)
    return resources.total(
        {n: a * counts[t.name or ""] for n, a in _template_request(t).items()} for t in tasks
    )


def _gang_counts(shape: Shape, tasks: list[TaskSpec]) -> dict[str, int]:
    """How many pods of each task the minimum resources hold."""
    left = shape.min_available
    counts = dict.fromkeys((t.name or "" for t in tasks), 0)
    if shape.task_gates:
        for task in tasks:
            take = min(task.min_available or 0, left)
            counts[task.name or ""] += take
            left -= take
    for task in tasks:
        take = min(max(task.replicas or 0, 0) - counts[task.name or ""], left)
        counts[task.name or ""] += take
        left -= take
    return counts


def _class_of(task: TaskSpec) -> str | None:
    spec = task.template.spec if task.template is not None else None
    return (spec.model_extra or {}).get("priorityClassName") if spec is not None else None


def _template_request(task: TaskSpec) -> Resources:
    return resources.pod_request(task.template.spec if task.template is not None else None)


def never_fits(job: VCJob, need: Resources, capacity: Capacity) -> str:
    """Why the job's gang can never be admitted on this machine, or `""`."""
    too_many = replicas.exceeds(job.spec)  # (stored before admission bounded it)
    if too_many:
        return too_many
    short = resources.shortfall(need, capacity)
    if not short:
        return ""
    gang = jobspec.shape(job).min_available
    wants = ", ".join(f"{n} {resources.show(n, a)}" for n, a, _ in short)
    has = ", ".join(f"{n} {resources.show(n, h)}" if h else f"no {n}" for n, _, h in short)
    pods_word = "pod needs" if gang == 1 else "pods need"
    return f"its minimum of {gang} {pods_word} {wants}, but this machine has {has}"
