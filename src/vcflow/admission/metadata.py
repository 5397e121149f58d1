"""Object metadata rules shared by every kind: names become keys and paths, so they must be
DNS-1123 before anything else uses them; label and annotation keys and values as Kubernetes
validates them (ValidateLabels, ValidateAnnotations), for an object's metadata and a pod
template's alike. Pure."""

from __future__ import annotations

from collections.abc import Mapping

from vcflow.api import clusterscope, names
from vcflow.api.errors import FieldError
from vcflow.api.meta import Resource
from vcflow.api.printable import quoted


def validate_metadata(obj: Resource) -> list[FieldError]:
    meta = obj.metadata
    errors: list[FieldError] = []
    if not meta.name:
        errors.append(FieldError("Required value: name is required", "metadata.name"))
    else:
        for problem in names.dns1123_subdomain_errors(meta.name):
            message = f"Invalid value: {quoted(meta.name)}: {problem}"
            errors.append(FieldError(message, "metadata.name"))
    namespaced = not clusterscope.is_cluster_scoped(type(obj))  # (a Queue has none)
    for problem in names.dns1123_label_errors(meta.namespace) if namespaced else ():
        errors.append(
            FieldError(f"Invalid value: {quoted(meta.namespace)}: {problem}", "metadata.namespace")
        )
    errors += label_errors(meta.labels, "metadata.labels")
    errors += annotation_errors(meta.annotations, "metadata.annotations")
    return errors


def label_errors(labels: Mapping[str, str] | None, path: str) -> list[FieldError]:
    """Each key a qualified name (optional DNS subdomain prefix), each value a label value."""
    errors: list[FieldError] = []
    for key, value in (labels or {}).items():
        at = f"{path}[{key}]"
        for problem in names.label_key_errors(key):
            errors.append(FieldError(f"Invalid value: {quoted(key)}: {problem}", at))
        for problem in names.label_value_errors(value):
            errors.append(FieldError(f"Invalid value: {quoted(value)}: {problem}", at))
    return errors


def annotation_errors(annotations: Mapping[str, str] | None, path: str) -> list[FieldError]:
    """Each key a qualified name (Kubernetes checks it lower-cased), and at most
    `names.ANNOTATIONS_MAX` bytes of keys and values together."""
    errors: list[FieldError] = []
    for key in annotations or {}:
        for problem in names.label_key_errors(key.lower()):
            errors.append(FieldError(f"Invalid value: {quoted(key)}: {problem}", f"{path}[{key}]"))
    size = names.annotations_size(dict(annotations or {}))
    if size > names.ANNOTATIONS_MAX:
        message = f"Too long: must have at most {names.ANNOTATIONS_MAX} bytes (they have {size})"
        errors.append(FieldError(message, path))
    return errors
