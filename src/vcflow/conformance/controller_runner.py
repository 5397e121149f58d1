"""Controller cases, run for real: vcflow's admission, memory store and controllers (runtime
`none`: vcjob phases change only by the case's `set_phase`, a status write of the vcjob as
Volcano's job controller makes it), with a virtual clock. Each step's actions are applied as
one batch, the controllers settle, then `expect_vcflow`/`expect` is checked
(`expectations.py`). With a `serve` (`world.Serve`) the controllers and the actions go
through the store it gives, e.g. the Kubernetes API in front of the memory store."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vcflow.api import loading
from vcflow.api.errors import InputError, NotFound
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.meta import Resource
from vcflow.api.vcjob import JobState, VCJob, VCJobStatus
from vcflow.conformance import expectations
from vcflow.conformance.cases import Case, CaseError, Step, vcflow_steps
from vcflow.conformance.results import Failed, Passed, Result
from vcflow.conformance.world import Serve, World, direct

KINDS: dict[str, type[Resource]] = {"Job": VCJob, "JobFlow": JobFlow, "JobTemplate": JobTemplate}


def run_controller(case: Case, *, serve: Serve = direct) -> Result:
    namespace = str(case.data.get("namespace") or "default")
    steps = vcflow_steps(case)
    with World(namespace, serve) as world:
        return _run_steps(world, case, steps)


def _run_steps(world: World, case: Case, steps: list[Step]) -> Result:
    for step in steps:
        before = expectations.flow_statuses(world)
        world.manager.flows.last_error = None
        rejected: dict[str, str] = {}
        for i, action in enumerate(step.do):
            _apply(world, case, step, i, action, rejected)
        if not any(_is_wait(a) for a in step.do):
            world.settle()
        problems = expectations.check(world, step.expect, before=before, rejected=rejected)
        if problems:
            return Failed(f'step {step.index + 1} "{step.name}": ' + "; ".join(problems))
    return Passed(f"{len(steps)} steps")


def _is_wait(action: Any) -> bool:
    return isinstance(action, Mapping) and "wait" in action


def _apply(
    world: World, case: Case, step: Step, i: int, action: Any, rejected: dict[str, str]
) -> None:
    if not isinstance(action, Mapping) or len(action) != 1:
        raise CaseError(f"steps[{step.index}].do[{i}] must be a map with one action")
    verb, arg = next(iter(action.items()))
    loc = ("steps", step.index, "do", i, verb)
    if verb in ("create", "update"):
        _write(world, case, verb, arg, loc, rejected)
    elif verb == "delete":
        _delete(world, arg)
    elif verb == "set_phase":
        for name, phase in dict(arg).items():
            _set_phase(world, str(name), str(phase))
    elif verb == "touch":
        _touch(world, str(arg))
    elif verb == "wait":
        world.wait(float(arg))
    elif verb == "fail_creates":
        count = arg.get("count")
        world.harness.faults[str(arg["job"])] = (str(arg["message"]), count)
    else:
        raise CaseError(f"unknown action {verb!r}")


def _write(
    world: World,
    case: Case,
    verb: str,
    data: Any,
    loc: tuple[str | int, ...],
    rejected: dict[str, str],
) -> None:
    if not isinstance(data, dict):
        raise CaseError(f"{verb}: argument must be an object")
    obj, schema = loading.to_model(case.sub_document(data, loc))
    label = f"{data.get('kind')}/{(data.get('metadata') or {}).get('name')}"
    if obj is None:
        rejected[label] = "; ".join(str(e) for e in schema)
        return
    obj.metadata.namespace = (
        world.namespace if not data.get("metadata", {}).get("namespace") else obj.metadata.namespace
    )
    try:
        if verb == "create":
            world.store.create(obj)
        else:
            current = world.store.get(type(obj), obj.namespace, obj.name)
            obj.metadata.resource_version = current.metadata.resource_version
            world.store.update(obj)
    except InputError as exc:
        rejected[label] = str(exc)


def _delete(world: World, arg: Any) -> None:
    kind = KINDS.get(str(arg.get("kind")))
    if kind is None:
        raise CaseError(f"delete: unknown kind {arg.get('kind')!r}")
    world.store.delete(kind, world.namespace, str(arg["name"]))


def _set_phase(world: World, name: str, phase: str) -> None:
    try:
        job = world.store.get(VCJob, world.namespace, name)
    except NotFound:
        raise CaseError(f"set_phase: vcjob {name} does not exist") from None
    if job.phase == phase:
        return
    status = job.status.clone() if job.status else VCJobStatus()
    status.state = status.state.clone() if status.state else JobState()
    status.state.phase = phase
    job.status = status
    world.store.update_status(job)


def _touch(world: World, name: str) -> None:
    job = world.store.get(VCJob, world.namespace, name)
    count = int(job.metadata.annotations.get("conformance/touched", "0")) + 1
    job.metadata.annotations["conformance/touched"] = str(count)
    world.store.update(job, admit=False)
