"""Errors for what the API server refuses by type in a vcjob spec — a JobTemplate's `spec`, a
vcjob's `spec`, a flow entry's patched spec — walked against Volcano's Job CRD (`crd`), pod
templates included: a value of another type than the schema's (`priorityClassName: 5`), an
integer outside its format's range (int32, int64; seconds at most int32), a resource
quantity Kubernetes does not parse (`abc`, `1Zi`, `1e309`). Worded as the API server words
schema errors (`schema`). `jobtemplate.validate_job_spec` calls it. Pure.

vcflow's models type the fields they name (pydantic, strict); this walk covers the rest —
every field a model keeps as data — and the ranges no model type states, so a value that
would break the runtime later (a pod the pod builder refuses, a timer that overflows) is
refused at validate instead.
"""

from __future__ import annotations

from typing import Any

from vcflow.admission import crd
from vcflow.api import quantity, substitution
from vcflow.api.errors import FieldError
from vcflow.api.meta import WireModel
from vcflow.api.vcjob import JobSpec

_JSON_TYPES: dict[type, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    dict: "object",
    list: "array",
}
#: Scalars a model field holds only when the schema has that type too (strict models).
_TYPED = frozenset({str, bool})
_QUANTITY_KINDS = frozenset({"string", "integer", "number"})


def job_spec_type_errors(
    spec: JobSpec, path: str = "spec", *, references: bool = False
) -> list[FieldError]:
    """Every type, range and quantity error of a vcjob spec; with `references`, a quantity
    that is one `${{ args.X }}`/`${{ outputs.E.K }}` reference is not one (a JobTemplate's:
    the flow replaces it when it builds the vcjob, docs/flow-features.md section 15)."""
    return type_errors(spec, crd.job_spec_schema(), path, references=references)


def type_errors(
    data: Any, schema: crd.Node, path: str, *, references: bool = False
) -> list[FieldError]:
    """The errors of `data` (wire data, or models holding it) against `schema`; iterative
    (data from the store has no nesting bound). None is an absent field.

    A value is judged where it is found (`_child`): only the mappings, lists and models
    below it are walked on, and a path is spelt out only for those and for errors."""
    found: list[FieldError] = []
    todo: list[tuple[Any, crd.Node, str]] = []
    _child(data, schema, path, found, todo, references)
    while todo:
        value, node, where = todo.pop()
        below: list[tuple[Any, crd.Node, str]] = []
        if type(value) is list:
            if node.items is not None:
                for i, item in enumerate(value):
                    _child(item, node.items, f"{where}[{i}]", found, below, references)
        else:
            _fields(value, node, where, found, below, references)
        below.reverse()
        todo += below
    return found


def _child(
    value: Any,
    node: crd.Node,
    path: str,
    found: list[FieldError],
    todo: list[tuple[Any, crd.Node, str]],
    references: bool = False,
) -> None:
    """Judge one value: an error into `found`, or, if it has fields, it into `todo`."""
    if value is None:
        return
    kind = "object" if isinstance(value, WireModel) else _JSON_TYPES.get(type(value), "")
    if node.quantity and kind in _QUANTITY_KINDS:
        if quantity.problem(value) is None:
            return
        if references and kind == "string" and substitution.is_one_reference(value):
            return
    elif not node.types or kind in node.types or (kind == "integer" and "number" in node.types):
        if kind == "integer":
            low, high = node.bounds
            if low <= value <= high:
                return
        else:
            if kind in ("object", "array"):
                todo.append((value, node, path))
            return
    found.append(_value_error(value, kind, node, path))


def _fields(
    value: Any,
    node: crd.Node,
    where: str,
    found: list[FieldError],
    todo: list[tuple[Any, crd.Node, str]],
    references: bool,
) -> None:
    """`_child` for each field of an object the schema knows (a model's, then its extras)."""
    data = value
    if isinstance(value, WireModel):
        fields = value.__dict__
        for name, alias, known in node.layout(type(value)):
            item = fields[name]
            if item is None or known is None:
                continue
            if type(item) in _TYPED and not known.quantity:
                continue  # a string or boolean the model typed, as the schema does
            _child(item, known, f"{where}.{alias}", found, todo, references)
        data = value.__pydantic_extra__ or {}
    props = node.properties
    for key, item in data.items():
        known = props.get(key)
        if known is not None:
            _child(item, known, f"{where}.{key}", found, todo, references)
        elif node.values is not None:
            _child(item, node.values, f"{where}[{key}]", found, todo, references)


def _value_error(value: Any, kind: str, node: crd.Node, path: str) -> FieldError:
    """The error of a value `_child` found wrong: its type, range or quantity syntax."""
    if node.quantity and kind in _QUANTITY_KINDS:
        error = _quantity_error(value, path)
        if error is not None:
            return error
    if kind == "integer" and (not node.types or kind in node.types or "number" in node.types):
        low, high = node.bounds
        if value > high:
            return _range(value, path, f"less than or equal to {high}")
        return _range(value, path, f"greater than or equal to {low}")
    expected = ",".join(sorted(node.types))
    return FieldError(
        f'Invalid value: "{kind}": {path} in body must be of type {expected}: "{kind}"', path
    )


def _range(value: int, path: str, bound: str) -> FieldError:
    return FieldError(f"Invalid value: {value}: {path} in body should be {bound}", path)


def _quantity_error(value: Any, path: str) -> FieldError | None:
    problem = quantity.problem(value)
    if problem is None:
        return None
    shown = f'"{value}"' if isinstance(value, str) else str(value)
    if problem == quantity.SYNTAX:
        message = f"{path} in body should match '{crd.QUANTITY_PATTERN}'"
    else:
        message = problem
    return FieldError(f"Invalid value: {shown[:80]}: {message}", path)
