"""Fixtures for the pod execution layer: a `PodRunner` on a temporary state directory (its
pod server stopped, its pods killed at teardown) and helpers that wait with deadlines."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from vcflow.api.vcjob import PodSpec, VCJob
from vcflow.podserver import podfs, seals
from vcflow.runtime.executor import Executor
from vcflow.runtime.launch import PodRequest, build_spec, prepare_pod_dir
from vcflow.runtime.pods import PodRunner
from vcflow.runtime.status import PodHandle, RunStatus
from vcflow.store import SqliteStore

DEADLINE = 15.0


def make_runner(state_dir: Path, **options: Any) -> PodRunner:
    options.setdefault("server_idle", 5.0)
    options.setdefault("sweep_interval", 0.2)
    return PodRunner(state_dir, **options)


def shut_down(runner: PodRunner) -> None:
    """Kill what still runs, wait for it, stop the server."""
    handles = runner.adopt_all()
    for handle in handles:
        if handle.last is not None and not (handle.last.finished and not handle.last.lost):
            runner.terminate(handle, 0)
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end and any(
        h.status().lost or not h.status().finished for h in handles
    ):
        runner.wait(handles, 0.2)
    runner.stop_server()
    runner.close()


@pytest.fixture
def runner(tmp_path: Path) -> Iterator[PodRunner]:
    pods = make_runner(tmp_path / "state")
    yield pods
    shut_down(pods)


def request(name: str, spec: dict[str, Any], **fields: Any) -> PodRequest:
    """A PodRequest in namespace `ns` from a pod spec in wire form."""
    return PodRequest(namespace="ns", name=name, spec=PodSpec.from_dict(spec), **fields)


def pod(*containers: dict[str, Any], policy: str = "Never", **spec: Any) -> dict[str, Any]:
    return {"restartPolicy": policy, "containers": list(containers), **spec}


def sh(name: str, script: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "command": ["sh", "-c", script], **fields}


def write_spec(pod_dir: Path, spec: dict[str, Any]) -> None:
    """spec.json as `PodRunner.launch` writes it: sealed with the state directory's key
    (made if missing: `<pod dir>/../../../runtime/launch.key`)."""
    runtime = Path(seals.runtime_dir(str(pod_dir)))
    runtime.mkdir(parents=True, exist_ok=True)
    seals.make_key(str(runtime))
    assert podfs.create(str(pod_dir / podfs.SPEC), seals.seal_spec(str(pod_dir), spec))


def launch_unasked(runner: PodRunner, req: PodRequest) -> PodHandle:
    """What a control plane killed between creating spec.json and asking for a supervisor
    leaves: a launched pod nobody was asked to run."""
    pod_dir = runner.pod_dir(req.namespace, req.name)
    spec = build_spec(req, pod_dir, notify=runner.events)
    prepare_pod_dir(pod_dir, req)
    write_spec(pod_dir, spec)
    handle = PodHandle(pod_dir)
    handle.status()
    return handle


def wait_until(
    runner: PodRunner,
    handle: PodHandle,
    check: Callable[[RunStatus], bool],
    timeout: float = DEADLINE,
) -> RunStatus:
    end = time.monotonic() + timeout
    status = handle.status()
    while not check(status):
        left = end - time.monotonic()
        if left <= 0:
            pytest.fail(f"{handle}: condition not met within {timeout}s; last status {status}")
        runner.wait([handle], min(left, 0.5))
        status = handle.status()
    return status


def finished(runner: PodRunner, handle: PodHandle, timeout: float = DEADLINE) -> RunStatus:
    return wait_until(runner, handle, lambda s: s.finished, timeout)


def eventually(check: Callable[[], bool], timeout: float = DEADLINE, what: str = "") -> None:
    end = time.monotonic() + timeout
    while not check():
        if time.monotonic() > end:
            pytest.fail(f"not within {timeout}s: {what}")
        time.sleep(0.01)


# -- the runtime shell (`runtime.executor`) on a real SQLite store ---------------------------


EXECUTOR_DEADLINE = 20.0


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def store(state: Path) -> Iterator[SqliteStore]:
    db = SqliteStore.in_state_dir(state)
    yield db
    db.close()


@pytest.fixture
def runners(state: Path) -> Iterator[Callable[[], PodRunner]]:
    made: list[PodRunner] = []

    def make() -> PodRunner:
        runner = PodRunner(state, server_idle=5.0, sweep_interval=0.2)
        made.append(runner)
        return runner

    yield make
    for runner in made:
        shut_down(runner)


def vcjob(name: str, script: str, *, replicas: int = 1, **extra: Any) -> VCJob:
    container: dict[str, Any] = {"name": "main", "image": "x", "command": ["sh", "-c", script]}
    if "cpu" in extra:
        container["resources"] = {"requests": {"cpu": extra.pop("cpu")}}
    policy = extra.pop("restart_policy", "Never")
    task = {
        "name": "t",
        "replicas": replicas,
        "template": {"spec": {"restartPolicy": policy, "containers": [container]}},
    }
    spec = {"minAvailable": replicas, "tasks": [task], **extra}
    return VCJob.from_dict({"metadata": {"name": name, "namespace": "default"}, "spec": spec})


def phase(store: SqliteStore, name: str) -> str:
    return store.get(VCJob, "default", name).phase


def drive(
    executor: Executor,
    until: Callable[[], bool],
    *,
    each: Callable[[], None] | None = None,
    timeout: float = EXECUTOR_DEADLINE,
) -> None:
    end = time.monotonic() + timeout
    while True:
        executor.settle()
        if each is not None:
            each()
        if until():
            return
        if time.monotonic() > end:
            pytest.fail(f"not within {timeout}s")
        wake = executor.next_wakeup()
        executor.wait(0.1 if wake is None else min(wake, 0.1))
