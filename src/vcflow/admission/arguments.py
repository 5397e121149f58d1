"""Admission of a flow's arguments (docs/flow-features.md section 10): at most
`MAX_ARGUMENTS`, each name a CEL identifier (not a reserved word) of at most `NAME_MAX`
characters, unique; a value of at most `VALUE_MAX` bytes, all of them at most `VALUES_MAX`;
a description of at most `DESCRIPTION_MAX`; and every argument with a value by now (a
required one is given at submit time: `-p NAME=VALUE`). A container that sets `VCFLOW_ARGS`
itself keeps its own value (section 11): a warning. One line per problem, naming the field.
`jobflow.validate_jobflow` calls `validate` and `env_warnings`. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

from vcflow.api import arguments as args
from vcflow.api.errors import FieldError
from vcflow.api.jobflow import JobFlow
from vcflow.api.platform import Platform
from vcflow.api.printable import quoted
from vcflow.api.vcjob import JobSpec


def validate(flow: JobFlow, *, platform: Platform = Platform.LOCAL) -> list[FieldError]:
    """Every problem of `spec.arguments` (locally: say how to give a value with vcflow's
    `-p`; a cluster's webhook says to write it in the manifest)."""
    declared = flow.spec.arguments if flow.spec is not None else None
    if declared is None:
        return []
    found: list[FieldError] = []
    if len(declared) > args.MAX_ARGUMENTS:
        found.append(
            FieldError(
                f"Too many: {len(declared)}: must have at most {args.MAX_ARGUMENTS} items",
                "spec.arguments",
            )
        )
    seen: set[str] = set()
    total = 0
    for i, argument in enumerate(declared):
        path = f"spec.arguments[{i}]"
        found += _name(argument.name, f"{path}.name")
        if argument.name in seen:
            found.append(FieldError(f"Duplicate value: {quoted(argument.name)}", f"{path}.name"))
        seen.add(argument.name)
        size = args.size(argument.value)
        total += size
        if size > args.VALUE_MAX:
            found.append(_too_long(f"{path}.value", args.VALUE_MAX, size))
        described = args.size(argument.description)
        if described > args.DESCRIPTION_MAX:
            found.append(_too_long(f"{path}.description", args.DESCRIPTION_MAX, described))
        if argument.value is None and argument.name:
            how = (
                f"give it with -p {argument.name}=..."
                if platform.runs_pods_here
                else f"give it a value in the manifest ({path}.value)"
            )
            found.append(
                FieldError(f"required argument {quoted(argument.name)} has no value: {how}", path)
            )
    if total > args.VALUES_MAX:
        found.append(
            FieldError(
                f"Too long: the values may have at most {args.VALUES_MAX} bytes together "
                f"(they have {total})",
                "spec.arguments",
            )
        )
    return found


def _name(name: str, path: str) -> list[FieldError]:
    if not name:
        message = f'Invalid value: "": {path} in body should be at least 1 chars long'
        return [FieldError(message, path)]
    if len(name) > args.NAME_MAX:
        return [FieldError(f"Too long: may not be longer than {args.NAME_MAX}", path)]
    if not args.NAME.fullmatch(name):
        return [
            FieldError(
                f"Invalid value: {quoted(name)}: an argument name is a CEL identifier: letters, "
                "digits and '_', not starting with a digit (regex [A-Za-z_][A-Za-z0-9_]*)",
                path,
            )
        ]
    if name in args.RESERVED:
        return [
            FieldError(
                f"Invalid value: {quoted(name)}: a CEL reserved word cannot name an argument",
                path,
            )
        ]
    return []


def _too_long(path: str, limit: int, size: int) -> FieldError:
    return FieldError(f"Too long: may not be longer than {limit} bytes (it has {size})", path)


def env_warnings(flow: JobFlow, specs: Sequence[JobSpec | None]) -> list[FieldError]:
    """A container of an entry's vcjob that sets `VCFLOW_ARGS` itself keeps its value: the
    job does not see the flow's arguments there. Only for a flow that uses the language
    (the others get no such variable); one warning per entry, naming the first container."""
    if not flow.uses_language:
        return []
    found: list[FieldError] = []
    for i, (entry, spec) in enumerate(zip(flow.flows, specs, strict=True)):
        where = _own_variable(spec)
        if where is not None:
            found.append(
                FieldError(
                    f"entry {entry.name}: {where} sets {args.ENV_ARGS} itself: it keeps its "
                    "own value, not the flow's arguments",
                    f"spec.flows[{i}].name",
                    warning=True,
                )
            )
    return found


def _own_variable(spec: JobSpec | None) -> str | None:
    """`task main container c` of the first container setting the variable, if any."""
    for t, task in enumerate(spec.tasks or [] if spec is not None else []):
        pod = task.template.spec if task.template is not None else None
        if pod is None:
            continue
        for kind, containers in (
            ("init container", pod.init_containers),
            ("container", pod.containers),
        ):
            for c, container in enumerate(containers or []):
                if any(var.name == args.ENV_ARGS for var in container.env or []):
                    task_name = task.name or f"default{t}"
                    return f"task {task_name} {kind} {container.name or c}"
    return None
