"""How many pods one vcjob may ask for: vcflow's own bound, beyond the CRD's int32, checked
wherever a job spec is (a JobTemplate, a vcjob, a flow entry's patched spec), so that a job
the local runtime cannot hold is refused at `validate` rather than found out at run time.
Called by `jobtemplate.validate_job_spec`. Pure.

Why 10,000: the local runtime keeps every pod of a job in memory (about 20 KB each) and in
the store, and takes each through its life: a 10,000-pod job of `true` takes about 200 MB
and 15–20 s here (docs/security.md). On a cluster it would be ninety nodes' worth of pods at
the kubelet's default of 110 per node. A bigger fan-out is several jobs (a flow's entries).
"""

from __future__ import annotations

from collections.abc import Sequence

from vcflow.api.errors import FieldError
from vcflow.api.vcjob import JobSpec, TaskSpec

#: The most replicas a task may have.
MAX_TASK_REPLICAS = 10_000
#: The most pods a job may have, over all its tasks.
MAX_JOB_PODS = 10_000


def limit_errors(spec: JobSpec, path: str = "spec") -> list[FieldError]:
    """A task above `MAX_TASK_REPLICAS` (at its `replicas`), else a job above `MAX_JOB_PODS`
    (at its `tasks`)."""
    tasks: Sequence[TaskSpec] = spec.tasks or []
    errors: list[FieldError] = []
    for i, task in enumerate(tasks):
        replicas = task.replicas or 0
        if replicas > MAX_TASK_REPLICAS:
            message = (
                f"Invalid value: {replicas}: must be less than or equal to {MAX_TASK_REPLICAS} "
                "(the most replicas vcflow runs in one task)"
            )
            errors.append(FieldError(message, f"{path}.tasks[{i}].replicas"))
    if errors:
        return errors
    total = sum(max(t.replicas or 0, 0) for t in tasks)
    if total > MAX_JOB_PODS:
        message = (
            f"Invalid value: {total} pods: a job may have at most {MAX_JOB_PODS} pods in all "
            "(split it into several jobs)"
        )
        errors.append(FieldError(message, f"{path}.tasks"))
    return errors


def exceeds(spec: JobSpec | None) -> str:
    """Why a job stored before this bound can never run here (`gang.never_fits`), or `""`."""
    tasks = (spec.tasks if spec is not None else None) or []
    total = sum(max(t.replicas or 0, 0) for t in tasks)
    if total <= MAX_JOB_PODS and all((t.replicas or 0) <= MAX_TASK_REPLICAS for t in tasks):
        return ""
    return f"its {total} pods exceed the {MAX_JOB_PODS} a job may have"
