"""Build the vcjob a flow entry becomes (reference §3.6, compatibility row 3). Pure."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from enum import Enum
from typing import Any

from vcflow.api import arguments, foreach, names, quantity, substitution, workdir
from vcflow.api.jobflow import Flow, JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.meta import ObjectMeta, OwnerReference, controller_reference
from vcflow.api.vcjob import Container, EnvVar, JobSpec, VCJob
from vcflow.patch import merge
from vcflow.reconcile import outputs

#: (`reconcile.retry.ATTEMPT_ANNOTATION`, which reads it)
ATTEMPT_ANNOTATION = "vcflow.io/attempt"
#: the case of the entry's `switch` its vcjob was built from (docs/flow-features.md §13)
SWITCH_CASE_ANNOTATION = "vcflow.io/switch-case"


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
    env: Mapping[str, str] | _Find | None = _Find.FIND,
    case: int | None = None,
    values: Values | None = None,
    item: Item | None = None,
) -> VCJob:
    """`<flow>-<entry>` with Volcano's two labels and annotations (the template's: the
    entry's `template`, else its name), the template's spec
    (as stored, CRD defaults included) with the flow's `queue` and `priorityClassName`
    (`scheduled`) then the entry's patch applied, and no status; the
    working directory the flow (else the template) was applied from (`api.workdir`). An
    attempt after the first (a retry, docs/flow-features.md) carries its number in the
    annotation `vcflow.io/attempt`. A flow that uses the flow language gives every container
    the variables `env` (found here unless given: `VCFLOW_ARGS`) and `VCFLOW_OUTPUTS`, its
    termination-message path (`add_env`, docs/flow-features.md section 11); any other
    flow's vcjobs get no variable. `case`: the `switch` case that picked `template`;
    `values`: the arguments and the targets' outputs its `${{ }}` references are replaced
    by (`substituted`; SubstitutionError for one that cannot be). `item`: (index, value) of
    an item of a `for` entry (section 19): the vcjob is `<flow>-<entry>-<index>`, with
    `VCFLOW_ITEM`, `VCFLOW_INDEX` and `${{ item }}`/`${{ index }}` replaced."""
    ns = flow.namespace
    created_by = {
        names.LABEL_CREATED_BY_TEMPLATE: names.created_by_value(ns, template.name),
        names.LABEL_CREATED_BY_FLOW: names.created_by_value(ns, flow.name),
    }
    job = VCJob(
        metadata=ObjectMeta(
            name=names.job_name(flow.name, item_name(entry.name, item)),
            namespace=ns,
            labels=dict(created_by),
            annotations=dict(created_by),
            owner_references=[owner_reference(flow)],
        )
    )
    if attempt > 1:
        job.metadata.annotations[ATTEMPT_ANNOTATION] = str(attempt)
    if case is not None:
        job.metadata.annotations[SWITCH_CASE_ANNOTATION] = str(case)
    directory = workdir.of(flow, template)
    if directory is not None:
        job.metadata.annotations[workdir.ANNOTATION] = directory
    if template.spec is not None:
        spec = scheduled(template.spec.clone(), flow)
        if entry.patch is not None and entry.patch.job_spec is not None:
            spec = merge.patched_spec(spec, entry.patch.job_spec)
        if values is not None:
            spec = substituted(spec, values, item)
        if env is _Find.FIND:
            value = args_env(flow)
            env = None if value is None else {arguments.ENV_ARGS: value}
        if env is not None:
            for name, value in env.items():
                add_env(spec, name, value)
            if item is not None:
                add_env(
                    spec, foreach.ENV_ITEM, arguments.escape_expansion(foreach.item_env(item[1]))
                )
                add_env(spec, foreach.ENV_INDEX, str(item[0]))
            add_env(spec, outputs.ENV_OUTPUTS, outputs.outputs_path, init=False)
        job.spec = spec
    return job


def scheduled(spec: JobSpec, flow: JobFlow) -> JobSpec:
    """`spec` (changed in place: a copy) with the flow's `spec.queue` and
    `spec.priorityClassName` where the flow sets them (docs/scheduling.md): they replace the
    template's; an entry's patch, applied after, still wins."""
    if flow.spec is not None:
        if flow.spec.queue is not None:
            spec.queue = flow.spec.queue
        if flow.spec.priority_class_name is not None:
            spec.priority_class_name = flow.spec.priority_class_name
    return spec


#: what `${{ }}` references are replaced by: the flow's arguments, the targets' outputs
Values = tuple[Mapping[str, str], Mapping[str, Any]]
#: an item of a `for` entry: its index and its value
Item = tuple[int, Any]


def item_name(entry: str, item: Item | None) -> str:
    """The name an item's vcjob is made of: `<entry>-<index>` (`<flow>-` before it)."""
    return entry if item is None else f"{entry}-{item[0]}"


def substituted(spec: JobSpec, values: Values, item: Item | None = None) -> JobSpec:
    """The spec with its `${{ args.X }}` and `${{ outputs.E.K }}` replaced (section 15); a
    resource quantity that is not one after it is a SubstitutionError."""
    data = spec.to_dict()
    if not substitution.has_any(json.dumps(data)):
        return spec
    if item is None:
        replaced = substitution.substitute(data, *values)
    else:
        replaced = substitution.substitute(data, *values, item=item[1], index=item[0])
    out = JobSpec.from_dict(replaced)
    for task in out.tasks or []:
        pod = task.template.spec if task.template is not None else None
        for container in [*(pod.init_containers or []), *(pod.containers or [])] if pod else []:
            resources = container.resources
            for kind in ("requests", "limits"):
                given = getattr(resources, kind) if resources is not None else None
                for name, amount in (given or {}).items():
                    if quantity.problem(amount) is not None:
                        raise substitution.SubstitutionError(
                            f"task {task.name} container {container.name}: {kind}[{name}] "
                            f"{amount!r} is not a quantity"
                        )
    return out


def add_env(
    spec: JobSpec, name: str, value: str | Callable[[Container], str], *, init: bool = True
) -> None:
    """`name=value` appended to the `env` of every container and init container of every
    task of `spec` (changed in place: a copy), except a container that sets `name` itself,
    which keeps its own value (docs/flow-features.md section 11). A callable `value` is
    the container's own (`VCFLOW_OUTPUTS`: its termination-message path); `init`: init
    containers too."""
    for task in spec.tasks or []:
        pod = task.template.spec if task.template is not None else None
        if pod is None:
            continue
        inits = (pod.init_containers or []) if init else []
        for container in [*inits, *(pod.containers or [])]:
            env = container.env
            text = value if isinstance(value, str) else value(container)
            if env is None:
                container.env = [EnvVar(name=name, value=text)]
            elif not any(var.name == name for var in env):
                env.append(EnvVar(name=name, value=text))
