"""A flow entry's outputs (docs/flow-features.md §12): what the containers of its vcjob wrote
to `$VCFLOW_OUTPUTS`, read back from the pods' container statuses, where the kubelet (and
the local runtime alike) copies a container's termination message file when it ends.

`collect` is called with the pods of a `Completed` vcjob and gives the merged object, or a
`Failure` (a reason and a one-line message naming the pod) that fails the entry. The rule:

- **Which pods:** those the job owns (the controller ownerReference's uid is the job's;
  for a job without a uid, the `volcano.sh/job-name` label or annotation is its name, in
  its namespace) and whose phase is `Succeeded`.
- **Which containers:** the pod's regular containers (never init containers) whose current
  state is `terminated` with exit code 0; the message of that state is what it wrote.
- **Order:** by task, in the order of `job.spec.tasks` (a task it does not list last, by
  name); then by pod index (`volcano.sh/task-index`, annotation or label, else the trailing
  `-<n>` of the name `<job>-<task>-<n>`; the task is `volcano.sh/task-spec`, else read from
  the name too); then by the container's place in the pod spec.
- **Each message:** empty or whitespace adds nothing; else it is one JSON object (strict
  JSON: no NaN or Infinity), or the entry fails `OutputInvalid` — saying the message was
  truncated when it is `MESSAGE_MAX` bytes or more, the kubelet's bound.
- **Merge:** the keys of each object in that order, a key keeping its first place. A key
  written again with the same JSON value (same type, numbers equal in value, objects
  compared without their key order) is fine; with another, the entry fails
  `OutputConflict`, naming both values and pods.
- **Bound:** the merged object as compact JSON (UTF-8) is at most `ENTRY_MAX` bytes, else
  `OutputTooLarge`. A job that wrote nothing has `{}`.

`inputs_value` is the `VCFLOW_INPUTS` of the next jobs, `outputs_path` the file a
container writes (its `terminationMessagePath`). Pure: no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from vcflow.api.phases import PodPhase
from vcflow.api.pod import Pod
from vcflow.api.vcjob import Container, VCJob
from vcflow.reconcile.vcjob.pods import JOB_NAME, TASK_INDEX, TASK_SPEC

ENV_OUTPUTS = "VCFLOW_OUTPUTS"
ENV_INPUTS = "VCFLOW_INPUTS"
#: The kubelet's bound on one container's termination message, in bytes.
MESSAGE_MAX = 4096
#: An entry's merged outputs, as compact JSON in UTF-8.
ENTRY_MAX = 4096
#: A flow's outputs together (checked where they are kept in the flow's status).
FLOW_MAX = 256 * 1024
OUTPUT_INVALID = "OutputInvalid"
OUTPUT_TOO_LARGE = "OutputTooLarge"
OUTPUT_CONFLICT = "OutputConflict"
#: Kubernetes' default `terminationMessagePath`.
DEFAULT_PATH = "/dev/termination-log"
_SHOWN = 64  # characters of a value shown in a conflict
_LAST = 2**63


@dataclass(frozen=True)
class Failure:
    """Why an entry's outputs cannot be taken: a reason and a one-line message."""

    reason: str
    message: str


def collect(job: VCJob, pods: Iterable[Pod]) -> dict[str, Any] | Failure:
    """The merged outputs of `job` from its pods (the rule in the module docstring)."""
    tasks = [t.name or "" for t in (job.spec.tasks or [])] if job.spec else []
    owned = [p for p in pods if _owned(job, p) and p.phase == PodPhase.SUCCEEDED]
    owned.sort(key=lambda p: _order(job, tasks, p))
    merged: dict[str, Any] = {}
    source: dict[str, tuple[str, str]] = {}
    for pod in owned:
        many = len(_containers(pod)) > 1
        for name, message in _messages(pod):
            found = _parse(message)
            if isinstance(found, str):
                where = f"pod {pod.name} container {name}"
                return Failure(OUTPUT_INVALID, f"{where}: outputs are not a JSON object: {found}")
            here = (pod.name, name if many else "")
            for key, value in found.items():
                if key not in merged:
                    merged[key], source[key] = value, here
                elif not _same(merged[key], value):
                    return Failure(
                        OUTPUT_CONFLICT, _conflict(key, merged[key], source[key], value, here)
                    )
    size = len(encode(merged).encode())
    if size > ENTRY_MAX:
        return Failure(
            OUTPUT_TOO_LARGE,
            f"the outputs of the job's pods are {size} bytes as compact JSON, over the bound "
            f"of {ENTRY_MAX} bytes of an entry's outputs",
        )
    return merged


