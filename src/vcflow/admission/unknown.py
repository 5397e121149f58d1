"""Warnings for fields vcflow does not know inside the parts it models completely (the
JobFlow spec, job spec, tasks and policies), as kubectl warns about unknown fields. Pod
templates are Kubernetes' and pass through unexamined. Pure."""

from __future__ import annotations

import functools

from vcflow.api import jobflow, vcjob
from vcflow.api.errors import FieldError
from vcflow.api.meta import WireModel

CHECKED = (
    jobflow.JobFlowSpec,
    jobflow.Flow,
    jobflow.DependsOn,
    jobflow.Probe,
    jobflow.HttpGet,
    jobflow.TcpSocket,
    jobflow.TaskStatusProbe,
    jobflow.Patch,
    vcjob.JobSpec,
    vcjob.TaskSpec,
    vcjob.LifecyclePolicy,
    vcjob.TaskDependsOn,
    vcjob.PartitionPolicy,
    vcjob.VolumeSpec,
)


def unknown_fields(model: WireModel, path: str) -> list[FieldError]:
    """`unknown field` warnings for `model` and the checked models below it."""
    found: list[FieldError] = []
    if isinstance(model, CHECKED):
        for key in model.model_extra or {}:
            found.append(FieldError(f'unknown field "{path}.{key}"', f"{path}.{key}", warning=True))
    for name, alias in _wire_names(type(model)):
        value = getattr(model, name)
        if isinstance(value, WireModel):
            found += unknown_fields(value, f"{path}.{alias}")
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, WireModel):
                    found += unknown_fields(item, f"{path}.{alias}[{i}]")
    return found


@functools.cache
def _wire_names(model: type[WireModel]) -> tuple[tuple[str, str], ...]:
    """(attribute, wire name) of each field; a flow checks thousands of entries."""
    return tuple(
        (name, info.serialization_alias or info.alias or name)
        for name, info in model.model_fields.items()
    )
