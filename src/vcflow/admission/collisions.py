"""Generated names that collide. Volcano names by plain concatenation — vcjobs
`<flow>-<entry>`, pods `<job>-<task>-<index>` — so different parts can make one name:
templates `x` (task `a-b`) and `x-a` (task `b`) in flow `f` both make pod `f-x-a-b-0`, and
flows `a-b` (entry `c`) and `a` (entry `b-c`) both make vcjob `a-b-c`; one of the two then
fails or waits for ever. Within one flow that is an error (`flow_errors`, called by JobFlow
admission); between the objects of one input a warning (`input_warnings`, called by the
manifests' review), as an object stored before would be the store's to judge. Pure.

A pod's index is its last `-` part and always a number, so two pods of a namespace share a
name exactly when their `<job>-<task>` stems are equal and both tasks have replicas.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from vcflow.api import names
from vcflow.api.errors import FieldError
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate, templates_by_namespace
from vcflow.api.meta import Resource
from vcflow.api.vcjob import JobSpec, VCJob
from vcflow.patch import merge


@dataclass(frozen=True)
class Job:
    """A vcjob an object makes: its name, the entry that makes it (-1 for a vcjob itself),
    and the `<job>-<task>` stems of its tasks that have pods."""

    owner: Resource
    name: str
    entry: int
    stems: tuple[tuple[str, str], ...]  # (stem, task name)

    def where(self) -> str:
        what = f"{self.owner.kind} {self.owner.namespace}/{self.owner.name}"
        if not isinstance(self.owner, JobFlow):
            return what
        return f'entry "{self.owner.flows[self.entry].name}" of {what}'


def entry_specs(flow: JobFlow, templates: Mapping[str, JobTemplate]) -> list[JobSpec | None]:
    """The job spec each entry's vcjob gets: its template's, patch applied; None when the
    template is not known (or has no spec), or for a `switch` entry (its template is picked
    when it runs)."""
    out: list[JobSpec | None] = []
    for entry in flow.flows:
        template = templates.get(entry.template_name) if entry.switch is None else None
        spec = template.spec if template is not None else None
        if spec is not None and entry.patch is not None and entry.patch.job_spec is not None:
            spec = merge.patched_spec(spec, entry.patch.job_spec)
        out.append(spec)
    return out


def flow_jobs(flow: JobFlow, specs: Sequence[JobSpec | None]) -> list[Job]:
    """The vcjobs a flow's entries make, with the stems of their specs (`entry_specs`)."""
    out: list[Job] = []
    for i, (entry, spec) in enumerate(zip(flow.flows, specs, strict=True)):
        if entry.name:
            job = names.job_name(flow.name, entry.name)
            out.append(Job(flow, job, i, _stems(job, spec)))
    return out


def vcjob_job(job: VCJob) -> Job:
    return Job(job, job.name, -1, _stems(job.name, job.spec))


def _stems(job: str, spec: JobSpec | None) -> tuple[tuple[str, str], ...]:
    tasks = spec.tasks or [] if spec is not None else []
    return tuple(
        (f"{job}-{task.name or f'default{i}'}", task.name or f"default{i}")
        for i, task in enumerate(tasks)
        if (task.replicas or 0) > 0
    )


def flow_errors(flow: JobFlow, specs: Sequence[JobSpec | None]) -> list[FieldError]:
    """Pods of two entries of the flow that would have one name (`specs`: `entry_specs`)."""
    errors: list[FieldError] = []
    seen: dict[str, tuple[Job, str]] = {}
    for job in flow_jobs(flow, specs):
        for stem, task in job.stems:
            first = seen.setdefault(stem, (job, task))
            if first[0] is job:
                continue
            other, other_task = first
            errors.append(
                FieldError(
                    f'generated pod name "{stem}-0" of task "{task}" is also that of task '
                    f'"{other_task}" of entry "{flow.flows[other.entry].name}" '
                    f"(spec.flows[{other.entry}]): the two jobs would take each other's pods; "
                    "rename a task or an entry",
                    f"spec.flows[{job.entry}].name",
                )
            )
    return errors


def input_warnings(objects: Sequence[Resource]) -> list[FieldError]:
    """vcjob and pod names that two objects of one input (flows, vcjobs) would both make."""
    templates = templates_by_namespace(objects)
    jobs: list[Job] = []
    for obj in objects:
        if isinstance(obj, JobFlow):
            jobs += flow_jobs(obj, entry_specs(obj, templates.get(obj.namespace, {})))
        elif isinstance(obj, VCJob):
            jobs.append(vcjob_job(obj))
    return _clashes(jobs)


def _clashes(jobs: Iterable[Job]) -> list[FieldError]:
    found: list[FieldError] = []
    vcjobs: dict[tuple[str, str], Job] = {}
    stems: dict[tuple[str, str], Job] = {}
    for job in jobs:
        ns = job.owner.namespace
        first = vcjobs.setdefault((ns, job.name), job)
        if first.owner is not job.owner:
            outcome = "one of them waits for ever (NameConflict)"
            found.append(_warning(job, f'vcjob "{job.name}"', first, outcome))
            continue  # (one vcjob, so one set of pods)
        for stem, _ in job.stems:
            other = stems.setdefault((ns, stem), job)
            if other.owner is not job.owner:
                outcome = "their jobs would take each other's pods"
                found.append(_warning(job, f'pod "{stem}-0"', other, outcome))
    return found


def _warning(job: Job, what: str, first: Job, outcome: str) -> FieldError:
    path = f"spec.flows[{job.entry}].name" if job.entry >= 0 else "metadata.name"
    message = f"{what}, made by {job.where()}, is also made by {first.where()}: {outcome}"
    return FieldError(
        message,
        path,
        kind=job.owner.kind,
        namespace=job.owner.namespace,
        name=job.owner.name,
        warning=True,
    )
