"""The in-process loop of `vcflow run` (`runtime.run.Loop`): the controllers and the runtime
on one store run a JobFlow to its end; a timeout and a stop request end the loop, the
latter terminating the running pods."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.controller.manager import Manager
from vcflow.controller.options import ControllerOptions
from vcflow.runtime.executor import Executor
from vcflow.runtime.pods import PodRunner
from vcflow.runtime.run import Ending, Loop
from vcflow.store import SqliteStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    db = SqliteStore.in_state_dir(tmp_path / "state")
    yield db
    db.close()


@pytest.fixture
def runner(tmp_path: Path) -> Iterator[PodRunner]:
    pods = PodRunner(tmp_path / "state", server_idle=5.0, sweep_interval=0.2)
    yield pods
    for handle in pods.adopt_all():
        if handle.last is not None and not handle.last.finished:
            pods.terminate(handle, 0)
    pods.stop_server()
    pods.close()


def template(name: str, script: str) -> JobTemplate:
    container = {"name": "main", "image": "x", "command": ["sh", "-c", script]}
    spec = {"restartPolicy": "Never", "containers": [container]}
    task: dict[str, Any] = {"name": "t", "replicas": 1, "template": {"spec": spec}}
    return JobTemplate.from_dict(
        {"metadata": {"name": name, "namespace": "default"}, "spec": {"tasks": [task]}}
    )


def flow(name: str, *entries: tuple[str, list[str]]) -> JobFlow:
    flows = [{"name": n, **({"dependsOn": {"targets": d}} if d else {})} for n, d in entries]
    spec = {"jobRetainPolicy": "retain", "flows": flows}
    return JobFlow.from_dict({"metadata": {"name": name, "namespace": "default"}, "spec": spec})


def loop(store: SqliteStore, runner: PodRunner) -> Loop:
    return Loop(store, Manager(store), Executor(store, runner), poll=0.05)


def flow_ended(store: SqliteStore, name: str) -> bool:
    return store.get(JobFlow, "default", name).phase in ("Succeed", "Failed")


def test_a_two_job_flow_of_true_succeeds(store: SqliteStore, runner: PodRunner) -> None:
    store.apply([template("a", "true"), template("b", "true"), flow("f", ("a", []), ("b", ["a"]))])
    outcome = loop(store, runner).run(lambda: flow_ended(store, "f"), timeout=60)
    assert outcome.ending is Ending.DONE
    assert store.get(JobFlow, "default", "f").phase == "Succeed"
    assert [j.phase for j in store.list(VCJob)] == ["Completed", "Completed"]


def test_a_failing_job_fails_the_flow(store: SqliteStore, runner: PodRunner) -> None:
    store.apply(
        [template("a", "exit 3"), template("b", "true"), flow("f", ("a", []), ("b", ["a"]))]
    )
    outcome = loop(store, runner).run(lambda: flow_ended(store, "f"), timeout=60)
    assert outcome.ending is Ending.DONE
    assert store.get(JobFlow, "default", "f").phase == "Failed"
    assert [j.name for j in store.list(VCJob)] == ["f-a"]


def test_the_timeout_ends_the_loop(store: SqliteStore, runner: PodRunner) -> None:
    store.apply([template("a", "sleep 30"), flow("f", ("a", []))])
    began = time.monotonic()
    outcome = loop(store, runner).run(lambda: flow_ended(store, "f"), timeout=0.5)
    assert outcome.ending is Ending.TIMEOUT
    assert time.monotonic() - began < 5


def test_a_stop_request_terminates_the_running_pods_and_a_new_run_resumes(
    store: SqliteStore, runner: PodRunner, tmp_path: Path
) -> None:
    marker = tmp_path / "ran-once"
    script = f"if [ -e {marker} ]; then exit 0; fi; touch {marker}; sleep 30"
    store.apply([template("a", script), flow("f", ("a", []))])

    def running() -> bool:
        pods = store.list(Pod)
        return bool(pods) and pods[0].phase == "Running"

    began = time.monotonic()
    outcome = loop(store, runner).run(lambda: False, timeout=60, stop=running, stop_grace=1.0)
    assert outcome.ending is Ending.INTERRUPTED
    assert outcome.terminated == 1
    assert time.monotonic() - began < 30
    assert store.list(Pod) == []  # evicted: a later run creates it again
    handle = runner.adopt("default", "f-a-t-0")
    assert handle is not None and handle.last is not None and handle.last.finished
    assert handle.last.reason == "Terminated"

    again = loop(store, runner).run(lambda: flow_ended(store, "f"), timeout=60)
    assert again.ending is Ending.DONE
    assert store.get(JobFlow, "default", "f").phase == "Succeed"


@pytest.mark.parametrize("batch", [2, None])
def test_a_wide_flow_launches_its_first_pods_before_its_last_vcjobs_exist(
    store: SqliteStore, runner: PodRunner, batch: int | None
) -> None:
    # `vcflow run` creates vcjobs in batches (CREATE_BATCH): the pod server runs the first
    # pods while the controllers create the rest; without a batch every vcjob comes first
    names = "abcdef"
    store.apply([*(template(n, "true") for n in names), flow("f", *((n, []) for n in names))])
    seen: list[int] = []
    launch = runner.launch

    def counting(request: Any) -> Any:
        seen.append(len(store.list(VCJob)))
        return launch(request)

    runner.launch = counting  # type: ignore[method-assign]
    controllers = Manager(store, options=ControllerOptions(create_batch=batch))
    looped = Loop(store, controllers, Executor(store, runner), poll=0.05)
    outcome = looped.run(lambda: flow_ended(store, "f"), timeout=60)
    assert outcome.ending is Ending.DONE
    assert store.get(JobFlow, "default", "f").phase == "Succeed"
    assert len(seen) == len(names)
    if batch is None:
        assert seen[0] == len(names)
    else:
        assert seen[:2] == [2, 2]  # the first batch's pods, before any other vcjob
        assert seen == sorted(seen)
