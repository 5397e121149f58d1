"""Kubernetes' rules for one container of a task's pod template (part of rule 13, reference
§6.4): resources (non-negative, requests within limits), env names, and what no process can
be given (a NUL in its command, args, env or working directory); plus a warning for a
relative `workingDir`. `podtemplate` calls `container_errors` for every container and
init container, with the `spec.task[<i>].template.spec.<field>` prefix Volcano gives. Pure.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from vcflow.api import quantity
from vcflow.api.errors import FieldError
from vcflow.api.vcjob import Container

#: Kubernetes' relaxed env-name rule (RelaxedEnvironmentVariableValidation, on by default
#: since 1.32): any printable ASCII character but `=`.
ENV_NAME = (
    "a valid environment variable name must consist only of printable ASCII characters "
    "other than '='"
)
NUL = "must not contain a NUL character: a process cannot be given one"

Report = Callable[[str, str], FieldError]  # (field below the pod spec, message) → error


def container_errors(container: Container, field: str, report: Report) -> list[FieldError]:
    """The errors of the container at `field` (`containers[0]`), via `report`."""
    errors = _resources(container, field, report)
    errors += _env(container, field, report)
    for key, values in (("command", container.command), ("args", container.args)):
        for k, value in enumerate(values or []):
            if "\0" in value:
                errors.append(
                    report(f"{field}.{key}[{k}]", f"Invalid value: {_shown(value)}: {NUL}")
                )
    if container.working_dir is not None and "\0" in container.working_dir:
        shown = _shown(container.working_dir)
        errors.append(report(f"{field}.workingDir", f"Invalid value: {shown}: {NUL}"))
    return errors


def working_dir_warning(container: Container, path: str) -> list[FieldError]:
    """A relative `workingDir` runs here (vcflow resolves it), but no container runtime on
    a cluster starts one: an OCI runtime needs an absolute working directory."""
    working_dir = container.working_dir
    if not working_dir or working_dir.startswith("/"):
        return []
    message = (
        f'workingDir "{working_dir}" is relative: on Kubernetes the container runtime refuses '
        "to start the container (an OCI runtime needs an absolute path); write an absolute one"
    )
    return [FieldError(message, f"{path}.workingDir", warning=True)]


def _resources(container: Container, field: str, report: Report) -> list[FieldError]:
    """Kubernetes' ValidateResourceRequirements: every quantity >= 0, a request no more than
    its limit. A quantity that does not parse is the schema's error (`fieldtypes`)."""
    res = container.resources
    if res is None:
        return []
    errors: list[FieldError] = []
    limits: dict[str, Fraction] = {}
    for key in ("limits", "requests"):
        for name, raw in (getattr(res, key) or {}).items():
            at = f"{field}.resources.{key}[{name}]"
            amount = quantity.parse(raw)
            if amount is None:
                continue
            if amount < 0:
                errors.append(
                    report(at, f"Invalid value: {_shown(raw)}: must be greater than or equal to 0")
                )
            elif key == "limits":
                limits[name] = amount
            elif name in limits and amount > limits[name]:
                limit = (res.limits or {})[name]
                message = f"must be less than or equal to {name} limit of {limit}"
                errors.append(report(at, f"Invalid value: {_shown(raw)}: {message}"))
    return errors


def _env(container: Container, field: str, report: Report) -> list[FieldError]:
    errors: list[FieldError] = []
    for k, var in enumerate(container.env or []):
        at = f"{field}.env[{k}]"
        if not var.name:
            errors.append(report(f"{at}.name", "Required value"))
        elif not _is_env_name(var.name):
            errors.append(report(f"{at}.name", f"Invalid value: {_shown(var.name)}: {ENV_NAME}"))
        if var.value is not None and "\0" in var.value:
            errors.append(report(f"{at}.value", f"Invalid value: {_shown(var.value)}: {NUL}"))
    return errors


def _is_env_name(name: str) -> bool:
    return all(" " <= ch <= "~" and ch != "=" for ch in name)


def _shown(value: object) -> str:
    """A value as the API server quotes it, short and on one line (NUL shown as `\\x00`)."""
    text = value if isinstance(value, str) else str(value)
    shown = text[:60] + ("..." if len(text) > 60 else "")
    return '"' + shown.encode("unicode_escape").decode("ascii").replace('"', '\\"') + '"'
