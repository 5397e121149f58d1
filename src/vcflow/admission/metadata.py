"""Object metadata rules shared by every kind: names become keys and paths, so they must be
DNS-1123 before anything else uses them. Pure."""

from __future__ import annotations

from vcflow.api import names
from vcflow.api.errors import FieldError
from vcflow.api.meta import Resource


def validate_metadata(obj: Resource) -> list[FieldError]:
    meta = obj.metadata
    errors: list[FieldError] = []
    if not meta.name:
        errors.append(FieldError("Required value: name is required", "metadata.name"))
    else:
        for problem in names.dns1123_subdomain_errors(meta.name):
            errors.append(FieldError(f'Invalid value: "{meta.name}": {problem}', "metadata.name"))
    for problem in names.dns1123_label_errors(meta.namespace):
        errors.append(
            FieldError(f'Invalid value: "{meta.namespace}": {problem}', "metadata.namespace")
        )
    for key, value in meta.labels.items():
        for problem in names.label_value_errors(value):
            errors.append(
                FieldError(f'Invalid value: "{value}": {problem}', f"metadata.labels[{key}]")
            )
    return errors
