"""Build the vcjob a flow entry becomes (reference §3.6, compatibility row 3). Pure."""

from __future__ import annotations

from enum import Enum

from vcflow.api import arguments, names, workdir
from vcflow.api.jobflow import Flow, JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.meta import ObjectMeta, OwnerReference, controller_reference
from vcflow.api.vcjob import EnvVar, JobSpec, VCJob
from vcflow.patch import merge

#: (`reconcile.retry.ATTEMPT_ANNOTATION`, which reads it)
ATTEMPT_ANNOTATION = "vcflow.io/attempt"


def owner_reference(flow: JobFlow) -> OwnerReference:
    """The controller reference every vcjob of `flow` carries."""
    return controller_reference(flow)


def is_owned_by(job: VCJob, flow: JobFlow) -> bool:
    """compatibility row 12: a vcjob counts for a flow only if that flow controls it (by uid)."""
    ref = job.metadata.controller_ref()
    return (
        ref is not None
        and ref.kind == "JobFlow"
        and ref.name == flow.name
        and (not flow.metadata.uid or ref.uid == flow.metadata.uid)
    )


def args_env(flow: JobFlow) -> str | None:
    """The `VCFLOW_ARGS` value of the flow's vcjobs; None for a flow that does not use the
    flow language (its vcjobs get no variable). O(entries): a caller building many vcjobs
    of one flow finds it once (`FlowIndex`)."""
    return arguments.env_value(flow) if flow.uses_language else None


class _Find(Enum):
    """build_job's `env` not given: found from the flow."""

    FIND = 0


def build_job(
    flow: JobFlow,
    entry: Flow,
    template: JobTemplate,
    *,
    attempt: int = 1,
    env: str | _Find | None = _Find.FIND,
) -> VCJob:
    """`<flow>-<entry>` with Volcano's two labels and annotations (the template's: the
    entry's `template`, else its name), the template's spec
    (as stored, CRD defaults included) with the entry's patch applied, and no status; the
    working directory the flow (else the template) was applied from (`api.workdir`). An
    attempt after the first (a retry, docs/flow-features.md) carries its number in the
    annotation `vcflow.io/attempt`. A flow that uses the flow language gives every container
    its arguments in `VCFLOW_ARGS` (`add_env`; `env`: `args_env(flow)`, found here unless
    given); any other flow's spec is its template's."""
    ns = flow.namespace
    created_by = {
        names.LABEL_CREATED_BY_TEMPLATE: names.created_by_value(ns, entry.template_name),
        names.LABEL_CREATED_BY_FLOW: names.created_by_value(ns, flow.name),
    }
    job = VCJob(
        metadata=ObjectMeta(
            name=names.job_name(flow.name, entry.name),
            namespace=ns,
            labels=dict(created_by),
            annotations=dict(created_by),
            owner_references=[owner_reference(flow)],
        )
    )
    if attempt > 1:
        job.metadata.annotations[ATTEMPT_ANNOTATION] = str(attempt)
    directory = workdir.of(flow, template)
    if directory is not None:
        job.metadata.annotations[workdir.ANNOTATION] = directory
    if template.spec is not None:
        spec = template.spec.clone()
        if entry.patch is not None and entry.patch.job_spec is not None:
            spec = merge.patched_spec(spec, entry.patch.job_spec)
        value = args_env(flow) if env is _Find.FIND else env
        if value is not None:
            add_env(spec, arguments.ENV_ARGS, value)
        job.spec = spec
    return job


def add_env(spec: JobSpec, name: str, value: str) -> None:
    """`name=value` appended to the `env` of every container and init container of every
    task of `spec` (changed in place: a copy), except a container that sets `name` itself,
    which keeps its own value (docs/flow-features.md section 11)."""
    for task in spec.tasks or []:
        pod = task.template.spec if task.template is not None else None
        if pod is None:
            continue
        for container in [*(pod.init_containers or []), *(pod.containers or [])]:
            env = container.env
            if env is None:
                container.env = [EnvVar(name=name, value=value)]
            elif not any(var.name == name for var in env):
                env.append(EnvVar(name=name, value=value))
