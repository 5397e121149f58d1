"""Fields no schema knows, worded as kubectl's (`unknown field "spec.tasks[0].replica"`): a
typo is otherwise silently ignored, as the API server prunes it. Admission reports them as
warnings (`kubeapi.fieldvalidation.unknown_field`); what a caller makes of them is its field
validation (`kubeapi.fieldvalidation.judged`): `strict` refuses them (the CLI's default, and
kubectl's), `warn` says them, `ignore` drops them, as kube-apiserver's `fieldValidation`
Strict, Warn and Ignore. A field another workflow engine
has where a vcflow field does the job says what to write instead (`HINTS`).

Every object `review` admits is covered:
- its top level and `metadata`, by vcflow's models (ObjectMeta as Kubernetes defines it);
- a JobFlow's spec by vcflow's models (vcflow adds fields to Volcano's JobFlow);
- every vcjob spec — a JobTemplate's `spec`, a vcjob's `spec`, a flow entry's
  `patch.jobSpec` — by the structural schema of Volcano's Job CRD (`crd`), pod templates
  included: `properties`, `items`, `additionalProperties` and
  `x-kubernetes-preserve-unknown-fields` say what may be there.
A value of the wrong type is not looked into (type errors are the model's to report). Pure.
"""

from __future__ import annotations

from typing import Any

from vcflow.admission import crd
from vcflow.api import jobflow
from vcflow.api.errors import FieldError
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.meta import Resource, WireModel, wire_names
from vcflow.api.vcjob import JobSpec, VCJob
from vcflow.kubeapi.fieldvalidation import unknown_field

#: The JobFlow models whose every field vcflow knows (a JobSpec below them goes by the CRD).
CHECKED = (
    jobflow.JobFlowSpec,
    jobflow.Argument,
    jobflow.Flow,
    jobflow.SwitchCase,
    jobflow.ForEach,
    jobflow.DependsOn,
    jobflow.RetryPolicy,
    jobflow.Backoff,
    jobflow.Probe,
    jobflow.HttpGet,
    jobflow.TcpSocket,
    jobflow.TaskStatusProbe,
    jobflow.Patch,
)
#: Kubernetes' ObjectMeta fields that vcflow's ObjectMeta does not model.
OBJECT_META_OTHERS = frozenset({"selfLink", "deletionGracePeriodSeconds", "managedFields"})
_FAN_OUT = 'use "for" (items, fromArgument or fromOutput): docs/flow-features.md section 19'
#: (model, key) → what to write instead: Argo's DAG task fields where a vcflow field does
#: the job.
HINTS: dict[tuple[type[WireModel], str], str] = {
    (jobflow.Flow, "withItems"): _FAN_OUT,
    (jobflow.Flow, "withParam"): _FAN_OUT,
    (jobflow.Flow, "withSequence"): _FAN_OUT,
    (jobflow.Flow, "depends"): 'use "dependsOn" with "outcome": Completed, Failed or Finished',
    (jobflow.Flow, "dependencies"): 'use "dependsOn": {targets: [...]}',
}


def unknown_fields(obj: Resource) -> list[FieldError]:
    """Every `unknown field` warning of an object (the CLI shows them in line order)."""
    found = [unknown_field(key) for key in obj.model_extra or {}]
    meta_extra = obj.metadata.model_extra or {}
    found += [
        unknown_field(f"metadata.{key}") for key in meta_extra if key not in OBJECT_META_OTHERS
    ]
    if isinstance(obj, JobFlow) and obj.spec is not None:
        found += model_unknowns(obj.spec, "spec")  # (a patch's JobSpec goes by the CRD)
    elif isinstance(obj, JobTemplate | VCJob) and obj.spec is not None:
        found += job_spec_unknowns(obj.spec, "spec")
    return found


def model_unknowns(model: WireModel, path: str) -> list[FieldError]:
    """Warnings for `model` and the models below it: the CHECKED ones by their fields, a
    JobSpec by the CRD."""
    found: list[FieldError] = []
    if isinstance(model, CHECKED):
        kind = type(model)
        found += [
            unknown_field(f"{path}.{key}", HINTS.get((kind, key), ""))
            for key in model.model_extra or {}
        ]
    fields = model.__dict__
    for name, alias in wire_names(type(model)):
        value = fields[name]
        if value is None or type(value) in _SCALARS:
            continue
        if isinstance(value, JobSpec):
            found += job_spec_unknowns(value, f"{path}.{alias}")
        elif isinstance(value, WireModel):
            found += model_unknowns(value, f"{path}.{alias}")
        elif type(value) is list:
            for i, item in enumerate(value):
                if isinstance(item, WireModel):
                    found += model_unknowns(item, f"{path}.{alias}[{i}]")
    return found


def job_spec_unknowns(spec: JobSpec, path: str) -> list[FieldError]:
    """Warnings for a vcjob spec, walked against the Job CRD's schema of `spec`."""
    return schema_unknowns(spec, crd.job_spec_schema(), path)


def schema_unknowns(data: Any, schema: crd.Node, path: str) -> list[FieldError]:
    """Warnings for the fields of `data` (wire data, or models holding it) its structural
    `schema` does not know. A model is walked as it is, its fields then its extras, not
    dumped first. Iterative (data from the store has no nesting bound)."""
    found: list[FieldError] = []
    todo: list[tuple[Any, crd.Node, str]] = [(data, schema, path)]
    while todo:
        value, node, where = todo.pop()
        below: list[tuple[Any, crd.Node, str]] = []
        kind = type(value)
        if kind is list:
            if node.items is not None:
                items = node.items
                below = [(v, items, f"{where}[{i}]") for i, v in enumerate(value) if _has_fields(v)]
        elif kind is dict or isinstance(value, WireModel):
            if kind is not dict:
                fields = value.__dict__
                for name, alias, known in node.layout(type(value)):
                    item = fields[name]
                    if item is None:
                        continue
                    if known is None:  # modelled by vcflow, unknown to the CRD
                        found.append(unknown_field(f"{where}.{alias}"))
                    elif type(item) not in _SCALARS:
                        below.append((item, known, f"{where}.{alias}"))
                value = value.__pydantic_extra__ or {}
            _map_unknowns(value, node, where, found, below)
        below.reverse()
        todo += below
    return found


def _map_unknowns(
    value: dict[Any, Any],
    node: crd.Node,
    where: str,
    found: list[FieldError],
    below: list[tuple[Any, crd.Node, str]],
) -> None:
    """The unknown keys of one mapping into `found`, what to walk below it into `below`."""
    props = node.properties
    for key, item in value.items():
        known = props.get(key)
        if known is not None:
            if _has_fields(item):
                below.append((item, known, f"{where}.{key}"))
        elif node.values is not None:
            if _has_fields(item):
                below.append((item, node.values, f"{where}[{key}]"))
        elif not node.open:
            found.append(unknown_field(f"{where}.{key}"))


_SCALARS = frozenset({str, int, float, bool})


def _has_fields(value: Any) -> bool:
    """Can there be a field below `value` (a scalar or None has none)?"""
    kind = type(value)
    return kind is dict or kind is list or isinstance(value, WireModel)
