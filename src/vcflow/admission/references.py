"""Admission of the `${{ args.X }}` and `${{ outputs.E.K }}` references a flow's entries
will substitute into their vcjobs (docs/flow-features.md section 15): what can be known
before the flow runs. A reference to an argument `spec.arguments` does not declare, to the
outputs of an entry that is not a target of the entry, or of a form that cannot name one
(`${{ args }}`), is an error naming the entry and the JobTemplate; whether the output's
key exists is known only when the vcjob is built (SubstitutionFailed then).

Only for a flow that uses the flow language (the only ones substituted); each template's
references are found once, however many entries use it. `jobflow.validate_jobflow` calls
`validate`. Pure.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from vcflow.admission import fanout, fieldtypes
from vcflow.api import substitution
from vcflow.api.errors import FieldError
from vcflow.api.jobflow import Flow, JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.vcjob import JobSpec

#: errors of one flow reported, at most (a template used by 10,000 entries repeats them)
MAX_ERRORS = 20


def validate(
    flow: JobFlow, templates: Mapping[str, JobTemplate], specs: Sequence[JobSpec | None]
) -> list[FieldError]:
    """`specs`: each entry's patched spec where known (`collisions.entry_specs`)."""
    if not flow.uses_language:
        return _unsubstituted(flow, templates)
    declared = {a.name for a in flow.spec.arguments or []} if flow.spec is not None else set()
    values = fanout.declared_values(flow)
    found: list[FieldError] = []
    cache: dict[str, list[substitution.Reference]] = {}
    for i, (entry, spec) in enumerate(zip(flow.flows, specs, strict=True)):
        items = fanout.known_items(entry, values)
        for name, where, refs in _references(entry, templates, spec, cache):
            for ref in refs:
                problem = _problem(ref, entry, declared)
                warning = False
                if not problem and ref.root == "item" and ref.path and items is not None:
                    problem = _item_without(ref, items)
                    warning = True
                if problem:
                    found.append(
                        FieldError(
                            f'JobTemplate "{name}": {problem}',
                            f"spec.flows[{i}].{where}",
                            warning=warning,
                        )
                    )
                    if len(found) >= MAX_ERRORS:
                        return found
    return found


def _unsubstituted(flow: JobFlow, templates: Mapping[str, JobTemplate]) -> list[FieldError]:
    """A flow that does not use the language substitutes nothing: a template whose quantity
    is a reference (admitted for the flows that do) would make a vcjob no API accepts."""
    found: list[FieldError] = []
    seen: set[str] = set()
    for i, entry in enumerate(flow.flows):
        name = entry.template_name
        template = templates.get(name)
        if name in seen or template is None or template.spec is None:
            continue
        seen.add(name)
        if not substitution.has_any(json.dumps(template.spec.to_dict())):
            continue
        for err in fieldtypes.job_spec_type_errors(template.spec):
            found.append(
                FieldError(
                    f'JobTemplate "{name}": {err.message} (a flow replaces ${{{{ }}}} '
                    "references only when it uses the flow language: spec.arguments, "
                    "docs/flow-features.md section 9)",
                    f"spec.flows[{i}].name",
                )
            )
    return found[:MAX_ERRORS]


def _references(
    entry: Flow,
    templates: Mapping[str, JobTemplate],
    spec: JobSpec | None,
    cache: dict[str, list[substitution.Reference]],
) -> list[tuple[str, str, list[substitution.Reference]]]:
    """(template, the entry's field naming it, its references) of each template the
    entry may be built from; a patched spec's own."""
    if entry.switch:
        pairs = [(c.template, f"switch[{j}].template") for j, c in enumerate(entry.switch)]
    else:
        pairs = [(entry.template_name, "template" if entry.template is not None else "name")]
    out = []
    patched = entry.patch is not None and entry.patch.job_spec is not None and spec is not None
    for name, where in pairs:
        template = templates.get(name)
        if template is None or template.spec is None:
            continue
        if patched and spec is not None and not entry.switch:
            out.append((name, where, _of(spec)))
            continue
        if name not in cache:
            cache[name] = _of(template.spec)
        out.append((name, where, cache[name]))
    return out


def _of(spec: JobSpec) -> list[substitution.Reference]:
    text = json.dumps(spec.to_dict())
    if not substitution.has_any(text):
        return []
    found: list[substitution.Reference] = []
    _walk(spec.to_dict(), found)
    return list({r.text: r for r in found}.values())


def _walk(value: object, found: list[substitution.Reference]) -> None:
    if isinstance(value, str):
        found.extend(substitution.references(value, substitution.ALL_ROOTS))
    elif isinstance(value, dict):
        for item in value.values():
            _walk(item, found)
    elif isinstance(value, list):
        for item in value:
            _walk(item, found)


def _problem(ref: substitution.Reference, entry: Flow, declared: set[str]) -> str:
    shown = f"${{{{ {ref.text} }}}}"
    form = ref.problem()
    if form:
        return form
    if ref.root in substitution.RESERVED and entry.for_each is None:
        return f"{shown}: {ref.root} is only for an entry with for"
    if ref.root == "args" and ref.path[0] not in declared:
        return f'{shown}: no argument "{ref.path[0]}" is declared (spec.arguments)'
    if ref.root == "outputs" and ref.path[0] not in entry.targets:
        targets = ", ".join(entry.targets) or "none"
        return (
            f'{shown}: "{ref.path[0]}" is not a target of entry {entry.name} '
            f"(its targets: {targets})"
        )
    return ""


def _item_without(ref: substitution.Reference, items: Sequence[object]) -> str:
    """The first of the entry's items that has no `ref.path` (its vcjob would fail with
    SubstitutionFailed), said in one line; "" when every item has it."""
    for k, item in enumerate(items):
        value = item
        for key in ref.path:
            if not isinstance(value, dict) or key not in value:
                return (
                    f"${{{{ {ref.text} }}}}: item {k} has no {'.'.join(ref.path)!r}: its vcjob "
                    "would fail (SubstitutionFailed)"
                )
            value = value[key]
    return ""