def inputs_value(outputs_by_target: Mapping[str, Any]) -> str:
    """`VCFLOW_INPUTS`: one compact JSON object of each target's outputs (an object; a
    `for` entry's, the list of its items'), in the given order; a target without outputs
    (none, or `{}`) is absent."""
    return encode({target: out for target, out in outputs_by_target.items() if out})


def outputs_path(container: Container) -> str:
    """Where `container` writes its outputs: its `terminationMessagePath` (a field the model
    keeps among its extra ones), else Kubernetes' default."""
    extra = container.model_extra or {}
    path = extra.get("terminationMessagePath", extra.get("termination_message_path"))
    return path if isinstance(path, str) and path else DEFAULT_PATH


def encode(value: Any) -> str:
    """Compact JSON, non-ASCII characters as they are: the form outputs are measured and
    handed on in."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


# -- which pods, in which order ------------------------------------------------------------


def _owned(job: VCJob, pod: Pod) -> bool:
    uid = job.metadata.uid
    if uid:
        ref = pod.metadata.controller_ref()
        return ref is not None and ref.uid == uid
    meta = pod.metadata
    named = meta.labels.get(JOB_NAME) or meta.annotations.get(JOB_NAME)
    return named == job.name and pod.namespace == job.namespace


def _order(job: VCJob, tasks: list[str], pod: Pod) -> tuple[int, str, int, str]:
    """Task order (tasks the job does not list last, by name), then pod index (pods
    without one last), then name."""
    meta = pod.metadata
    rest, _, tail = pod.name.rpartition("-")
    index_text = meta.annotations.get(TASK_INDEX) or meta.labels.get(TASK_INDEX) or tail
    index = int(index_text) if index_text.isdigit() else _LAST
    task = meta.labels.get(TASK_SPEC) or meta.annotations.get(TASK_SPEC)
    if task is None:
        prefix = job.name + "-"
        task = rest[len(prefix) :] if rest.startswith(prefix) else rest
    if task in tasks:
        return tasks.index(task), "", index, pod.name
    return len(tasks), task, index, pod.name


def _containers(pod: Pod) -> list[str]:
    """The names of the pod's regular containers in spec order (the statuses' when the
    pod has no spec)."""
    if pod.spec is not None and pod.spec.containers:
        return [c.name or "" for c in pod.spec.containers]
    statuses = (pod.status.container_statuses or []) if pod.status else []
    return [s.name for s in statuses]


def _messages(pod: Pod) -> list[tuple[str, str]]:
    """(container, message) of each regular container that ended with exit code 0 and wrote
    something, in spec order."""
    statuses = {s.name: s for s in ((pod.status.container_statuses or []) if pod.status else [])}
    out: list[tuple[str, str]] = []
    for name in _containers(pod):
        status = statuses.get(name)
        ended = status.state.terminated if status and status.state else None
        if ended is None or ended.exit_code != 0 or not ended.message:
            continue
        if ended.message.strip():
            out.append((name, ended.message))
    return out


# -- one message ---------------------------------------------------------------------------


def _parse(message: str) -> dict[str, Any] | str:
    """The JSON object `message` holds, or why it is not one."""
    try:
        value = json.loads(message, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        if len(message.encode()) >= MESSAGE_MAX:
            return (
                f"it was truncated at {MESSAGE_MAX} bytes (a termination message keeps at "
                f"most {MESSAGE_MAX}): {exc.msg} at line {exc.lineno} column {exc.colno}"
            )
        return f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    except ValueError as exc:
        return str(exc)
    except RecursionError:
        return "it is nested too deeply"
    if not isinstance(value, dict):
        return f"it is {_kind(value)}"
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array"


def _same(a: Any, b: Any) -> bool:
    """The same JSON value: same type, numbers equal in value (1 and 1.0 are), objects
    whatever their key order, arrays in order."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _conflict(
    key: str, first: Any, first_at: tuple[str, str], second: Any, second_at: tuple[str, str]
) -> str:
    def at(where: tuple[str, str]) -> str:
        pod, container = where
        return f"{pod} container {container}" if container else pod

    return (
        f"key {encode(key)}: {_shown(first)} from pod {at(first_at)}, "
        f"{_shown(second)} from {at(second_at)}"
    )


def _shown(value: Any) -> str:
    text = encode(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


__all__ = [
    "DEFAULT_PATH",
    "ENTRY_MAX",
    "ENV_INPUTS",
    "ENV_OUTPUTS",
    "FLOW_MAX",
    "MESSAGE_MAX",
    "OUTPUT_CONFLICT",
    "OUTPUT_INVALID",
    "OUTPUT_TOO_LARGE",
    "Failure",
    "collect",
    "encode",
    "inputs_value",
    "outputs_path",
]
