"""Admission cases, run for real: the subject object through `loading.to_model` (a schema error
is a rejection) and `admission.review` with the case's operation, old object and the earlier
objects as context; the verdict judged on `expect_vcflow` or `expect`. Warnings never reject.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vcflow.admission.review import Context, Operation, errors_only, review
from vcflow.api import loading, modelerrors
from vcflow.api.errors import FieldError
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.meta import Resource
from vcflow.conformance.cases import Case, CaseError, pick_expect
from vcflow.conformance.results import Failed, Passed, Result


@dataclass(frozen=True)
class Expectation:
    admitted: bool
    contains: str | None = None
    contains_any: tuple[str, ...] = ()


def run_admission(case: Case) -> Result:
    """Review the case's subject as vcflow's admission does and judge the verdict."""
    expected = parse_expectation(pick_expect(case.data, "case"))
    rejections = [str(e) for e in errors_only(admit(case))]
    return judge(expected, rejections)


def parse_expectation(raw: Mapping[str, Any]) -> Expectation:
    admitted = raw.get("admitted")
    if not isinstance(admitted, bool):
        raise CaseError("expect.admitted must be a boolean")
    contains = raw.get("error_contains")
    if contains is not None and not isinstance(contains, str):
        raise CaseError("expect.error_contains must be a string")
    any_of = raw.get("error_contains_any", [])
    if not isinstance(any_of, list) or not all(isinstance(s, str) for s in any_of):
        raise CaseError("expect.error_contains_any must be a list of strings")
    return Expectation(admitted, contains, tuple(any_of))


def admit(case: Case) -> list[FieldError]:
    """Everything vcflow's API says about the case's write: schema errors, or review()."""
    objects = _objects(case)
    index = _subject_index(case, len(objects))
    doc = case.sub_document(objects[index], ("objects", index))
    subject, schema = loading.to_model(doc)
    if subject is None:
        return schema
    operation = _operation(case)
    old = _old_object(case) if operation is Operation.UPDATE else None
    others = [(i, o) for i, o in enumerate(objects) if i != index]
    context = _context(case, others, subject)
    found = review(subject, operation=operation, old=old, context=context)
    ident = {"kind": subject.kind, "namespace": subject.namespace, "name": subject.name}
    return [e.with_object(**ident, origin=doc.origin) for e in found]


def judge(expected: Expectation, rejections: Sequence[str]) -> Result:
    """Compare a verdict (the rejection messages; none = admitted) with the expectation."""
    got = "rejected: " + " | ".join(rejections) if rejections else "admitted"
    if expected.admitted:
        return Passed() if not rejections else Failed(f"expected admission, got {got}")
    want = "expected rejection" + _wanted_text(expected)
    if not rejections:
        return Failed(f"{want}, got admitted")
    joined = "\n".join(rejections)
    if expected.contains is not None and expected.contains not in joined:
        return Failed(f"{want}, got {got}")
    if expected.contains_any and not any(s in joined for s in expected.contains_any):
        return Failed(f"{want}, got {got}")
    return Passed()


def _wanted_text(expected: Expectation) -> str:
    parts = []
    if expected.contains is not None:
        parts.append(f" containing {json.dumps(expected.contains)}")
    if expected.contains_any:
        parts.append(f" containing any of {json.dumps(list(expected.contains_any))}")
    return " and".join(parts)


def _objects(case: Case) -> list[dict[str, Any]]:
    objects = case.data.get("objects")
    if not isinstance(objects, list) or not objects:
        raise CaseError("objects must be a non-empty list")
    for i, obj in enumerate(objects):
        if not isinstance(obj, dict):
            raise CaseError(f"objects[{i}] must be a map (a Kubernetes object)")
    return objects


def _subject_index(case: Case, count: int) -> int:
    subject = case.data.get("subject", count - 1)
    if isinstance(subject, bool) or not isinstance(subject, int) or not 0 <= subject < count:
        raise CaseError(f"subject must be an index into objects (0..{count - 1}), got {subject!r}")
    return subject


def _operation(case: Case) -> Operation:
    raw = case.data.get("operation", "CREATE")
    try:
        return Operation(raw)
    except ValueError:
        choices = ", ".join(o.value for o in Operation)
        raise CaseError(f"operation must be one of {choices}, got {raw!r}") from None


def _old_object(case: Case) -> Resource:
    raw = case.data.get("old_object")
    if not isinstance(raw, dict):
        raise CaseError("old_object (a map) is required for UPDATE")
    return _context_model(case, raw, ("old_object",))


def _context_model(case: Case, data: dict[str, Any], loc: tuple[str | int, ...]) -> Resource:
    """An object the case says already exists; it must load (it was admitted once)."""
    obj, errors = loading.to_model(case.sub_document(data, loc))
    if obj is None:
        where = modelerrors.format_path(loc)
        raise CaseError(f"{where} does not load: " + " | ".join(str(e) for e in errors))
    return obj


def _context(
    case: Case, others: Sequence[tuple[int, dict[str, Any]]], subject: Resource
) -> Context:
    """The other objects of the case: templates by name and flows, in the subject's namespace."""
    templates: dict[str, JobTemplate] = {}
    flows: list[JobFlow] = []
    for i, data in others:
        obj = _context_model(case, data, ("objects", i))
        if obj.namespace != subject.namespace:
            continue
        if isinstance(obj, JobTemplate):
            templates[obj.name] = obj
        elif isinstance(obj, JobFlow):
            flows.append(obj)
    return Context(templates=templates, flows=flows)
