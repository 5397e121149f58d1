"""Runtime cases, run for real: vcflow's runtime shell (`runtime.executor`: the job
controller and the gang scheduler) on a memory store, with a simulated kubelet and a virtual
clock (`runtime_world`). The case's jobs are created at the start of step 1, each followed by
a settle; a step's actions are applied one after another, each followed by a settle; then
`expect_vcflow`/`expect` is checked (`runtime_checks`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from vcflow.api.jobflow import JobFlow
from vcflow.api.meta import Resource
from vcflow.api.scheduling import PriorityClass, Queue
from vcflow.conformance import runtime_checks
from vcflow.conformance.cases import Case, CaseError, Step, vcflow_steps
from vcflow.conformance.results import Failed, Passed, Result
from vcflow.conformance.runtime_world import HarnessError, RuntimeWorld
from vcflow.reconcile.vcjob import resources

R = TypeVar("R", bound=Resource)


def run_runtime(case: Case) -> Result:
    jobs, single = _jobs(case.data)
    world = _world(case.data)
    steps = vcflow_steps(case)
    for position, step in enumerate(steps):
        world.begin_step()
        try:
            if position == 0:
                for job in jobs:
                    world.create_job(job)
            for i, action in enumerate(step.do):
                _apply(world, step, i, action, single)
        except HarnessError as exc:
            return Failed(f'step {step.index + 1} "{step.name}": {exc}')
        problems = runtime_checks.check(world, step.expect, single)
        if problems:
            return Failed(f'step {step.index + 1} "{step.name}": ' + "; ".join(problems))
    return Passed(f"{len(steps)} steps")


def _jobs(data: Mapping[str, Any]) -> tuple[list[Mapping[str, Any]], str | None]:
    """The case's job objects and, for a single-job case, that job's name."""
    if ("job" in data) == ("jobs" in data):
        raise CaseError("exactly one of job and jobs is required")
    jobs = [data["job"]] if "job" in data else data["jobs"]
    if not isinstance(jobs, list) or not jobs or not all(isinstance(j, Mapping) for j in jobs):
        raise CaseError("jobs must be a non-empty list of vcjob objects")
    named = [str((j.get("metadata") or {}).get("name") or "") for j in jobs]
    if not all(named):
        raise CaseError("every job needs metadata.name")
    return jobs, (named[0] if "job" in data else None)


def _world(data: Mapping[str, Any]) -> RuntimeWorld:
    capacity = data.get("capacity")
    priorities = data.get("priority_classes") or {}
    hold = data.get("hold_deletions", False)
    if capacity is not None and not isinstance(capacity, Mapping):
        raise CaseError("capacity must be a map resource → quantity")
    if not isinstance(priorities, Mapping) or not all(
        isinstance(v, int) for v in priorities.values()
    ):
        raise CaseError("priority_classes must be a map name → integer")
    if not isinstance(hold, bool):
        raise CaseError("hold_deletions must be a boolean")
    return RuntimeWorld(
        capacity=resources.capacity(capacity),
        priorities={str(k): int(v) for k, v in priorities.items()},
        objects=[
            *_objects(data, "queues", Queue),
            *_objects(data, "priorityclasses", PriorityClass),
        ]
        + [_flow(str(name), "Running") for name in _list(data, "flows")],
        hold_deletions=hold,
    )


def _list(data: Mapping[str, Any], key: str) -> list[Any]:
    found = data.get(key) or []
    if not isinstance(found, list):
        raise CaseError(f"{key} must be a list")
    return found


def _objects(data: Mapping[str, Any], key: str, model: type[R]) -> list[R]:
    return [_object(raw, f"{key}[{i}]", model) for i, raw in enumerate(_list(data, key))]


def _object(raw: Any, where: str, model: type[R]) -> R:
    """A cluster-scoped scheduling object of the case (namespace `""`)."""
    if not isinstance(raw, Mapping):
        raise CaseError(f"{where} must be a {model.__name__} object")
    try:
        obj = model.from_dict(dict(raw))
    except ValueError as exc:
        first = str(exc).splitlines()[0]
        raise CaseError(f"{where} is not a valid {model.__name__}: {first}") from None
    obj.metadata.namespace = ""
    if not obj.name:
        raise CaseError(f"{where} needs metadata.name")
    return obj


def _flow(name: str, phase: str) -> JobFlow:
    """A JobFlow standing for a flow of the case's jobs (their createdByJobFlow label names
    it): only its existence and phase matter to the runtime (its hand-over holds)."""
    return JobFlow.from_dict(
        {"metadata": {"name": name}, "spec": {"flows": []}, "status": {"state": {"phase": phase}}}
    )


def _apply(world: RuntimeWorld, step: Step, i: int, action: Any, single: str | None) -> None:
    if not isinstance(action, Mapping) or len(action) != 1:
        raise CaseError(f"steps[{step.index}].do[{i}] must be a map with one action")
    verb, arg = next(iter(action.items()))
    if verb == "pod_running":
        for name in _names(arg, verb):
            world.pod_running(name)
    elif verb == "pod_exit":
        if not isinstance(arg, Mapping) or not isinstance(arg.get("code"), int):
            raise CaseError("pod_exit needs {pod: NAME, code: N}")
        world.pod_exit(str(arg.get("pod")), arg["code"])
    elif verb == "pod_evicted":
        world.pod_evicted(str(arg))
    elif verb == "pods_gone":
        world.pods_gone(None if arg == "all" else _names(arg, verb))
    elif verb == "command":
        job, what = _command(arg, single)
        world.command(job, what)
    elif verb == "create_job":
        if not isinstance(arg, Mapping):
            raise CaseError("create_job needs a vcjob object")
        world.create_job(arg)
        return
    elif verb == "put_queue":
        world.put_object(_object(arg, f"steps[{step.index}].do[{i}].put_queue", Queue))
    elif verb == "delete_queue":
        world.delete_object(Queue, str(arg))
    elif verb == "flow_phase":
        if not isinstance(arg, Mapping) or not {"flow", "phase"} <= set(arg):
            raise CaseError("flow_phase needs {flow: NAME, phase: P}")
        world.put_object(_flow(str(arg["flow"]), str(arg["phase"])))
    elif verb == "delete_flow":
        world.delete_object(JobFlow, str(arg))
    elif verb == "wait":
        if not isinstance(arg, int | float) or arg < 0:
            raise CaseError("wait needs a number of seconds")
        world.wait(float(arg))
        return
    else:
        raise CaseError(f"unknown action {verb!r}")
    world.settle()


def _names(arg: Any, verb: str) -> list[str]:
    if not isinstance(arg, list) or not all(isinstance(n, str) for n in arg):
        raise CaseError(f"{verb} needs a list of pod names")
    return list(arg)


def _command(arg: Any, single: str | None) -> tuple[str, str]:
    if isinstance(arg, str):
        if single is None:
            raise CaseError("command without a job name in a case with several jobs")
        return single, arg
    if isinstance(arg, Mapping) and "job" in arg and "action" in arg:
        return str(arg["job"]), str(arg["action"])
    raise CaseError("command needs an action name or {job: NAME, action: A}")
