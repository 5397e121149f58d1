"""Finished vcjobs leave the runtime shell's caches (`runtime.retired`): a wide flow's ended
jobs and pods are not all kept in memory, and whatever later happens to a retired job —
its deletion, a pod deleted, a Command, a new job of its name — is handled as for a job
still cached, on a real SQLite store with real processes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from vcflow.api import names
from vcflow.api.command import Command, command_for
from vcflow.api.phases import Action
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.runtime.executor import Executor
from vcflow.runtime.pods import PodRunner
from vcflow.runtime.retired import Retired
from vcflow.store import SqliteStore

from .conftest import drive, phase, vcjob

JOB = names.object_key("default", "ok")
POD = names.object_key("default", "ok-t-0")


def retired_after_completing(
    store: SqliteStore, runner: PodRunner, observed: list[tuple[str, str, bool]] | None = None
) -> Executor:
    store.create(vcjob("ok", "echo done"))

    def observe(job: VCJob, deleted: bool) -> None:
        if observed is not None:
            observed.append((job.name, job.phase or "", deleted))

    executor = Executor(store, runner, observer=observe)
    drive(executor, lambda: JOB in executor.retired)
    return executor


def test_a_finished_job_and_its_pods_leave_the_caches(
    store: SqliteStore, runners: Callable[[], PodRunner]
) -> None:
    executor = retired_after_completing(store, runners())
    assert phase(store, "ok") == "Completed"
    assert JOB not in executor.jobs
    assert executor.pods.get(POD) is None
    assert POD not in executor.node.handles
    # its own writes still in the watch are known as past: settling again revives nothing
    for _ in range(3):
        executor.settle()
    assert JOB in executor.retired and JOB not in executor.jobs
    assert store.get(Pod, "default", "ok-t-0").phase == "Succeeded"


def test_a_running_job_is_kept(store: SqliteStore, runners: Callable[[], PodRunner]) -> None:
    store.create(vcjob("slow", "sleep 30", terminationGracePeriodSeconds=1))
    executor = Executor(store, runners())
    drive(executor, lambda: phase(store, "slow") == "Running")
    key = names.object_key("default", "slow")
    assert key in executor.jobs and key not in executor.retired
    store.delete(VCJob, "default", "slow", force=True)
    drive(executor, lambda: not store.list(Pod))


def test_deleting_a_retired_job_removes_its_pods_and_tells_the_observer(
    store: SqliteStore, runners: Callable[[], PodRunner], state: Path
) -> None:
    observed: list[tuple[str, str, bool]] = []
    executor = retired_after_completing(store, runners(), observed)
    store.delete(VCJob, "default", "ok", force=True)
    assert store.get(Pod, "default", "ok-t-0").deleting  # (held by the runtime's finalizer)
    drive(executor, lambda: not store.list(Pod))
    assert not (state / "pods" / "default" / "ok-t-0").exists()
    assert observed[-1] == ("ok", "Completed", True)
    assert JOB not in executor.retired and JOB not in executor.jobs


def test_a_pod_deleted_from_a_retired_job_is_removed_and_the_job_stays_completed(
    store: SqliteStore, runners: Callable[[], PodRunner]
) -> None:
    executor = retired_after_completing(store, runners())
    store.delete(Pod, "default", "ok-t-0", force=True)
    drive(executor, lambda: not store.list(Pod))
    assert phase(store, "ok") == "Completed"
    drive(executor, lambda: JOB in executor.retired)  # (ended again: retired again)


def test_a_command_for_a_retired_job_is_consumed(
    store: SqliteStore, runners: Callable[[], PodRunner]
) -> None:
    executor = retired_after_completing(store, runners())
    store.create(command_for(store.get(VCJob, "default", "ok"), Action.RESTART_JOB))
    drive(executor, lambda: not store.list(Command))
    drive(executor, lambda: JOB in executor.retired)
    assert phase(store, "ok") == "Completed"  # (a finished vcjob is not restarted)


def test_a_new_job_of_a_retired_jobs_name_runs(
    store: SqliteStore, runners: Callable[[], PodRunner]
) -> None:
    executor = retired_after_completing(store, runners())
    first = store.get(VCJob, "default", "ok").metadata.uid
    store.delete(VCJob, "default", "ok", force=True)
    drive(executor, lambda: not store.list(Pod))
    store.create(vcjob("ok", "exit 3"))
    drive(executor, lambda: phase(store, "ok") == "Failed")
    assert store.get(VCJob, "default", "ok").metadata.uid != first
    drive(executor, lambda: JOB in executor.retired)


def test_retired_keeps_resource_versions_per_job_and_pod() -> None:
    retired = Retired()
    pods = {names.object_key("ns", "j-t-0"): 7, names.object_key("ns", "j-t-1"): 9}
    retired.add(names.object_key("ns", "j"), "uid-1", 10, pods)
    job = names.object_key("ns", "j")
    assert job in retired and len(retired) == 1
    assert retired.owner(names.object_key("ns", "j-t-1")) == job
    assert retired.is_past(names.object_key("ns", "j-t-1"), 9, pod=True)
    assert not retired.is_past(names.object_key("ns", "j-t-1"), 11, pod=True)
    assert retired.is_past(job, 10, pod=False) and not retired.is_past(job, 12, pod=False)
    assert not retired.is_past(names.object_key("ns", "other"), 1, pod=True)
    found = retired.pop(job)
    assert found is not None and found.uid == "uid-1" and found.rv == 10
    assert retired.owner(names.object_key("ns", "j-t-0")) is None and job not in retired
    assert retired.pop(job) is None
